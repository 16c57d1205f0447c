"""ragway/redaction.py: what a deletion or revocation takes out of a run (the pure part;
the Redis side runs in tests/integration/test_redaction.py)."""

from __future__ import annotations

import json
from typing import Any

from ragway import redaction
from ragway.redaction import Entry, rewrite
from services.gateway.runs.conversations import Turn
from services.gateway.runs.events import parse_event
from services.gateway.runs.models import RunRecord

GONE = {"doc-gone": "document_deleted"}


def source(number: int, document_id: str, text: str) -> dict[str, Any]:
    return {
        "number": number,
        "source_id": f"{document_id}#s",
        "document_id": document_id,
        "title": "T",
        "section": "S",
        "url": "",
        "version": "1",
        "score": 0.5,
        "text": text,
    }


def record(*, tenant: str = "acme", cited: str = "doc-gone") -> dict[str, Any]:
    sources = [source(1, "doc-gone", "Twelve days carry over."), source(2, "doc-kept", "Kept.")]
    return {
        "id": "run_" + "0" * 32,
        "status": "succeeded",
        "tenant": tenant,
        "key_id": "k",
        "question": "How many days carry over?",
        "top_k": 5,
        "mode": "answer",
        "created_at_ms": 1,
        "updated_at_ms": 2,
        "answer": "Twelve days carry over [1].",
        "citations": [{k: v for k, v in s.items() if k not in ("version", "score", "text")}
                      for s in sources if s["document_id"] == cited],
        "sources": sources,
    }  # fmt: skip


def log(rec: dict[str, Any]) -> list[Entry]:
    data = [
        ("run.accepted", {"run_id": rec["id"], "question": rec["question"]}),
        ("retrieval.completed", {"build_id": "b", "sources": rec["sources"], "degraded": [],
                                 "timings_ms": {}}),
        ("answer.delta", {"text": "Twelve days carry over [1].", "index": 0}),
        ("answer.completed", {"answer": rec["answer"], "citations": rec["citations"],
                              "refused": False, "refusal_reason": None, "refusal_detail": None,
                              "verdict": "grounded", "evidence_score": 0.9, "model": "m",
                              "prompt_version": "p", "degraded": []}),
        ("run.completed", {"status": "succeeded", "timings_ms": {}}),
    ]  # fmt: skip
    return [(f"{i + 1}-0", {"type": t, "data": json.dumps(d)}) for i, (t, d) in enumerate(data)]


def test_a_run_citing_a_deleted_document_loses_its_passage_and_its_answer_in_record_and_log() -> (
    None
):
    rec = record()
    entries = log(rec)
    change = rewrite(json.dumps(rec).encode(), entries, "acme", GONE)
    assert change.record is not None and change.events is not None
    new = RunRecord.model_validate_json(change.record)
    gone, kept = new.sources
    assert (gone.text, gone.redacted) == ("", "document_deleted")
    assert (kept.text, kept.redacted) == ("Kept.", None)
    assert new.answer == ""
    assert [(r.document_id, r.reason) for r in new.redactions] == [("doc-gone", "document_deleted")]
    assert "Twelve" not in change.record
    # The same ids in the same order; each event still parses as its model.
    assert [entry_id for entry_id, _ in change.events] == [entry_id for entry_id, _ in entries]
    assert all("Twelve" not in fields["data"] for _, fields in change.events)
    events = [parse_event(f["type"], f["data"]) for _, f in change.events]
    assert [type(e).__name__ for e in events] == [
        "RunAcceptedEvent", "RetrievalCompleted", "AnswerDelta", "AnswerCompleted", "RunCompleted",
    ]  # fmt: skip
    assert events[2].model_dump()["redacted"] == "document_deleted"
    assert events[3].model_dump()["redacted"] == "document_deleted"


def test_a_run_that_read_but_did_not_cite_the_document_keeps_its_answer() -> None:
    rec = record(cited="doc-kept")
    change = rewrite(json.dumps(rec).encode(), log(rec), "acme", GONE)
    assert change.record is not None and change.events is not None
    new = RunRecord.model_validate_json(change.record)
    assert new.answer == rec["answer"] and new.sources[0].text == ""
    deltas = [f for _, f in change.events if f["type"].startswith("answer.")]
    assert [f["data"] for f in deltas] == [
        f["data"] for _, f in log(rec) if f["type"].startswith("answer.")
    ]


def test_another_tenants_run_and_a_run_without_the_document_are_left_as_they_are() -> None:
    rec = record(tenant="globex")
    assert rewrite(json.dumps(rec).encode(), log(rec), "acme", GONE) == redaction.Rewrite(
        None, None
    )
    rec = record()
    other = {"doc-other": "access_changed"}
    assert rewrite(json.dumps(rec).encode(), log(rec), "acme", other) == redaction.Rewrite(
        None, None
    )
    assert rewrite(None, [], "acme", GONE) == redaction.Rewrite(None, None)


def test_a_second_redaction_of_the_same_run_changes_nothing_more() -> None:
    rec = record()
    first = rewrite(json.dumps(rec).encode(), log(rec), "acme", GONE)
    assert first.record is not None and first.events is not None
    again = rewrite(first.record.encode(), first.events, "acme", GONE)
    assert again == redaction.Rewrite(None, None)


def test_a_normal_runs_events_and_record_carry_no_redaction_field() -> None:
    rec = record()
    parsed = RunRecord.model_validate(rec)
    assert "redacted" not in parsed.sources[0].model_dump(mode="json")
    assert parsed.redactions == []


def test_index_keys_are_per_tenant_and_unambiguous() -> None:
    assert redaction.cites_key("a:b", "c") != redaction.cites_key("a", "b:c")
    assert redaction.cites_key("acme", "doc") != redaction.cites_key("globex", "doc")


def test_the_runs_conversation_turn_loses_the_answer_too_and_other_turns_stay() -> None:
    rec = record() | {"conversation_id": "conv_" + "1" * 32}
    turn = {
        "run_id": rec["id"],
        "question": "q",
        "query": "q",
        "rewrite_rule": "first",
        "answer": rec["answer"],
        "refused": False,
        "source_ids": ["doc-gone#s"],
        "at_ms": 3,
    }
    earlier = turn | {"run_id": "run_" + "2" * 32, "answer": "Earlier answer."}
    turns = [json.dumps(earlier), json.dumps(turn)]  # fmt: skip
    change = rewrite(json.dumps(rec).encode(), log(rec), "acme", GONE, turns)
    assert change.turn is not None
    index, new = change.turn
    assert index == 1 and json.loads(new)["answer"] == ""
    assert Turn.model_validate_json(new).redacted == "document_deleted"
    assert redaction.conversation_of(json.dumps(rec).encode()) == rec["conversation_id"]
    uncited = record(cited="doc-kept")
    assert rewrite(json.dumps(uncited).encode(), log(uncited), "acme", GONE, turns).turn is None
