"""The executor's stages against in-memory fakes: the events a run writes, and its record."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from services.gateway.clients import ServiceClients
from services.gateway.paths.models import PathConfig
from services.gateway.runs.events import RunEvent
from services.gateway.runs.executor import RunExecutor
from services.gateway.runs.models import RunRecord, RunStatus
from services.gateway.runs.store import LeaseLost
from services.gateway.settings import GatewaySettings
from tests.unit.services.gateway.fakes import (
    ANSWER,
    FakeBackends,
    FakeCall,
    FakeGeneratorStub,
    FakeStore,
    delta,
    final,
    queued_run,
    rpc_error,
    search_reply,
)

SETTINGS = GatewaySettings(grpc_backoff_s=0.0)


def execute(store: FakeStore, backends: FakeBackends, run_id: str) -> None:
    asyncio.run(RunExecutor(store, backends, SETTINGS).execute(run_id, token=1))


def test_a_normal_run_writes_its_events_in_order_and_saves_the_answer() -> None:
    store = FakeStore()
    run = queued_run(store)
    execute(store, FakeBackends(), run.id)
    assert store.types(run.id) == [
        "run.started",
        "retrieval.completed",
        "answer.delta",
        "answer.delta",
        "answer.completed",
        "run.completed",
    ]
    assert store.data(run.id, "run.started") == [{"attempt": 1, "restarted": False}]
    assert [d["index"] for d in store.data(run.id, "answer.delta")] == [0, 1]
    [retrieval] = store.data(run.id, "retrieval.completed")
    assert [s["number"] for s in retrieval["sources"]] == [1, 2]
    assert set(retrieval["timings_ms"]) == {"retrieve", "retriever.sparse"}
    [answer] = store.data(run.id, "answer.completed")
    assert answer["verdict"] == "grounded"
    assert [c["source_id"] for c in answer["citations"]] == ["c1"]
    record = store.records[run.id]
    assert record.status is RunStatus.SUCCEEDED
    assert (record.answer, record.attempts, record.evidence_score) == (
        "Resume with [1].",
        1,
        0.8123,
    )
    assert {"retrieve", "first_token", "generate", "total"} <= set(record.timings_ms)
    [completed] = store.data(run.id, "run.completed")
    assert completed == {"status": "succeeded", "timings_ms": record.timings_ms}


def test_a_run_is_indexed_under_its_documents_before_their_passages_reach_the_log() -> None:
    # ragway/redaction.py finds the run there when one of them is deleted or revoked,
    # and the run is redacted again after its final write, which put the text back.
    store = FakeStore()
    run = queued_run(store)
    execute(store, FakeBackends(), run.id)
    docs, before, ttl_s = store.cited[run.id]
    assert docs == sorted({s.document_id for s in store.records[run.id].sources}) and docs
    assert before == ["run.started"] and ttl_s == SETTINGS.record_retention_s
    assert store.reapplied == [(run.id, RunStatus.SUCCEEDED)]


def test_dense_and_reranker_degradations_pass_through_to_the_event_and_the_record() -> None:
    store = FakeStore()
    run = queued_run(store)
    degraded = [("dense", "embedder unavailable"), ("rerank", "budget spent")]
    generated = final("Resume with [1].", [1], degraded=[("llm_fallback", "timeout")])
    backends = FakeBackends(search_reply(degraded=degraded), [*ANSWER, generated])
    execute(store, backends, run.id)
    expected = [{"stage": s, "reason": r} for s, r in degraded]
    [retrieval] = store.data(run.id, "retrieval.completed")
    assert retrieval["degraded"] == expected
    [answer] = store.data(run.id, "answer.completed")
    assert answer["degraded"] == [{"stage": "generator", "reason": "llm_fallback: timeout"}]
    record = store.records[run.id]
    assert [d.model_dump() for d in record.degraded] == [*expected, *answer["degraded"]]


class OnePath:
    """The executor's path hooks: every run is served by this one path version."""

    def __init__(self, config: PathConfig) -> None:
        self.path = config

    async def config(self, name: str, version: int) -> PathConfig:
        return self.path

    async def finished(self, record: RunRecord) -> None:
        return None


def test_a_paths_reranker_blend_goes_out_with_its_search_and_unset_stays_absent() -> None:
    blend: dict[str, Any] = {
        "reranker": "reranker-lumen-1",
        "rerank_weight": 0.3,
        "rerank_skip_margin": 0.008,
    }
    sent = []
    for options in (blend, {}):
        store, backends = FakeStore(), FakeBackends()
        run = queued_run(store)
        path = OnePath(PathConfig.model_validate({"name": "candidate", "version": 2, **options}))
        asyncio.run(RunExecutor(store, backends, SETTINGS, path).execute(run.id, token=1))
        assert store.records[run.id].status is RunStatus.SUCCEEDED
        [request] = backends.searches
        sent.append(request)
    named, unset = sent
    assert named.reranker == "reranker-lumen-1"
    # Doubles on the wire: the path's numbers arrive exactly as stored.
    assert (named.rerank_weight, named.rerank_skip_margin) == (0.3, 0.008)
    # Unset: absent on the wire, so the retriever keeps its own settings (not 0.0).
    assert not unset.HasField("rerank_weight") and not unset.HasField("rerank_skip_margin")


def test_the_record_says_which_reranker_served_and_whether_fusion_made_it_skip() -> None:
    # An SRE comparing a candidate reranker's path with the baseline needs to see how
    # often its skip margin kept the fused order: the record said only which artifact.
    seen = []
    for model, skipped in (("reranker-lumen-1", True), ("reranker-lumen-1", False), ("", False)):
        store = FakeStore()
        run = queued_run(store)
        reply = search_reply()
        reply.reranker_model, reply.rerank_skipped = model, skipped
        execute(store, FakeBackends(reply=reply), run.id)
        record = store.records[run.id]
        seen.append((record.reranker_model, record.rerank_skipped))
    assert seen == [("reranker-lumen-1", True), ("reranker-lumen-1", False), (None, None)]


def test_a_citation_of_a_passage_not_in_the_context_is_dropped() -> None:
    store = FakeStore()
    run = queued_run(store)
    backends = FakeBackends(messages=[*ANSWER, final("Resume with [1] [7].", [1, 7, 2])])
    execute(store, backends, run.id)
    [answer] = store.data(run.id, "answer.completed")
    assert [c["number"] for c in answer["citations"]] == [1, 2]
    assert [c.number for c in store.records[run.id].citations] == [1, 2]


def test_a_cancel_between_retrieval_and_generation_ends_the_run_before_the_generator() -> None:
    store = FakeStore()
    run = queued_run(store)

    def cancel_after_retrieval(run_id: str, event: RunEvent) -> None:
        if event.TYPE == "retrieval.completed":
            store.cancelled.add(run_id)

    store.on_append = cancel_after_retrieval
    backends = FakeBackends()
    execute(store, backends, run.id)
    assert store.types(run.id) == ["run.started", "retrieval.completed", "run.cancelled"]
    assert store.data(run.id, "run.cancelled") == [{"status": "cancelled"}]
    assert backends.requests == []  # the generator was never called
    assert store.records[run.id].status is RunStatus.CANCELLED


def test_a_cancel_mid_answer_closes_the_generator_stream() -> None:
    store = FakeStore()
    run = queued_run(store)

    def cancel_after_first_delta(run_id: str, event: RunEvent) -> None:
        if event.TYPE == "answer.delta":
            store.cancelled.add(run_id)

    store.on_append = cancel_after_first_delta
    backends = FakeBackends()
    execute(store, backends, run.id)
    assert store.types(run.id)[-2:] == ["answer.delta", "run.cancelled"]
    assert backends.closed


def execute_with_generator(store: FakeStore, run_id: str, *calls: FakeCall) -> FakeGeneratorStub:
    """The run through the real clients (their retry and breaker) over a fake generator
    stub, the retriever faked too. Creating the channels connects nothing."""
    stub = FakeGeneratorStub(calls)

    async def main() -> None:
        clients = ServiceClients("127.0.0.1:1", "127.0.0.1:1", attempts=3, backoff_s=0.0)
        clients.generator = stub  # type: ignore[assignment]

        async def search(request: object, timeout_s: float) -> object:
            return search_reply()

        clients.search = search  # type: ignore[method-assign,assignment]
        await RunExecutor(store, clients, SETTINGS).execute(run_id, token=1)
        stub.breaker_state = clients.generator_breaker.state
        await clients.close()

    asyncio.run(main())
    return stub


def test_the_generator_is_retried_when_unavailable_before_its_first_message() -> None:
    store = FakeStore()
    run = queued_run(store)
    stub = execute_with_generator(
        store,
        run.id,
        FakeCall([], rpc_error()),
        FakeCall([*ANSWER, final("Resume with [1].", [1])]),
    )
    assert len(stub.made) == 2
    assert all(call.cancelled for call in stub.made)
    assert store.types(run.id).count("answer.delta") == 2  # once each, not repeated
    assert store.records[run.id].status is RunStatus.SUCCEEDED
    assert stub.breaker_state == "closed"


def test_the_generator_is_not_retried_after_a_delta_reached_the_log() -> None:
    store = FakeStore()
    run = queued_run(store)
    stub = execute_with_generator(
        store,
        run.id,
        FakeCall([delta("Resume with ", 0)], rpc_error()),
        FakeCall([*ANSWER, final("Resume with [1].", [1])]),
    )
    assert len(stub.made) == 1
    assert store.types(run.id)[-2:] == ["answer.delta", "run.failed"]
    [failed] = store.data(run.id, "run.failed")
    assert failed == {
        "status": "failed",
        "error": {"code": "generator_unavailable", "message": "the generator is unavailable"},
    }


def test_a_generator_error_other_than_unavailable_fails_the_run_at_once() -> None:
    store = FakeStore()
    run = queued_run(store)
    stub = execute_with_generator(
        store, run.id, FakeCall([], rpc_error(grpc.StatusCode.DEADLINE_EXCEEDED))
    )
    assert len(stub.made) == 1
    assert store.records[run.id].error is not None
    assert store.records[run.id].error.code == "generator_timeout"  # type: ignore[union-attr]


def test_a_run_cancelled_while_queued_never_starts() -> None:
    store = FakeStore()
    run = queued_run(store)
    store.cancelled.add(run.id)
    backends = FakeBackends()
    execute(store, backends, run.id)
    assert store.types(run.id) == ["run.cancelled"]
    assert backends.requests == []


def test_a_restarted_run_voids_the_partial_results_and_says_so() -> None:
    store = FakeStore()
    run = queued_run(store)
    run.attempts, run.answer = 1, "A partial answer"
    execute(store, FakeBackends(), run.id)
    assert store.data(run.id, "run.started") == [{"attempt": 2, "restarted": True}]
    assert store.records[run.id].answer == "Resume with [1]."


def test_an_executor_whose_lease_was_taken_over_writes_nothing() -> None:
    store = FakeStore()
    run = queued_run(store)
    store.tokens[run.id] = 2  # another executor acquired the run after this one
    with pytest.raises(LeaseLost):
        execute(store, FakeBackends(), run.id)
    assert store.types(run.id) == []
    assert store.records[run.id].status is RunStatus.QUEUED
