"""The event models are the stream's contract: one per type, the same bytes as before,
and the reference in docs/streaming.md is theirs."""

from __future__ import annotations

import json

import pytest

from services.gateway.runs.events import (
    EVENTS,
    AnswerCompleted,
    AnswerDelta,
    RetrievalCompleted,
    RunFailed,
    StreamClosing,
    parse_event,
    reference_markdown,
)
from services.gateway.runs.models import Citation, Degradation, ErrorInfo, EventType, Source
from tests.conftest import ROOT

BEGIN, END = "<!-- events:begin", "<!-- events:end -->"


def test_every_event_type_has_exactly_one_model() -> None:
    assert sorted(model.TYPE for model in EVENTS) == sorted(EventType)


def test_the_streaming_docs_list_every_event_with_the_fields_of_its_model() -> None:
    page = (ROOT / "docs/streaming.md").read_text()
    start = page.index("\n", page.index(BEGIN)) + 1
    documented = page[start : page.index(END)].strip()
    assert documented == reference_markdown().strip(), (
        "docs/streaming.md is out of date: paste reference_markdown() "
        "(services/gateway/runs/events.py) between the events markers"
    )


def test_the_data_line_is_json_dumps_of_the_fields_in_their_order() -> None:
    # The bytes the inline dicts wrote before the models: clients may compare them.
    source = Source(
        number=1,
        source_id="c1",
        document_id="d1",
        title="T",
        section="S",
        url="u",
        version="1",
        score=0.5,
        text="x",
    )
    degraded = Degradation(stage="dense", reason="down")
    retrieval = RetrievalCompleted(
        build_id="b", sources=[source], degraded=[degraded], timings_ms={"retrieve": 1.5}
    )
    assert retrieval.data() == json.dumps(
        {
            "build_id": "b",
            "sources": [source.model_dump()],
            "degraded": [degraded.model_dump()],
            "timings_ms": {"retrieve": 1.5},
        }
    )
    follow_up = retrieval.model_copy(update={"query": "How long on Enterprise?"})
    assert json.loads(follow_up.data())["query"] == "How long on Enterprise?"
    assert AnswerDelta(text="Hi", index=0).data() == '{"text": "Hi", "index": 0}'
    assert (
        RunFailed(error=ErrorInfo(code="c", message="m")).data()
        == '{"status": "failed", "error": {"code": "c", "message": "m"}}'
    )
    closing = StreamClosing(reason="server shutting down", last_event_id="1-0")
    assert closing.data() == '{"reason": "server shutting down", "last_event_id": "1-0"}'


def test_an_event_parses_back_into_its_model() -> None:
    citation = Citation(number=1, source_id="c1", document_id="d1", title="T", section="S", url="u")
    answer = AnswerCompleted(
        answer="A [1].",
        citations=[citation],
        refused=False,
        refusal_reason=None,
        refusal_detail=None,
        verdict="grounded",
        evidence_score=0.8,
        model="m",
        prompt_version="p",
        degraded=[],
    )
    assert parse_event("answer.completed", answer.data()) == answer


def test_unknown_types_and_data_that_does_not_fit_are_rejected() -> None:
    with pytest.raises(ValueError, match="unknown event type"):
        parse_event("run.exploded", "{}")
    with pytest.raises(ValueError, match="index"):
        parse_event("answer.delta", '{"text": "x"}')  # no index
