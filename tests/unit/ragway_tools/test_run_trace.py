"""The run timeline: stage tree from the record's timings, events offset from creation."""

from __future__ import annotations

import json

from ragway_tools.run_trace import EventRow, StageRow, StoredEvent, event_rows, stage_rows
from tests.integration.runs import demo_record


def test_the_retriever_stages_nest_under_retrieve_in_pipeline_order() -> None:
    record = demo_record()
    record.timings_ms = {
        "retriever.sparse": 3.0,
        "retriever.total": 20.0,
        "retrieve": 25.0,
        "retriever.embed": 5.0,
        "retriever.dense": 4.0,
        "retriever.fuse": 0.5,
        "first_token": 40.0,
        "generate": 60.0,
        "total": 90.0,
    }
    assert stage_rows(record) == [
        StageRow(0, "total", 90.0),
        StageRow(1, "retrieve", 25.0),
        StageRow(2, "embed", 5.0),
        StageRow(2, "dense", 4.0),
        StageRow(2, "sparse", 3.0),
        StageRow(2, "fuse", 0.5),
        StageRow(2, "total", 20.0),
        StageRow(1, "first_token", 40.0),
        StageRow(1, "generate", 60.0),
    ]


def test_events_are_offsets_from_creation_and_the_deltas_fold_into_one_row() -> None:
    record = demo_record()
    t0 = record.created_at_ms

    def event(ms: int, kind: str, data: dict[str, object]) -> StoredEvent:
        return StoredEvent(f"{t0 + ms}-0", kind, json.dumps(data))

    events = [
        event(0, "run.accepted", {"run_id": record.id, "question": record.question}),
        event(5, "run.started", {"attempt": 1, "restarted": False}),
        event(30, "retrieval.completed", {"build_id": "b-1", "sources": [{}, {}], "degraded": []}),
        event(70, "answer.delta", {"text": "Hello"}),
        event(75, "answer.delta", {"text": " world"}),
        event(80, "answer.completed", {"verdict": "grounded", "citations": [{}]}),
        event(81, "run.completed", {"status": "succeeded"}),
    ]
    rows = event_rows(record, events)
    assert rows == [
        EventRow(0, "run.accepted", ""),
        EventRow(5, "run.started", "attempt 1"),
        EventRow(30, "retrieval.completed", "2 passages, build b-1"),
        EventRow(70, "answer.delta x2", "last at +75 ms"),
        EventRow(80, "answer.completed", "grounded, 1 cited"),
        EventRow(81, "run.completed", ""),
    ]
    # The question and the answer text stay out of the timeline.
    assert not any(record.question in r.detail or "Hello" in r.detail for r in rows)
