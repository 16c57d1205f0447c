"""The ingest task's plain function, ``run_delivery``: states, retries and dead letters.

Fakes for Redis and the retriever; no broker, no Celery eager mode.
"""

from __future__ import annotations

from typing import cast

import grpc
import pytest

from ragway.v1 import retriever_pb2_grpc as pb_grpc
from services.ingest import apply
from services.ingest.apply import TransientError
from services.ingest.deliveries import DeliveryStore
from services.ingest.settings import IngestSettings
from services.ingest.worker import RetryLater, run_delivery
from tests.unit.services.ingest.fakes import FakeRetriever, FakeStore, RpcFailure, upserted

SETTINGS = IngestSettings(task_max_retries=2, retry_backoff_s=1.0, retry_backoff_max_s=3.0)


def attempt(store: FakeStore, retriever: FakeRetriever, *, retries: int = 0) -> str | RetryLater:
    return run_delivery(
        cast(DeliveryStore, store),
        cast(pb_grpc.RetrieverStub, retriever),
        "d-1",
        retries=retries,
        settings=SETTINGS,
    )


def test_an_applied_delivery_records_its_state_builds_and_chunks() -> None:
    store, retriever = FakeStore(), FakeRetriever(builds={"live": "b-1", "candidate": "b-2"})
    store.add("d-1", upserted())
    assert attempt(store, retriever) == "done"
    record = store.records["d-1"]
    assert record["state"] == "done" and record["builds"] == "b-1,b-2"
    assert record["attempts"] == "1" and int(record["chunks"]) >= 1


def test_a_transient_failure_asks_for_a_retry_with_backoff_until_the_last() -> None:
    store = FakeStore()
    retriever = FakeRetriever(fail=RpcFailure(grpc.StatusCode.UNAVAILABLE, "away"))
    store.add("d-1", upserted())
    first = attempt(store, retriever, retries=0)
    assert isinstance(first, RetryLater) and isinstance(first.error, TransientError)
    assert first.countdown_s == 1.0 and store.records["d-1"]["state"] == "retrying"
    second = attempt(store, retriever, retries=1)
    assert isinstance(second, RetryLater) and second.countdown_s == 2.0
    assert attempt(store, retriever, retries=2) == "dead"  # task_max_retries reached
    (delivery, document, error, attempts) = store.dead[0]
    assert (delivery, document, attempts) == ("d-1", "acme/doc-1", 3)
    assert error.startswith("gave up after 3 attempts: retriever: UNAVAILABLE")


def test_the_backoff_is_capped() -> None:
    store = FakeStore()
    retriever = FakeRetriever(fail=RpcFailure(grpc.StatusCode.UNAVAILABLE))
    store.add("d-1", upserted())
    settings = IngestSettings(task_max_retries=10, retry_backoff_s=1.0, retry_backoff_max_s=3.0)
    result = run_delivery(
        cast(DeliveryStore, store),
        cast(pb_grpc.RetrieverStub, retriever),
        "d-1",
        retries=5,
        settings=settings,
    )
    assert isinstance(result, RetryLater) and result.countdown_s == 3.0


def test_a_permanent_failure_is_dead_lettered_at_once() -> None:
    store = FakeStore()
    retriever = FakeRetriever(fail=RpcFailure(grpc.StatusCode.INVALID_ARGUMENT, "bad chunk"))
    store.add("d-1", upserted())
    assert attempt(store, retriever) == "dead"
    assert store.records["d-1"]["state"] == "dead"
    assert store.dead == [("d-1", "acme/doc-1", "retriever: INVALID_ARGUMENT: bad chunk", 1)]


def test_a_redelivery_of_finished_work_is_skipped_without_an_attempt() -> None:
    store, retriever = FakeStore(), FakeRetriever()
    store.add("d-1", upserted(), state="done")
    assert attempt(store, retriever) == "skipped"
    assert store.records["d-1"]["attempts"] == "0" and not retriever.calls


def test_a_superseded_change_is_recorded_as_such() -> None:
    store, retriever = FakeStore(), FakeRetriever()
    store.add("d-1", upserted(occurred_at=10.0))
    store.applied["acme\x1fdoc-1"] = 20.0
    assert attempt(store, retriever) == "superseded"
    assert store.records["d-1"]["state"] == "superseded" and not retriever.calls


def test_an_unexpected_parser_error_is_dead_lettered_with_the_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*_: object, **__: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(apply, "build_document", broken)
    store, retriever = FakeStore(), FakeRetriever()
    store.add("d-1", upserted())
    assert attempt(store, retriever) == "dead"
    record = store.records["d-1"]
    assert record["state"] == "dead" and "RecursionError" in record["error"]
    assert store.dead == [("d-1", "acme/doc-1", record["error"], 1)]
    assert "maximum recursion depth" in record["error"] and not retriever.calls


def test_a_delivery_whose_worker_keeps_dying_is_dead_lettered_not_redelivered_forever() -> None:
    store, retriever = FakeStore(), FakeRetriever()
    store.add("d-1", upserted(), state="running")  # as left by a worker that died in it
    losses = SETTINGS.task_max_worker_losses
    for n in range(1, losses + 1):
        # A redelivery finds it still running: the worker was lost, try again.
        store.records["d-1"]["state"] = "running"
        retriever.fail = RpcFailure(grpc.StatusCode.UNAVAILABLE, "frozen")
        assert isinstance(attempt(store, retriever), RetryLater), n
    store.records["d-1"]["state"] = "running"
    retriever.fail = None
    assert attempt(store, retriever) == "dead"
    assert not retriever.calls  # not tried once more
    record = store.records["d-1"]
    assert record["state"] == "dead" and "worker was lost" in record["error"]
    assert store.dead[0][:2] == ("d-1", "acme/doc-1")
