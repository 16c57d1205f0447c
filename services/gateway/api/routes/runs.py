"""/v1/runs: accept a run, read its record, stream (and replay) its events."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncGenerator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Response
from sse_starlette import ServerSentEvent

from services.gateway import metrics
from services.gateway.api.deps import (
    Caller,
    Clients,
    Conversations,
    Feedback,
    Hub,
    Paths,
    Settings,
    Store,
    Streams,
)
from services.gateway.api.errors import ApiError
from services.gateway.api.schemas import (
    CancelAccepted,
    ErrorBody,
    FeedbackAccepted,
    FeedbackRequest,
    RunAccepted,
    RunRequest,
)
from services.gateway.api.sse import EventStreamResponse, exiting
from services.gateway.runs.events import StreamClosing
from services.gateway.runs.fanout import EventHub
from services.gateway.runs.feedback import give_feedback
from services.gateway.runs.models import EVENT_ID_PATTERN, RunRecord, is_event_id
from services.gateway.runs.store import Event
from services.gateway.runs.submit import (
    MAX_IDEMPOTENCY_KEY,
    cancel,
    is_run_id,
    owned,
    owned_run,
    submit,
)
from services.gateway.streams import Slot, StreamLimitReached, StreamSlots

# A stream refused at its limit: another may have ended by then.
STREAM_RETRY_AFTER_S = 5

router = APIRouter(prefix="/v1/runs", tags=["runs"])

ERRORS: dict[int | str, dict[str, object]] = {
    s: {"model": ErrorBody} for s in (400, 401, 403, 404, 413, 415, 422, 429, 431, 503)
}


# Declared in the spec, checked by the route itself (400 invalid_last_event_id, not a
# 422): the pattern cannot say that both parts are below 2^64, the description does.
# An empty cursor is no cursor (replay from the start), as the route reads it.
CURSOR_SCHEMA: dict[str, object] = {
    "pattern": f"^$|{EVENT_ID_PATTERN}",
    "description": "A stream event id '<ms>-<seq>', both parts below 2^64",
}


@router.post(
    "",
    status_code=202,
    response_model=RunAccepted,
    responses={
        200: {"model": RunAccepted, "description": "Replay of an idempotent request"},
        **ERRORS,
        409: {"model": ErrorBody, "description": "The conversation is at its turn or size limit"},
    },
    summary="Start a run",
)
async def create_run(
    body: RunRequest,
    caller: Caller,
    store: Store,
    settings: Settings,
    clients: Clients,
    paths: Paths,
    conversations: Conversations,
    response: Response,
    idempotency_key: Annotated[
        str | None,
        # Declared, not enforced here: submit() answers a precise 400 (not a 422).
        Header(
            alias="Idempotency-Key",
            json_schema_extra={"minLength": 1, "maxLength": MAX_IDEMPOTENCY_KEY},
        ),
    ] = None,
) -> RunAccepted:
    """Accept a question and return at once; the run executes apart from this connection.

    With an `Idempotency-Key`, a retried request returns the first run (status 200,
    `Idempotent-Replayed: true`); the same key with a different body is a 422.
    With `conversation_id` the question is a follow-up of that conversation (404 if it is
    not the caller's); without, a new conversation starts. Its id is in the response.
    """
    created = await submit(
        store, settings, clients, caller, body.ask(), idempotency_key, conversations, paths=paths
    )
    # A new run's record is the one just stored; a replayed one is read (and checked).
    record = created.record or await owned_run(store, caller, created.run_id)
    if not created.created:
        response.status_code = 200
        response.headers["Idempotent-Replayed"] = "true"
    response.headers["Location"] = f"/v1/runs/{record.id}"
    return RunAccepted(
        run_id=record.id,
        status=record.status,
        created_at_ms=record.created_at_ms,
        run_url=f"/v1/runs/{record.id}",
        events_url=f"/v1/runs/{record.id}/events",
        conversation_id=record.conversation_id,
    )


@router.post(
    "/{run_id}/cancel",
    status_code=202,
    response_model=CancelAccepted,
    responses={**ERRORS, 409: {"model": ErrorBody, "description": "The run has finished"}},
    summary="Cancel a run",
)
async def cancel_run(
    run_id: str, caller: Caller, store: Store, settings: Settings
) -> CancelAccepted:
    """Stop the work behind a run. The executor holding it stops at its next step, cancels
    the generator call and ends the stream with `run.cancelled`; a queued run never starts.
    Cancelling a finished run is a 409; cancelling twice is harmless."""
    record = await cancel(store, settings, caller, run_id)
    return CancelAccepted(run_id=run_id, status=record.status)


@router.post(
    "/{run_id}/feedback",
    response_model=FeedbackAccepted,
    responses={**ERRORS, 409: {"model": ErrorBody, "description": "The run has not ended"}},
    summary="Send feedback on a run's answer",
)
async def send_feedback(
    run_id: str,
    body: FeedbackRequest,
    caller: Caller,
    store: Store,
    feedback: Feedback,
    settings: Settings,
) -> FeedbackAccepted:
    """Thumbs up or down, and an optional comment, on an ended run: only with the key that
    started it (a widget key: from the same origin), else a 404 as for a missing run.
    One feedback per run: sending again replaces it (last write wins, `replaced: true`).
    Kept for `feedback_retention_s`; operators read it with `ragway feedback export`.
    The run's record (`GET /v1/runs/{id}`) shows the latest feedback in `feedback`."""
    run = await owned_run(store, caller, run_id)
    stored = await give_feedback(
        feedback, store, run, body.rating, body.comment, settings.feedback_retention_s
    )
    metrics.observe_feedback(stored)
    return FeedbackAccepted(
        run_id=run.id,
        rating=stored.record.rating,
        comment=stored.record.comment,
        at_ms=stored.record.at_ms,
        replaced=stored.previous is not None,
    )


@router.get("/{run_id}", response_model=RunRecord, responses=ERRORS, summary="Read a run's record")
async def get_run(run_id: str, caller: Caller, store: Store) -> RunRecord:
    return await owned_run(store, caller, run_id)


@router.get(
    "/{run_id}/events",
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "Server-Sent Events"},
        **ERRORS,
    },
    summary="Stream a run's events (SSE), replaying from Last-Event-ID",
)
async def stream_events(
    run_id: str,
    caller: Caller,
    store: Store,
    hub: Hub,
    settings: Settings,
    streams: Streams,
    last_event_id: Annotated[
        str | None, Header(alias="Last-Event-ID", json_schema_extra=CURSOR_SCHEMA)
    ] = None,
    after: Annotated[
        str | None,
        Query(description="Replay events after this id", json_schema_extra=CURSOR_SCHEMA),
    ] = None,
) -> EventStreamResponse:
    """Every event has an `id`. Reconnect with `Last-Event-ID` (or `?after=`) to get exactly
    the events after it. The stream ends after `run.completed` or `run.failed`.
    Heartbeats are SSE comments. `Last-Event-ID` wins over `?after=` (browsers keep the URL
    of the first connection and add the header on reconnect)."""
    # Both are checked, though the header wins: a malformed ?after= beside a header
    # was silently ignored, so a client never learnt that its cursor was wrong.
    for given in (last_event_id, after):
        if given is not None and given != "" and not is_event_id(given):
            raise ApiError(
                400,
                "invalid_last_event_id",
                f"Last-Event-ID {given[:64]!r} is not an event id of the form '<ms>-<seq>'"
                " (two decimal integers below 2^64)",
            )
    cursor = last_event_id if last_event_id is not None else after
    if not is_run_id(run_id):
        owned(None, caller, run_id)  # RunNotFound (404), without asking Redis
    # The record, the state of its events and the stream's place among the caller's
    # streams in one round trip: at 2,000 streams opening at once, each round trip of a
    # stream's opening is 2,000 on one event loop. The place is taken before the record
    # is looked at, and given back when the stream does not open after all.
    since = cursor if cursor != "0-0" else None
    async with store.pipeline() as pipe:
        n = store.queue_get_with_events(pipe, run_id, since)
        taking = streams.queue_take(pipe, caller)
        replies: list[Any] = await pipe.execute(raise_on_error=False)
    try:
        record, state = store.got_with_events(replies[:n], since)
        owned(record, caller, run_id)  # RunNotFound (404) before anything about its events
        where = f"read the run's final record at /v1/runs/{run_id}"
        if state == "expired":
            raise ApiError(
                410, "events_expired", f"the events of run {run_id} have expired; {where}"
            )
        if state == "unknown":
            raise ApiError(
                400,
                "unknown_last_event_id",
                f"{cursor!r} is not an event of run {run_id}; "
                f"omit Last-Event-ID to replay from the start, or {where}",
            )
    except BaseException:
        await streams.untake(taking, replies[n])
        raise
    try:
        slot = await streams.taken(taking, replies[n])
    except StreamLimitReached as exc:
        raise ApiError(
            429, "too_many_streams", str(exc), {"Retry-After": str(STREAM_RETRY_AFTER_S)}
        ) from None
    disconnected = asyncio.Event()
    return EventStreamResponse(
        _events(hub, run_id, cursor or "0-0", disconnected, settings.heartbeat_s, streams, slot),
        disconnected=disconnected,
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


async def _events(
    hub: EventHub,
    run_id: str,
    cursor: str,
    disconnected: asyncio.Event,
    heartbeat_s: float,
    streams: StreamSlots,
    slot: Slot | None,
) -> AsyncGenerator[bytes, None]:
    # The stream's place among the caller's open streams: renewed while it runs (by the
    # process's one renewer), given back when it ends however it ends.
    if slot is not None:
        streams.hold(slot)
    try:
        # Closed here, not left to the garbage collector: the hub lets go of the stream
        # as soon as the response closes this generator (a client gone, an error).
        following = _follow(hub, run_id, cursor, disconnected, heartbeat_s)
        async with contextlib.aclosing(following):
            async for chunk in following:
                yield chunk
    finally:
        if slot is not None:
            streams.let_go(slot)


# Events are encoded once for all the streams that follow a run (the hub hands each of
# them the same Event): 2,000 streams on one run encoded every event 2,000 times.
# Bounded: the streams of a run get an event within moments of each other, so the last
# thousand events (each a few hundred bytes to a few KB) are all that is ever reused.
@functools.lru_cache(maxsize=1024)
def sse_bytes(event: Event) -> bytes:
    """The event as its stream sends it (the stored data is what the event models
    serialised, runs/events.py: sent as is)."""
    return ServerSentEvent(data=event.data, event=event.type, id=event.id).encode()


HEARTBEAT = ServerSentEvent(comment="heartbeat").encode()


async def _follow(
    hub: EventHub, run_id: str, cursor: str, disconnected: asyncio.Event, heartbeat_s: float
) -> AsyncGenerator[bytes, None]:
    closing = False

    def stop() -> bool:  # asked by the hub's ticker: True ends the stream here
        nonlocal closing
        if disconnected.is_set():  # nobody to say goodbye to
            return True
        closing = exiting()
        return closing

    # The events that are there at once go out in one chunk: every chunk costs a send
    # through the middleware and a socket write, and a stream that joins a run late
    # (2,000 streams opening on one run) has its whole backlog there at once. An empty
    # batch is the hub's heartbeat: the stream was quiet for heartbeat_s.
    batches = hub.follow_batches(run_id, cursor, stop=stop, heartbeat_s=heartbeat_s)
    async with contextlib.aclosing(batches):
        async for batch in batches:
            if not batch:
                yield HEARTBEAT
                continue
            yield b"".join(map(sse_bytes, batch))  # one event: join hands back its bytes
            cursor = batch[-1].id
    if closing:
        # This replica is stopping: tell the client to resume elsewhere. No id,
        # so its Last-Event-ID stays the last real event; retry: sets the delay.
        event = StreamClosing(reason="server shutting down", last_event_id=cursor)
        yield ServerSentEvent(data=event.data(), event=event.TYPE.value, retry=1000).encode()
