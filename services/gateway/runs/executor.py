"""Executes one run, stage by stage, apart from any HTTP connection.

    POST /v1/runs ─▶ Redis: record + run.accepted + queue entry   (one Lua script)
                                   │
    runs/queue.py (any replica) ◀─ XREADGROUP ragway:runs:queue ─▶ RunExecutor.execute
        ├─ run.started
        ├─ retriever.Search   ─▶ retrieval.completed
        ├─ generator.Generate ─▶ answer.delta … [answer.reset, answer.delta …] answer.completed
        └─ record saved + run.completed | run.failed | run.cancelled   (one transaction)

A client that disconnects changes nothing here; it replays the stream later.
POST /v1/runs/{id}/cancel sets a flag that the executor checks before each stage
and after every delta; it then cancels the generator call and ends the run with
run.cancelled. The events are the models of runs/events.py; the protos stay in
clients.py.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from typing import Protocol

import grpc

from ragway.v1 import generator_pb2, retriever_pb2
from services.gateway import clients, metrics
from services.gateway.paths.models import PathConfig, default_path
from services.gateway.resilience import CircuitOpenError
from services.gateway.runs import tracing
from services.gateway.runs.context import PackedPassage, known_citations, pack
from services.gateway.runs.conversations import Turn
from services.gateway.runs.events import (
    AnswerCompleted,
    AnswerDelta,
    AnswerReset,
    RetrievalCompleted,
    RunCancelled,
    RunCompleted,
    RunEvent,
    RunFailed,
    RunStarted,
)
from services.gateway.runs.models import (
    TERMINAL_EVENTS,
    ErrorInfo,
    RunRecord,
    RunStatus,
    new_run_id,
    now_ms,
)
from services.gateway.settings import GatewaySettings

log = logging.getLogger(__name__)


class ExecutorStore(Protocol):
    """What the executor needs of the run store (runs/store.py)."""

    async def get(self, run_id: str) -> RunRecord | None: ...

    async def get_checking_cancel(self, run_id: str) -> tuple[RunRecord | None, bool]:
        """``get`` and ``cancel_requested``: one call."""
        ...

    # Every write carries the lease token: the store refuses it (LeaseLost) once
    # another executor took the run over.
    async def save(self, record: RunRecord, *, token: int, ttl_s: int | None = None) -> None: ...

    async def append(self, run_id: str, event: RunEvent, *, token: int) -> str: ...

    async def save_and_append(self, record: RunRecord, event: RunEvent, *, token: int) -> str:
        """``save``, then ``append``: one call."""
        ...

    async def append_checking_cancel(self, run_id: str, event: RunEvent, *, token: int) -> bool:
        """``append``, then whether the run has been cancelled: one call."""
        ...

    async def append_all_checking_cancel(
        self, run_id: str, events: Sequence[RunEvent], *, token: int
    ) -> bool:
        """``append_checking_cancel`` for several events in order: one call."""
        ...

    async def finish(
        self,
        record: RunRecord,
        event: RunEvent,
        *,
        token: int,
        record_ttl_s: int,
        event_ttl_s: int,
        preceding: RunEvent | None = None,
    ) -> str:
        """The final record and the terminal event (after ``preceding``), all or none."""
        ...

    async def save_detached(self, record: RunRecord, *, ttl_s: int) -> None: ...

    # The index of the runs that read each document (ragway/redaction.py), and the
    # redaction again, after the final write, of a run redacted while it ran.
    async def cite(self, record: RunRecord, *, ttl_s: int) -> None: ...

    async def reapply_redactions(self, record: RunRecord) -> bool: ...

    async def last_event_type(self, run_id: str) -> str | None: ...


class TurnLog(Protocol):
    """Where a finished run of a conversation adds its turn (runs/conversations.py)."""

    async def append(self, conversation_id: str, turn: Turn, ttl_s: int) -> bool: ...


class Backends(Protocol):
    """What the executor needs of the retriever and the generator (clients.py)."""

    async def search(
        self, request: retriever_pb2.SearchRequest, timeout_s: float
    ) -> retriever_pb2.SearchResponse: ...

    def generate(
        self, request: generator_pb2.GenerateRequest, timeout_s: float
    ) -> AsyncGenerator[generator_pb2.GenerateResponse, None]: ...


class PathHooks(Protocol):
    """What the executor needs of paths and experiments (paths/control.py)."""

    async def config(self, name: str, version: int) -> PathConfig: ...

    async def finished(self, record: RunRecord) -> None: ...


class RunCancelledError(Exception):
    """The caller cancelled the run; the executor stops at its next step."""


class RunFailedError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class RunExecutor:
    def __init__(
        self,
        store: ExecutorStore,
        backends: Backends,
        settings: GatewaySettings,
        paths: PathHooks | None = None,
        *,
        retrieval_only: bool = False,
        conversations: TurnLog | None = None,
    ) -> None:
        self._store = store
        self._backends = backends
        self._settings = settings
        self._paths = paths
        self._retrieval_only = retrieval_only  # shadows that compare ranked sources only
        self._conversations = conversations

    async def execute(self, run_id: str, token: int) -> None:
        """Run it to its end, writing as the holder of lease ``token`` (runs/queue.py).

        Raises LeaseLost (from the store) when another executor took the run over.

        Each step's Redis writes are one call where they follow each other (the profile
        had round trips as most of the gateway's CPU): the record read with the cancel
        flag, the running record with run.started, retrieval.completed with the cancel
        check after it, answer.completed with the final record and terminal event."""
        record, cancelled = await self._store.get_checking_cancel(run_id)
        if record is None:
            log.warning("queued run has no record", extra={"run_id": run_id})
            return
        if record.status.finished:
            # Delivered twice: already done. A log without its terminal event (written
            # by a version that saved the record and the event separately, and died
            # between them) gets it now, or its streams would never end.
            if await self._store.last_event_type(run_id) not in TERMINAL_EVENTS:
                log.warning("finished run had no terminal event", extra={"run_id": run_id})
                await self._finish(record, token)
            return
        if cancelled:
            record.status = RunStatus.CANCELLED  # cancelled while queued: never starts
            await self._finish(record, token)
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
            await self._finish(record, token)
            return
        if restarted:
            # A previous executor died mid-run: its partial results are void.
            record.sources, record.citations, record.degraded = [], [], []
            record.timings_ms, record.answer = {}, None
        record.status = RunStatus.RUNNING
        record.attempts += 1
        await self._store.save_and_append(
            record, RunStarted(attempt=record.attempts, restarted=restarted), token=token
        )
        path = default_path(record.path)
        if self._paths is not None:
            path = await self._paths.config(record.path, record.path_version)
        answered: AnswerCompleted | None = None
        try:
            with tracing.stage("retrieval", record):
                passages, found, cancelled = await self._retrieve(record, path, token)
            if cancelled:  # looked at after the retrieval's write, before the generator
                raise RunCancelledError
            if not self._retrieval_only:
                with tracing.stage("ragway.generate", record):
                    answered = await self._generate(record, passages, found, started, path, token)
            record.status = RunStatus.SUCCEEDED
        except RunCancelledError:
            record.status = RunStatus.CANCELLED
        except RunFailedError as exc:
            record.status = RunStatus.FAILED
            record.error = ErrorInfo(code=exc.code, message=exc.message)
        record.timings_ms["total"] = _ms(started)
        await self._finish(record, token, preceding=answered)

    async def _retrieve(
        self, record: RunRecord, path: PathConfig, token: int
    ) -> tuple[list[PackedPassage], clients.Retrieved, bool]:
        """Search and log retrieval.completed; the passages, the search's reply, and
        whether the run was cancelled by the time that was written (one call: the
        write and the check)."""
        s = self._settings
        request = clients.search_request(
            record,
            candidate_depth=path.candidate_depth or s.candidate_depth,
            budget_ms=s.retrieval_budget_ms,
            build=path.build,
            rerank=path.rerank,
            reranker=path.reranker,
            rerank_weight=path.rerank_weight,
            rerank_skip_margin=path.rerank_skip_margin,
        )
        t0 = time.perf_counter()
        try:
            # The deadline leaves the retriever room to answer after its budget.
            response = await self._backends.search(
                request, timeout_s=s.retrieval_budget_ms / 1000 + 0.5
            )
        except grpc.aio.AioRpcError as exc:
            raise _rpc_failure("retriever", exc) from exc
        except CircuitOpenError as exc:
            raise RunFailedError("retriever_unavailable", str(exc)) from exc
        record.timings_ms["retrieve"] = _ms(t0)
        found = clients.retrieved(response)
        record.timings_ms.update(found.timings_ms)
        record.build_id = found.build_id
        record.reranker_model = found.reranker_model
        record.rerank_skipped = found.rerank_skipped
        record.degraded.extend(found.degraded)
        packed = pack(found.hits, s.context_token_budget, record.top_k)
        record.sources = clients.sources(packed)
        # Indexed before the passages reach the log: a deletion from now on finds the run.
        await self._store.cite(record, ttl_s=s.record_retention_s)
        retrieved = RetrievalCompleted(
            build_id=record.build_id,
            sources=record.sources,
            degraded=record.degraded,
            timings_ms={k: v for k, v in record.timings_ms.items() if k.startswith("retriev")},
            query=record.rewritten_query,
        )
        cancelled = await self._store.append_checking_cancel(record.id, retrieved, token=token)
        return packed, found, cancelled

    async def _generate(
        self,
        record: RunRecord,
        passages: list[PackedPassage],
        found: clients.Retrieved,
        started: float,
        path: PathConfig,
        token: int,
    ) -> AnswerCompleted:
        """Stream the answer's deltas; the answer.completed event, written with the end."""
        request = clients.generate_request(
            record,
            passages,
            max_output_tokens=path.max_output_tokens or 0,
            min_support=path.min_support,
            backend=path.generator_backend,
            model=path.generator_model,
            found=found,
        )
        remaining_s = max(
            0.1, self._settings.run_budget_ms / 1000 - (time.perf_counter() - started)
        )
        t0 = time.perf_counter()
        final = await self._stream_answer(record, request, remaining_s, t0, token)
        record.timings_ms["generate"] = _ms(t0)
        if final is None:
            raise RunFailedError(
                "generator_incomplete", "the generator ended without a final message"
            )
        record.answer = final.answer
        record.refused = final.refused
        record.verdict = "refused" if final.refused else "grounded"
        record.evidence_score = final.evidence_score
        record.refusal_reason = final.refusal_reason
        record.refusal_detail = final.refusal_detail
        record.model = final.model
        record.prompt_version = final.prompt_version
        record.degraded.extend(final.degraded)
        record.citations = known_citations(final.cited, record.sources)
        return AnswerCompleted(
            answer=record.answer,
            citations=record.citations,
            refused=record.refused,
            refusal_reason=record.refusal_reason,
            refusal_detail=record.refusal_detail,
            verdict=record.verdict,
            evidence_score=record.evidence_score,
            model=record.model,
            prompt_version=record.prompt_version,
            degraded=final.degraded,
        )

    async def _stream_answer(
        self,
        record: RunRecord,
        request: generator_pb2.GenerateRequest,
        timeout_s: float,
        t0: float,
        token: int,
    ) -> clients.Generated | None:
        """Stream the generator's deltas into events; return its final message.

        The client retries UNAVAILABLE only before the first message
        (resilience.stream_with_retries): once deltas reached the event log, a
        retry would repeat them. Leaving the loop early closes the stream, which
        cancels the generator call.
        """
        final: clients.Generated | None = None
        deltas = _Deltas(self._store, record.id, token)
        try:
            async with aclosing(self._backends.generate(request, timeout_s=timeout_s)) as stream:
                async for message in stream:
                    part = clients.generation(message)
                    if isinstance(part, clients.Delta):
                        if "first_token" not in record.timings_ms:
                            record.timings_ms["first_token"] = _ms(t0)
                        if deltas.add(AnswerDelta(text=part.text, index=part.index)):
                            raise RunCancelledError
                    elif isinstance(part, clients.Reset):
                        # The deltas so far are void; the replacement follows.
                        if await deltas.drain():
                            raise RunCancelledError
                        await self._store.append(
                            record.id, AnswerReset(reason=part.reason), token=token
                        )
                    elif isinstance(part, clients.Generated):
                        final = part
            if await deltas.drain():
                raise RunCancelledError
        except grpc.aio.AioRpcError as exc:
            raise _rpc_failure("generator", exc) from exc
        except CircuitOpenError as exc:
            raise RunFailedError("generator_unavailable", str(exc)) from exc
        finally:
            await deltas.settle()  # nothing of the answer is written after this
        return final

    async def _finish(
        self, record: RunRecord, token: int, *, preceding: RunEvent | None = None
    ) -> None:
        s = self._settings
        event: RunEvent
        if record.status is RunStatus.SUCCEEDED:
            event = RunCompleted(timings_ms=record.timings_ms)
        elif record.status is RunStatus.CANCELLED:
            event = RunCancelled()
        else:
            assert record.error is not None
            event = RunFailed(error=record.error)
        # The turn goes first: a client that reads the terminal event may ask its
        # follow-up at once, on any replica, and this process may die right after the
        # final write; a turn written after it was lost then, and the follow-up was
        # searched without its subject. Appending is once per run id, so a run that
        # another executor finishes after a crash here still adds one turn.
        await self._add_turn(record)
        # Record and terminal event together, or neither (store.finish says why).
        await self._store.finish(
            record,
            event,
            token=token,
            record_ttl_s=s.record_retention_s,
            event_ttl_s=s.event_retention_s,
            preceding=preceding,
        )
        metrics.observe_run(record)
        # After the final write and the turn, which put back what the executor held: a
        # redaction that came meanwhile is applied again (ragway/redaction.py).
        if record.sources:
            try:
                if await self._store.reapply_redactions(record):
                    log.info("run redacted again after its end", extra={"run_id": record.id})
            except Exception:  # the run is done; a failed redaction must not undo it
                log.exception("redaction after the run's end failed", extra={"run_id": record.id})
        log.info(
            "run finished",
            extra={
                "run_id": record.id,
                "status": record.status.value,
                "refused": record.refused,
                "total_ms": record.timings_ms.get("total"),
                "path": record.path,
                "path_version": record.path_version,
            },
        )
        if self._paths is not None and record.experiment is not None:
            try:
                await self._paths.finished(record)
            except Exception:  # the run is done; its experiment bookkeeping must not undo it
                log.exception("experiment bookkeeping failed", extra={"run_id": record.id})

    async def _add_turn(self, record: RunRecord) -> None:
        """A succeeded run of a conversation becomes its next turn (once per run id)."""
        if (
            self._conversations is None
            or record.conversation_id is None
            or record.status is not RunStatus.SUCCEEDED
        ):
            return
        turn = Turn(
            run_id=record.id,
            question=record.question,
            query=record.standalone_query,
            rewrite_rule=record.rewrite_rule or "first",
            answer=record.answer or "",
            refused=bool(record.refused),
            source_ids=[c.source_id for c in record.citations],
            at_ms=now_ms(),
        )
        added = await self._conversations.append(
            record.conversation_id, turn, self._settings.conversation_ttl_s
        )
        if not added:
            log.info(
                "turn not added: conversation expired or turn already there",
                extra={"run_id": record.id, "conversation_id": record.conversation_id},
            )

    async def shadow(
        self, served: RunRecord, path: str, version: int, retrieval_only: bool = False
    ) -> None:
        """Run the served run's question on ``path`` unseen: its record is stored (for the
        report), its events go nowhere, and nothing of it reaches the served run."""
        created = now_ms()
        record = RunRecord(
            id=new_run_id(),
            status=RunStatus.QUEUED,
            tenant=served.tenant,
            key_id=served.key_id,
            access_groups=served.access_groups,
            question=served.question,
            top_k=served.top_k,
            mode=served.mode,
            created_at_ms=created,
            updated_at_ms=created,
            path=path,
            path_version=version,
            user_id=served.user_id,
            experiment=served.experiment,
            shadow_of=served.id,
        )
        store = _ShadowStore(self._store, record)
        executor = RunExecutor(
            store, self._backends, self._settings, self._paths, retrieval_only=retrieval_only
        )
        # A shadow is never queued, so no lease fences it: token 0 is never checked.
        await executor.execute(record.id, 0)


class _Deltas:
    """The answer's deltas on their way to the event log, in order, without the executor
    waiting for each write: the deltas that arrive while one write is in flight go
    together in the next (a burst of deltas is two round trips, not one each; the
    profile had Redis round trips as most of the gateway's CPU). Every write also reads
    the cancel flag; once it is seen, no further delta is written. A write's error
    (LeaseLost, Redis) is raised where the executor next adds or drains."""

    def __init__(self, store: ExecutorStore, run_id: str, token: int) -> None:
        self._store = store
        self._run_id = run_id
        self._token = token
        self._pending: list[RunEvent] = []
        self._writing: asyncio.Task[None] | None = None
        self._error: Exception | None = None
        self.cancelled = False

    def add(self, delta: RunEvent) -> bool:
        """Queue one delta; True when the run is already known to be cancelled."""
        if self._error is not None:
            raise self._error
        if self.cancelled:
            return True
        self._pending.append(delta)
        if self._writing is None:
            self._writing = asyncio.create_task(self._write())
        return False

    async def drain(self) -> bool:
        """Wait until every delta added is written (or the cancel flag stopped them);
        whether the run was cancelled."""
        await self.settle()
        if self._error is not None:
            raise self._error
        return self.cancelled

    async def settle(self) -> None:
        """Wait for the write in flight, whatever it ends with (its error is kept)."""
        if self._writing is not None:
            await asyncio.wait({self._writing})

    async def _write(self) -> None:
        try:
            while self._pending and not self.cancelled:
                batch, self._pending = self._pending, []
                if await self._store.append_all_checking_cancel(
                    self._run_id, batch, token=self._token
                ):
                    self.cancelled = True
        except Exception as exc:  # raised to the executor at its next add or drain
            self._error = exc
        finally:
            self._pending = []
            self._writing = None


class _ShadowStore:
    """The executor's store for a shadow run: the record in memory until it is saved,
    once, at the end; events dropped (a shadow is never streamed)."""

    def __init__(self, store: ExecutorStore, record: RunRecord) -> None:
        self._store = store
        self._record = record

    async def get(self, run_id: str) -> RunRecord | None:
        return self._record if run_id == self._record.id else None

    async def get_checking_cancel(self, run_id: str) -> tuple[RunRecord | None, bool]:
        return await self.get(run_id), False

    async def save(self, record: RunRecord, *, token: int, ttl_s: int | None = None) -> None:
        self._record = record

    async def append(self, run_id: str, event: RunEvent, *, token: int) -> str:
        return "0-0"

    async def save_and_append(self, record: RunRecord, event: RunEvent, *, token: int) -> str:
        self._record = record
        return "0-0"

    async def append_checking_cancel(self, run_id: str, event: RunEvent, *, token: int) -> bool:
        return False

    async def append_all_checking_cancel(
        self, run_id: str, events: Sequence[RunEvent], *, token: int
    ) -> bool:
        return False

    async def finish(
        self,
        record: RunRecord,
        event: RunEvent,
        *,
        token: int,
        record_ttl_s: int,
        event_ttl_s: int,
        preceding: RunEvent | None = None,
    ) -> str:
        await self._store.save_detached(record, ttl_s=record_ttl_s)
        return "0-0"

    async def save_detached(self, record: RunRecord, *, ttl_s: int) -> None:
        await self._store.save_detached(record, ttl_s=ttl_s)

    async def cite(self, record: RunRecord, *, ttl_s: int) -> None:
        await self._store.cite(record, ttl_s=ttl_s)

    async def reapply_redactions(self, record: RunRecord) -> bool:
        return await self._store.reapply_redactions(record)

    async def last_event_type(self, run_id: str) -> str | None:
        return None


def _rpc_failure(service: str, exc: grpc.aio.AioRpcError) -> RunFailedError:
    code = exc.code()
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return RunFailedError(f"{service}_timeout", f"the {service} did not answer in time")
    if code == grpc.StatusCode.UNAVAILABLE:
        return RunFailedError(f"{service}_unavailable", f"the {service} is unavailable")
    return RunFailedError(f"{service}_error", f"{service} error {code.name}: {exc.details()}")


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)
