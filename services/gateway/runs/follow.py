"""Following a run's event log to its end: the one wait loop of the SSE stream and /v1/ask."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Protocol

from services.gateway.runs.errors import RunWaitTimedOut
from services.gateway.runs.models import TERMINAL_EVENTS, RunRecord
from services.gateway.runs.store import Event

READ_BLOCK_MS = 1000  # how long one read waits for new events; bounds how late a stop is seen


class EventLog(Protocol):
    async def read_events(
        self, run_id: str, after: str, *, block_ms: int | None, count: int = 200
    ) -> list[Event]: ...

    async def get(self, run_id: str) -> RunRecord | None: ...


async def follow(
    store: EventLog,
    run_id: str,
    cursor: str,
    *,
    stop: Callable[[], bool] = lambda: False,
    timeout_s: float | None = None,
) -> AsyncIterator[Event]:
    """The run's events after ``cursor`` ("0-0" for all), as they are written, up to
    and including the terminal one.

    Also ends when the record says finished (or has expired) and nothing follows
    the cursor, and when ``stop()`` turns true (checked before every read). Raises
    RunWaitTimedOut once ``timeout_s`` has passed without an end.
    """
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        if stop():
            return
        block_ms = READ_BLOCK_MS
        if deadline is not None:
            remaining_ms = int((deadline - time.monotonic()) * 1000)
            if remaining_ms <= 0:
                assert timeout_s is not None
                raise RunWaitTimedOut(run_id, timeout_s)
            block_ms = min(remaining_ms, block_ms)
        events = await store.read_events(run_id, cursor, block_ms=block_ms)
        for event in events:
            yield event
            cursor = event.id
            if event.type in TERMINAL_EVENTS:
                return
        if not events:
            record = await store.get(run_id)
            if record is None or record.status.finished:
                # Finished and nothing after the cursor (or the run expired): done.
                for event in await store.read_events(run_id, cursor, block_ms=None):
                    yield event
                return
