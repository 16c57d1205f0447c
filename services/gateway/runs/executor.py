"""Executes runs apart from any HTTP connection.

    POST /v1/runs ─▶ Redis: record + run.accepted + queue entry   (one Lua script)
                                   │
    executor (any replica) ◀─ XREADGROUP ragway:runs:queue
        ├─ retriever.Search  ─▶ retrieval.completed
        ├─ generator.Generate ─▶ answer.delta … [answer.reset, answer.delta …] answer.completed
        └─ record saved ─▶ run.completed | run.failed ─▶ XACK, events expire later

A client that disconnects changes nothing here; it replays the stream later.
POST /v1/runs/{id}/cancel sets a flag that the executor checks before each stage
and after every delta; it then cancels the generator call and ends the run with
run.cancelled.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import grpc
from redis.exceptions import RedisError

from ragway.v1 import generator_pb2, retriever_pb2
from services.gateway.clients import ServiceClients
from services.gateway.resilience import CircuitOpenError
from services.gateway.runs.context import PackedPassage, pack
from services.gateway.runs.models import (
    TERMINAL_EVENTS,
    Citation,
    Degradation,
    ErrorInfo,
    EventType,
    RunRecord,
    RunStatus,
    Source,
)
from services.gateway.runs.store import RunStore
from services.gateway.settings import GatewaySettings

log = logging.getLogger(__name__)

_MODES = {
    "hybrid": retriever_pb2.SEARCH_MODE_HYBRID,
    "sparse": retriever_pb2.SEARCH_MODE_SPARSE,
    "dense": retriever_pb2.SEARCH_MODE_DENSE,
}
_REFUSAL = {
    generator_pb2.REFUSAL_REASON_NO_EVIDENCE: "no_evidence",
    generator_pb2.REFUSAL_REASON_WEAK_EVIDENCE: "weak_evidence",
    generator_pb2.REFUSAL_REASON_MODEL_ABSTAINED: "model_abstained",
}


class RunCancelledError(Exception):
    """The caller cancelled the run; the executor stops at its next step."""


class RunFailedError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class RunExecutor:
    def __init__(
        self, store: RunStore, clients: ServiceClients, settings: GatewaySettings, consumer: str
    ) -> None:
        self._store = store
        self._clients = clients
        self._settings = settings
        self._consumer = consumer
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self, stop: asyncio.Event) -> None:
        """Take runs from the queue until ``stop`` is set; then finish what was taken."""
        limit = self._settings.executor_concurrency
        lease_ms = int(self._settings.run_lease_s * 1000)
        loop = asyncio.get_running_loop()
        next_reclaim = 0.0
        queue_ready = False
        while not stop.is_set():
            if len(self._tasks) >= limit:
                await asyncio.wait(self._tasks, return_when=asyncio.FIRST_COMPLETED)
                continue
            try:
                if not queue_ready:
                    await self._store.ensure_queue()
                    queue_ready = True
                entries: list[tuple[str, str]] = []
                if loop.time() >= next_reclaim:
                    # Runs whose executor died: any replica finishes them.
                    entries = await self._store.reclaim(
                        self._consumer, lease_ms, limit - len(self._tasks)
                    )
                    next_reclaim = loop.time() + self._settings.run_lease_s / 3
                    for _, run_id in entries:
                        log.warning("reclaimed run", extra={"run_id": run_id})
                if not entries:
                    entries = await self._store.next_runs(
                        self._consumer, count=limit - len(self._tasks), block_ms=500
                    )
            except (RedisError, OSError) as exc:  # Redis restarting: back off, retry
                log.warning("queue read failed", extra={"error": str(exc)})
                queue_ready = False
                await asyncio.sleep(0.5)
                continue
            for entry_id, run_id in entries:
                task = asyncio.create_task(self._execute_and_ack(entry_id, run_id))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        if self._tasks:
            await asyncio.wait(self._tasks)

    async def _execute_and_ack(self, entry_id: str, run_id: str) -> None:
        lease = asyncio.create_task(self._hold_lease(entry_id))
        try:
            await self.execute(run_id)
            await self._store.ack([entry_id])
        except Exception:  # the entry stays pending: another executor reclaims it
            log.exception("run execution crashed", extra={"run_id": run_id})
        finally:
            lease.cancel()

    async def _hold_lease(self, entry_id: str) -> None:
        """Touch the queue entry well within the lease, so no replica steals a live run."""
        while True:
            await asyncio.sleep(self._settings.run_lease_s / 3)
            try:
                await self._store.touch(self._consumer, [entry_id])
            except (RedisError, OSError) as exc:
                log.warning("lease heartbeat failed", extra={"error": str(exc)})

    async def execute(self, run_id: str) -> None:
        record = await self._store.get(run_id)
        if record is None:
            log.warning("queued run has no record", extra={"run_id": run_id})
            return
        if record.status.finished:
            # Delivered twice: already done. A log without its terminal event (written
            # by a version that saved the record and the event separately, and died
            # between them) gets it now, or its streams would never end.
            if await self._store.last_event_type(run_id) not in TERMINAL_EVENTS:
                log.warning("finished run had no terminal event", extra={"run_id": run_id})
                await self._finish(record)
            return
        if await self._store.cancel_requested(run_id):
            record.status = RunStatus.CANCELLED  # cancelled while queued: never starts
            await self._finish(record)
            return
        started = time.perf_counter()
        restarted = record.attempts > 0
        if record.attempts >= self._settings.max_run_attempts:
            # A run that kills its executor every time must not kill them all.
            record.status = RunStatus.FAILED
            record.error = ErrorInfo(
                code="too_many_attempts",
                message=f"the run was started {record.attempts} times without finishing",
            )
            await self._finish(record)
            return
        if restarted:
            # A previous executor died mid-run: its partial results are void.
            record.sources, record.citations, record.degraded = [], [], []
            record.timings_ms, record.answer = {}, None
        record.status = RunStatus.RUNNING
        record.attempts += 1
        await self._store.save(record)
        await self._store.append(
            run_id, EventType.STARTED, {"attempt": record.attempts, "restarted": restarted}
        )
        try:
            passages = await self._retrieve(record)
            await self._stop_if_cancelled(record)
            await self._generate(record, passages, started)
            record.status = RunStatus.SUCCEEDED
        except RunCancelledError:
            record.status = RunStatus.CANCELLED
        except RunFailedError as exc:
            record.status = RunStatus.FAILED
            record.error = ErrorInfo(code=exc.code, message=exc.message)
        record.timings_ms["total"] = _ms(started)
        await self._finish(record)

    async def _stop_if_cancelled(self, record: RunRecord) -> None:
        if await self._store.cancel_requested(record.id):
            raise RunCancelledError

    async def _retrieve(self, record: RunRecord) -> list[PackedPassage]:
        s = self._settings
        request = retriever_pb2.SearchRequest(
            query=record.question,
            tenant=record.tenant,
            access_groups=record.access_groups,
            top_k=record.top_k,
            candidate_depth=max(s.candidate_depth, record.top_k),
            mode=_MODES[record.mode],
            budget_ms=s.retrieval_budget_ms,
        )
        t0 = time.perf_counter()
        try:
            # The deadline leaves the retriever room to answer after its budget.
            response = await self._clients.search(
                request, timeout_s=s.retrieval_budget_ms / 1000 + 0.5
            )
        except grpc.aio.AioRpcError as exc:
            raise _rpc_failure("retriever", exc) from exc
        except CircuitOpenError as exc:
            raise RunFailedError("retriever_unavailable", str(exc)) from exc
        record.timings_ms["retrieve"] = _ms(t0)
        for timing in response.timings:
            record.timings_ms[f"retriever.{timing.stage}"] = round(timing.ms, 3)
        record.build_id = response.build_id
        record.degraded.extend(
            Degradation(stage=d.stage, reason=d.reason) for d in response.degraded
        )
        packed = pack(response.hits, s.context_token_budget, record.top_k)
        record.sources = [
            Source(
                number=p.number,
                source_id=p.hit.chunk_id,
                document_id=p.hit.document_id,
                title=p.hit.title,
                section=p.hit.section,
                url=p.hit.url,
                version=p.hit.version,
                score=round(p.hit.score, 6),
                text=p.hit.text,
            )
            for p in packed
        ]
        await self._store.append(
            record.id,
            EventType.RETRIEVAL,
            {
                "build_id": record.build_id,
                "sources": [src.model_dump() for src in record.sources],
                "degraded": [d.model_dump() for d in record.degraded],
                "timings_ms": {
                    k: v for k, v in record.timings_ms.items() if k.startswith("retriev")
                },
            },
        )
        return packed

    async def _generate(
        self, record: RunRecord, passages: list[PackedPassage], started: float
    ) -> None:
        s = self._settings
        request = generator_pb2.GenerateRequest(
            question=record.question,
            run_id=record.id,
            passages=[
                generator_pb2.Passage(
                    number=p.number,
                    source_id=p.hit.chunk_id,
                    document_id=p.hit.document_id,
                    title=p.hit.title,
                    section=p.hit.section,
                    text=p.hit.text,
                    url=p.hit.url,
                    retrieval_score=p.hit.score,
                )
                for p in passages
            ],
        )
        remaining_s = max(0.1, s.run_budget_ms / 1000 - (time.perf_counter() - started))
        t0 = time.perf_counter()
        final = await self._stream_answer(record, request, remaining_s, t0)
        record.timings_ms["generate"] = _ms(t0)
        if final is None:
            raise RunFailedError(
                "generator_incomplete", "the generator ended without a final message"
            )
        sources = {src.number: src for src in record.sources}
        refused = final.verdict == generator_pb2.GROUNDING_VERDICT_REFUSED
        record.answer = final.answer
        record.refused = refused
        record.verdict = "refused" if refused else "grounded"
        record.evidence_score = round(final.evidence_score, 4)
        record.refusal_reason = _REFUSAL.get(final.refusal_reason) if refused else None
        record.refusal_detail = final.refusal_detail or None
        record.model = final.model
        record.prompt_version = final.prompt_version
        # The generator's checks and budgets, beside the retriever's: a fallback
        # to the extractive answer, a dropped citation, an unsupported number.
        generator_degraded = [
            Degradation(stage="generator", reason=f"{d.code}: {d.detail}") for d in final.degraded
        ]
        record.degraded.extend(generator_degraded)
        # A citation is a source the generator was given; anything else is dropped.
        record.citations = [
            Citation.model_validate(sources[n].model_dump())
            for n in final.cited_passages
            if n in sources
        ]
        await self._store.append(
            record.id, EventType.ANSWER, _answer_event(record, generator_degraded)
        )

    async def _stream_answer(
        self,
        record: RunRecord,
        request: generator_pb2.GenerateRequest,
        timeout_s: float,
        t0: float,
    ) -> generator_pb2.GenerateFinal | None:
        """Stream the generator's deltas into events; return its final message.

        UNAVAILABLE is retried (bounded, with backoff) only before the first
        message: once deltas reached the event log, a retry would repeat them.
        """
        breaker = self._clients.generator_breaker
        attempts = self._clients.attempts
        for attempt in range(1, attempts + 1):
            try:
                breaker.before_call()
            except CircuitOpenError as exc:
                raise RunFailedError("generator_unavailable", str(exc)) from exc
            final: generator_pb2.GenerateFinal | None = None
            received = False
            call = self._clients.generate(request, timeout_s=timeout_s)
            try:
                async for message in call:
                    received = True
                    if message.HasField("delta"):
                        if "first_token" not in record.timings_ms:
                            record.timings_ms["first_token"] = _ms(t0)
                        await self._store.append(
                            record.id,
                            EventType.DELTA,
                            {"text": message.delta.text, "index": message.delta.index},
                        )
                        await self._stop_if_cancelled(record)
                    elif message.HasField("reset"):
                        # The deltas so far are void; the replacement follows.
                        await self._store.append(
                            record.id, EventType.RESET, {"reason": message.reset.reason}
                        )
                    elif message.HasField("final"):
                        final = message.final
            except grpc.aio.AioRpcError as exc:
                if exc.code() == grpc.StatusCode.UNAVAILABLE:
                    breaker.record_failure()
                    if not received and attempt < attempts:
                        await asyncio.sleep(self._clients.backoff_s * 2 ** (attempt - 1))
                        continue
                else:
                    breaker.record_success()  # it answered: up, if unhappy
                raise _rpc_failure("generator", exc) from exc
            finally:
                call.cancel()  # no-op when finished; else stops the generator's work too
            breaker.record_success()
            return final
        raise AssertionError("unreachable")

    async def _finish(self, record: RunRecord) -> None:
        s = self._settings
        event: tuple[EventType, dict[str, Any]]
        if record.status is RunStatus.SUCCEEDED:
            event = (
                EventType.COMPLETED,
                {"status": record.status.value, "timings_ms": record.timings_ms},
            )
        elif record.status is RunStatus.CANCELLED:
            event = (EventType.CANCELLED, {"status": "cancelled"})
        else:
            assert record.error is not None
            event = (
                EventType.FAILED,
                {"status": record.status.value, "error": record.error.model_dump()},
            )
        # Record and terminal event together, or neither (store.finish says why).
        await self._store.finish(
            record,
            *event,
            record_ttl_s=s.record_retention_s,
            event_ttl_s=s.event_retention_s,
        )
        log.info(
            "run finished",
            extra={
                "run_id": record.id,
                "status": record.status.value,
                "refused": record.refused,
                "total_ms": record.timings_ms.get("total"),
            },
        )


def _answer_event(record: RunRecord, degraded: list[Degradation]) -> dict[str, Any]:
    return {
        "answer": record.answer,
        "citations": [c.model_dump() for c in record.citations],
        "refused": record.refused,
        "refusal_reason": record.refusal_reason,
        "refusal_detail": record.refusal_detail,
        "verdict": record.verdict,
        "evidence_score": record.evidence_score,
        "model": record.model,
        "prompt_version": record.prompt_version,
        "degraded": [d.model_dump() for d in degraded],
    }


def _rpc_failure(service: str, exc: grpc.aio.AioRpcError) -> RunFailedError:
    code = exc.code()
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return RunFailedError(f"{service}_timeout", f"the {service} did not answer in time")
    if code == grpc.StatusCode.UNAVAILABLE:
        return RunFailedError(f"{service}_unavailable", f"the {service} is unavailable")
    return RunFailedError(f"{service}_error", f"{service} error {code.name}: {exc.details()}")


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)
