"""A question in, a cited answer out over SSE — on the real processes."""

from __future__ import annotations

import itertools

import httpx

from tests.integration.conftest import auth
from tests.integration.sse import read_events, start_run


def event_ids_increase(ids: list[str]) -> bool:
    keys = [tuple(int(p) for p in i.split("-")) for i in ids]
    return all(a < b for a, b in itertools.pairwise(keys))


def test_a_demo_question_is_answered_over_sse_with_the_right_citation(api: httpx.Client) -> None:
    run_id = start_run(api, "How do I resume a stream after a disconnect?", auth("demo"))
    events = read_events(api, run_id, auth("demo"))
    names = [e.event for e in events]
    assert names[:3] == ["run.accepted", "run.started", "retrieval.completed"]
    assert names[-2:] == ["answer.completed", "run.completed"]
    assert set(names[3:-2]) == {"answer.delta"}
    assert all(e.id for e in events) and event_ids_increase([e.id for e in events])

    answer = events[-2].json
    assert answer["refused"] is False and answer["verdict"] == "grounded"
    assert "Last-Event-ID" in answer["answer"]
    cited_docs = {c["document_id"] for c in answer["citations"]}
    assert "streaming" in cited_docs
    assert "".join(e.json["text"] for e in events if e.event == "answer.delta") == answer["answer"]
    # Every [n] in the answer is a citation, and every citation is a source given.
    sources = {s["number"]: s for s in events[2].json["sources"]}
    for c in answer["citations"]:
        assert f"[{c['number']}]" in answer["answer"]
        assert sources[c["number"]]["source_id"] == c["source_id"]

    record = api.get(f"/v1/runs/{run_id}", headers=auth("demo")).json()
    assert record["status"] == "succeeded"
    assert record["answer"] == answer["answer"]
    assert record["build_id"] and record["model"] == "extractive-v2"
    assert {"retrieve", "generate", "total", "retriever.sparse", "retriever.dense"} <= set(
        record["timings_ms"]
    )


def test_a_question_the_knowledge_base_cannot_answer_is_refused(api: httpx.Client) -> None:
    run_id = start_run(api, "What is the capital of France?", auth("demo"))
    events = read_events(api, run_id, auth("demo"))
    answer = next(e.json for e in events if e.event == "answer.completed")
    assert answer["refused"] is True
    assert answer["refusal_reason"] == "weak_evidence"
    assert answer["answer"] == "" and answer["citations"] == []
    assert not any(e.event == "answer.delta" for e in events)
    assert events[-1].event == "run.completed"


def test_ask_returns_the_answer_and_citations_as_json(api: httpx.Client) -> None:
    resp = api.post(
        "/v1/ask",
        json={"question": "What is the Acme meal allowance per day?"},
        headers=auth("acme"),
    )
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["refused"] is False and body["reason"] is None
    assert "45 euros" in body["answer"]
    assert [c["source_id"] for c in body["citations"]] == ["acme/expense-policy#meal-allowance"]


def test_ask_reports_a_refusal_with_its_reason(api: httpx.Client) -> None:
    resp = api.post(
        "/v1/ask", json={"question": "Who won the 1998 football world cup?"}, headers=auth("acme")
    )
    body = resp.json()
    assert resp.status_code == 200
    assert body["refused"] is True and body["answer"] == "" and body["citations"] == []
    assert "support" in body["reason"]


def test_each_retrieval_mode_answers(api: httpx.Client) -> None:
    for mode in ("sparse", "dense", "hybrid"):
        resp = api.post(
            "/v1/ask",
            json={"question": "What is the Acme meal allowance per day?", "mode": mode},
            headers=auth("acme"),
        )
        assert resp.status_code == 200, resp.text
        assert "45 euros" in resp.json()["answer"], mode
