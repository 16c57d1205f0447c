"""Tracing: off without OTEL_* variables; on, one run's spans join the request's trace.

The SDK's in-memory exporter collects the spans in-process; the executor runs
over the in-memory fakes, picked up from a fake queue entry that carries the
traceparent the request stored with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ragway import telemetry
from services.gateway.runs.executor import RunExecutor
from services.gateway.runs.queue import RunQueue
from services.gateway.runs.store import QueuedRun
from services.gateway.settings import GatewaySettings
from tests.unit.services.gateway.fakes import FakeBackends, FakeStore, queued_run
from tests.unit.spans import memory_exporter


@pytest.fixture(scope="module")
def spans() -> InMemorySpanExporter:
    return memory_exporter()


@pytest.fixture
def exporter(spans: InMemorySpanExporter) -> InMemorySpanExporter:
    spans.clear()
    return spans


def test_tracing_is_off_without_otel_variables_and_on_with_an_exporter_or_endpoint() -> None:
    assert not telemetry.enabled({})
    assert telemetry.configure("ragway-test", env={}) is None  # installs nothing
    assert telemetry.enabled({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert telemetry.enabled({"OTEL_TRACES_EXPORTER": "console"})
    assert not telemetry.enabled({"OTEL_TRACES_EXPORTER": "none"})
    assert not telemetry.enabled(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "true"}
    )


def test_without_an_active_span_nothing_is_stored_with_the_queued_run() -> None:
    assert telemetry.current_traceparent() == ""


class OneEntryQueue:
    """A queue holding one entry; ``stop`` is set once the entry is acknowledged."""

    def __init__(self, entry: QueuedRun, stop: asyncio.Event) -> None:
        self._entries = [entry]
        self._stop = stop
        self.acked: list[str] = []

    async def ensure_queue(self) -> None:
        return None

    async def next_runs(self, consumer: str, count: int, block_ms: int) -> list[QueuedRun]:
        taken, self._entries = self._entries, []
        if not taken:
            await asyncio.sleep(0.01)
        return taken

    async def reclaim(self, consumer: str, min_idle_ms: int, count: int) -> list[QueuedRun]:
        return []

    async def acquire(self, consumer: str, entry_id: str, run_id: str) -> int | None:
        return 1

    async def touch(self, consumer: str, entry_id: str, run_id: str, token: int) -> bool:
        return True

    async def ack(self, entry_ids: Sequence[str]) -> None:
        self.acked.extend(entry_ids)
        self._stop.set()


def by_name(spans: Sequence[ReadableSpan]) -> dict[str, ReadableSpan]:
    return {s.name: s for s in spans}


def test_an_executed_run_continues_the_trace_of_the_request_that_queued_it(
    exporter: InMemorySpanExporter,
) -> None:
    store = FakeStore()
    run = queued_run(store)
    with telemetry.tracer.start_as_current_span("POST /v1/runs"):
        traceparent = telemetry.current_traceparent()
    assert traceparent.startswith("00-")

    async def main() -> list[str]:
        stop = asyncio.Event()
        queue_store = OneEntryQueue(QueuedRun("1-0", run.id, traceparent), stop)
        executor = RunExecutor(store, FakeBackends(), GatewaySettings(grpc_backoff_s=0.0))
        queue = RunQueue(queue_store, executor.execute, consumer="test", concurrency=1, lease_s=30)
        await asyncio.wait_for(queue.run(stop), 10)
        return queue_store.acked

    assert asyncio.run(main()) == ["1-0"]
    spans = by_name(exporter.get_finished_spans())
    assert {"POST /v1/runs", "ragway.run", "retrieval", "ragway.generate"} <= set(spans)
    request, run_span = spans["POST /v1/runs"], spans["ragway.run"]
    trace_ids = {s.context.trace_id for s in spans.values()}
    assert trace_ids == {request.context.trace_id}, "one run, one trace"
    assert run_span.parent is not None and run_span.parent.span_id == request.context.span_id
    for name in ("ragway.run", "retrieval", "ragway.generate"):
        assert (spans[name].attributes or {}).get(telemetry.RUN_ID) == run.id
    retrieval = spans["retrieval"].attributes
    assert retrieval is not None
    assert retrieval["gen_ai.operation.name"] == "retrieval"
    assert retrieval["gen_ai.request.top_k"] == run.top_k
    assert retrieval[telemetry.TENANT] == run.tenant
    assert spans["retrieval"].parent is not None
    assert spans["retrieval"].parent.span_id == run_span.context.span_id
    assert not any("question" in key for s in spans.values() for key in (s.attributes or {}))


def test_a_run_queued_without_a_trace_starts_its_own_and_still_carries_the_run_id(
    exporter: InMemorySpanExporter,
) -> None:
    with (
        telemetry.continue_trace("", run_id="r-1"),
        telemetry.tracer.start_as_current_span("ragway.run"),
        telemetry.tracer.start_as_current_span("child"),
    ):
        pass
    spans = by_name(exporter.get_finished_spans())
    assert spans["ragway.run"].parent is None
    assert (spans["child"].attributes or {}).get(telemetry.RUN_ID) == "r-1"
