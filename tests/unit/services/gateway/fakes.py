"""Small in-memory stand-ins for the run store and the gRPC dependencies.

They keep what the real ones keep (records, one event log per run, a cancel flag,
idempotency keys) and nothing of Redis, so the executor and submit run in-process.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import Any

import grpc

from ragway.v1 import generator_pb2, retriever_pb2
from services.gateway.runs.conversations import ConversationMeta, Turn
from services.gateway.runs.errors import IdempotencyConflict
from services.gateway.runs.events import RunAcceptedEvent, RunEvent
from services.gateway.runs.models import RunFeedback, RunRecord, RunStatus, new_run_id, now_ms
from services.gateway.runs.store import Created, Event, LeaseLost


class FakeStore:
    def __init__(self) -> None:
        self.records: dict[str, RunRecord] = {}
        self.events: dict[str, list[Event]] = {}
        self.cancelled: set[str] = set()
        # run id -> the documents it was indexed under, the events before that, the TTL
        self.cited: dict[str, tuple[list[str], list[str], int]] = {}
        self.reapplied: list[tuple[str, RunStatus]] = []
        self._idem: dict[str, tuple[str, str]] = {}
        self._seq = 0
        # Called after each append: a test's hook into the run between its steps.
        self.on_append: Callable[[str, RunEvent], None] = lambda run_id, event: None
        # The lease token that may write each run; a run not in it takes any token.
        self.tokens: dict[str, int] = {}
        # The events of each batched write (append_all_checking_cancel), in order.
        self.writes: list[list[str]] = []

    async def create(
        self,
        record: RunRecord,
        request_fingerprint: dict[str, Any],
        idempotency_key: str | None,
        idempotency_ttl_s: int,
    ) -> Created:
        fingerprint = json.dumps(request_fingerprint, sort_keys=True)
        if idempotency_key is not None:
            earlier = self._idem.get(f"{record.key_id}:{idempotency_key}")
            if earlier is not None:
                if earlier[1] != fingerprint:
                    raise IdempotencyConflict(earlier[0])
                return Created(run_id=earlier[0], created=False)
            self._idem[f"{record.key_id}:{idempotency_key}"] = (record.id, fingerprint)
        self.records[record.id] = record.model_copy(deep=True)
        self._add(record.id, RunAcceptedEvent(run_id=record.id, question=record.question))
        return Created(run_id=record.id, created=True, record=record.model_copy(deep=True))

    async def get(self, run_id: str) -> RunRecord | None:
        record = self.records.get(run_id)
        return None if record is None else record.model_copy(deep=True)

    async def get_checking_cancel(self, run_id: str) -> tuple[RunRecord | None, bool]:
        return await self.get(run_id), run_id in self.cancelled

    def _fence(self, run_id: str, token: int) -> None:
        if self.tokens.get(run_id, token) != token:
            raise LeaseLost(run_id)

    async def save(self, record: RunRecord, *, token: int, ttl_s: int | None = None) -> None:
        self._fence(record.id, token)
        self.records[record.id] = record.model_copy(deep=True)

    async def save_detached(self, record: RunRecord, *, ttl_s: int) -> None:
        self.records[record.id] = record.model_copy(deep=True)

    async def cite(self, record: RunRecord, *, ttl_s: int) -> None:
        docs = sorted({s.document_id for s in record.sources})
        self.cited[record.id] = (docs, [e.type for e in self.events.get(record.id, [])], ttl_s)

    async def reapply_redactions(self, record: RunRecord) -> bool:
        # What the final write left: the executor must redact again after it.
        self.reapplied.append((record.id, self.records[record.id].status))
        return False

    async def attach_feedback(self, run_id: str, feedback: RunFeedback) -> RunRecord | None:
        record = self.records.get(run_id)
        if record is None:
            return None
        record.feedback = feedback
        return record.model_copy(deep=True)

    async def append(self, run_id: str, event: RunEvent, *, token: int) -> str:
        self._fence(run_id, token)
        event_id = self._add(run_id, event)
        self.on_append(run_id, event)
        return event_id

    async def append_checking_cancel(self, run_id: str, event: RunEvent, *, token: int) -> bool:
        await self.append(run_id, event, token=token)
        return run_id in self.cancelled

    async def append_all_checking_cancel(
        self, run_id: str, events: Sequence[RunEvent], *, token: int
    ) -> bool:
        self.writes.append([e.TYPE.value for e in events])
        for event in events:
            await self.append(run_id, event, token=token)
        return run_id in self.cancelled

    async def save_and_append(self, record: RunRecord, event: RunEvent, *, token: int) -> str:
        await self.save(record, token=token)
        return await self.append(record.id, event, token=token)

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
        self._fence(record.id, token)
        if preceding is not None:
            self._add(record.id, preceding)
            self.on_append(record.id, preceding)
        self.records[record.id] = record.model_copy(deep=True)
        return self._add(record.id, event)

    async def last_event_type(self, run_id: str) -> str | None:
        log = self.events.get(run_id)
        return log[-1].type if log else None

    async def request_cancel(self, run_id: str, ttl_s: int) -> None:
        self.cancelled.add(run_id)

    async def cancel_requested(self, run_id: str) -> bool:
        return run_id in self.cancelled

    def types(self, run_id: str) -> list[str]:
        return [e.type for e in self.events.get(run_id, [])]

    def data(self, run_id: str, type_: str) -> list[dict[str, Any]]:
        return [json.loads(e.data) for e in self.events.get(run_id, []) if e.type == type_]

    def _add(self, run_id: str, event: RunEvent) -> str:
        self._seq += 1
        event_id = f"1700000000000-{self._seq}"
        self.events.setdefault(run_id, []).append(Event(event_id, event.TYPE.value, event.data()))
        return event_id


def queued_run(store: FakeStore, question: str = "How do I resume a stream?") -> RunRecord:
    created = now_ms()
    record = RunRecord(
        id=new_run_id(),
        status=RunStatus.QUEUED,
        tenant="acme",
        key_id="k1",
        question=question,
        top_k=3,
        mode="hybrid",
        created_at_ms=created,
        updated_at_ms=created,
    )
    store.records[record.id] = record
    store.events[record.id] = []
    return record


def rpc_error(code: grpc.StatusCode = grpc.StatusCode.UNAVAILABLE) -> grpc.aio.AioRpcError:
    # The error grpc.aio raises when a call fails: the same class, not a stand-in.
    error: grpc.aio.AioRpcError = grpc.aio.AioRpcError(
        code, grpc.aio.Metadata(), grpc.aio.Metadata(), details="down"
    )
    return error


def hit(n: int, text: str = "") -> retriever_pb2.SearchHit:
    return retriever_pb2.SearchHit(
        chunk_id=f"c{n}",
        document_id=f"d{n}",
        title=f"Doc {n}",
        section="Intro",
        url=f"https://kb/{n}",
        version="1",
        score=1.0 / n,
        text=text or f"Passage {n} says something distinct about topic {n}.",
    )


def search_reply(
    hits: int = 2, degraded: Sequence[tuple[str, str]] = ()
) -> retriever_pb2.SearchResponse:
    return retriever_pb2.SearchResponse(
        build_id="build-1",
        hits=[hit(n) for n in range(1, hits + 1)],
        degraded=[retriever_pb2.Degradation(stage=s, reason=r) for s, r in degraded],
        timings=[retriever_pb2.StageTiming(stage="sparse", ms=1.25)],
    )


def delta(text: str, index: int) -> generator_pb2.GenerateResponse:
    return generator_pb2.GenerateResponse(delta=generator_pb2.TextDelta(text=text, index=index))


def final(
    answer: str, cited: Sequence[int], degraded: Sequence[tuple[str, str]] = ()
) -> generator_pb2.GenerateResponse:
    return generator_pb2.GenerateResponse(
        final=generator_pb2.GenerateFinal(
            answer=answer,
            cited_passages=list(cited),
            verdict=generator_pb2.GROUNDING_VERDICT_GROUNDED,
            evidence_score=0.81234,
            model="extractive-v1",
            prompt_version="extractive-policy-1",
            degraded=[generator_pb2.GeneratorDegradation(code=c, detail=d) for c, d in degraded],
        )
    )


ANSWER = [delta("Resume with ", 0), delta("Last-Event-ID [1].", 1)]


class FakeBackends:
    """The executor's Backends: one search reply, and the generator's messages."""

    def __init__(
        self,
        reply: retriever_pb2.SearchResponse | None = None,
        messages: Sequence[generator_pb2.GenerateResponse] | None = None,
    ) -> None:
        self.reply = reply or search_reply()
        self.messages = (
            list(messages) if messages is not None else [*ANSWER, final("Resume with [1].", [1])]
        )
        self.requests: list[generator_pb2.GenerateRequest] = []
        self.searches: list[retriever_pb2.SearchRequest] = []
        self.closed = False

    async def search(
        self, request: retriever_pb2.SearchRequest, timeout_s: float
    ) -> retriever_pb2.SearchResponse:
        self.searches.append(request)
        return self.reply

    def generate(
        self, request: generator_pb2.GenerateRequest, timeout_s: float
    ) -> AsyncGenerator[generator_pb2.GenerateResponse, None]:
        self.requests.append(request)
        return self._stream()

    async def _stream(self) -> AsyncGenerator[generator_pb2.GenerateResponse, None]:
        try:
            for message in self.messages:
                await asyncio.sleep(0)
                yield message
        finally:
            self.closed = True


class FakeCall:
    """A grpc.aio server-stream call: messages, then maybe an error; records cancel()."""

    def __init__(
        self,
        messages: Sequence[generator_pb2.GenerateResponse],
        error: grpc.aio.AioRpcError | None = None,
    ) -> None:
        self._messages = list(messages)
        self._error = error
        self.cancelled = False

    def __aiter__(self) -> AsyncIterator[generator_pb2.GenerateResponse]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[generator_pb2.GenerateResponse]:
        for message in self._messages:
            yield message
        if self._error is not None:
            raise self._error

    def cancel(self) -> bool:
        self.cancelled = True
        return True


class FakeGeneratorStub:
    """Hands out the prepared calls in order, one per Generate."""

    def __init__(self, calls: Sequence[FakeCall]) -> None:
        self.calls = list(calls)
        self.made: list[FakeCall] = []
        self.breaker_state = ""  # the generator breaker's state after the run

    def Generate(self, request: generator_pb2.GenerateRequest, timeout: float) -> FakeCall:
        call = self.calls[len(self.made)]
        self.made.append(call)
        return call


class FakeConversations:
    """The conversation store in memory: owner metadata and turns per conversation."""

    def __init__(self) -> None:
        self.metas: dict[str, ConversationMeta] = {}
        self.turn_lists: dict[str, list[Turn]] = {}

    async def open(self, conversation_id: str, tenant: str, key_id: str, ttl_s: int) -> None:
        now = now_ms()
        self.metas[conversation_id] = ConversationMeta(
            id=conversation_id, tenant=tenant, key_id=key_id, created_at_ms=now, updated_at_ms=now
        )
        self.turn_lists[conversation_id] = []

    async def meta(self, conversation_id: str) -> ConversationMeta | None:
        meta = self.metas.get(conversation_id)
        if meta is None:
            return None
        turns = self.turn_lists[conversation_id]
        return meta.model_copy(
            update={"turn_count": len(turns), "chars": sum(t.chars for t in turns)}
        )

    async def turns(self, conversation_id: str) -> list[Turn]:
        return list(self.turn_lists.get(conversation_id, []))

    async def append(self, conversation_id: str, turn: Turn, ttl_s: int) -> bool:
        turns = self.turn_lists.get(conversation_id)
        if turns is None or any(t.run_id == turn.run_id for t in turns):
            return False
        turns.append(turn)
        return True
