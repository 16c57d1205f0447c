"""The run queue's consumer: takes runs from Redis, holds their leases, acks them when done.

    XREADGROUP ragway:runs:queue ─▶ acquire (lease token) ─▶ execute(run_id, token) ─▶ XACK
        └─ lease: touch every lease/3 while it runs; a touch refused: the lease is lost
    XAUTOCLAIM entries idle longer than the lease: runs whose executor died (or froze)

Every write of the run is fenced by the token (runs/store.py): an executor that
froze past its lease and wakes after another took over gets LeaseLost, stops,
and does not ack (the entry is the new holder's).

Which run does what is the executor's business (runs/executor.py); this module
only decides when a run starts, that a live run keeps its lease, and that a
run is acknowledged once it finished (a crash leaves it pending for another).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Protocol

from redis.exceptions import RedisError

from ragway import telemetry
from services.gateway.runs.store import LeaseLost, QueuedRun

log = logging.getLogger(__name__)


class QueueStore(Protocol):
    async def ensure_queue(self) -> None: ...

    async def next_runs(self, consumer: str, count: int, block_ms: int) -> list[QueuedRun]: ...

    async def reclaim(self, consumer: str, min_idle_ms: int, count: int) -> list[QueuedRun]: ...

    async def acquire(self, consumer: str, entry_id: str, run_id: str) -> int | None: ...

    async def touch(self, consumer: str, entry_id: str, run_id: str, token: int) -> bool: ...

    async def ack(self, entry_ids: Sequence[str]) -> None: ...


class RunQueue:
    def __init__(
        self,
        store: QueueStore,
        execute: Callable[[str, int], Coroutine[Any, Any, None]],
        *,
        consumer: str,
        concurrency: int,
        lease_s: float,
    ) -> None:
        self._store = store
        self._execute = execute
        self._consumer = consumer
        self._limit = concurrency
        self._lease_s = lease_s
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self, stop: asyncio.Event) -> None:
        """Take runs from the queue until ``stop`` is set; then finish what was taken."""
        lease_ms = int(self._lease_s * 1000)
        loop = asyncio.get_running_loop()
        next_reclaim = 0.0
        queue_ready = False
        while not stop.is_set():
            if len(self._tasks) >= self._limit:
                await asyncio.wait(self._tasks, return_when=asyncio.FIRST_COMPLETED)
                continue
            try:
                # Polls are not traced: each would be a trace of its own, twice a second.
                with telemetry.untraced():
                    if not queue_ready:
                        await self._store.ensure_queue()
                        queue_ready = True
                    entries: list[QueuedRun] = []
                    if loop.time() >= next_reclaim:
                        # Runs whose executor died: any replica finishes them.
                        entries = await self._store.reclaim(
                            self._consumer, lease_ms, self._limit - len(self._tasks)
                        )
                        next_reclaim = loop.time() + self._lease_s / 3
                        for entry in entries:
                            log.warning("reclaimed run", extra={"run_id": entry.run_id})
                    if not entries:
                        entries = await self._store.next_runs(
                            self._consumer, count=self._limit - len(self._tasks), block_ms=500
                        )
            except (RedisError, OSError) as exc:  # Redis restarting: back off, retry
                log.warning("queue read failed", extra={"error": str(exc)})
                queue_ready = False
                await asyncio.sleep(0.5)
                continue
            for entry in entries:
                task = asyncio.create_task(self._execute_and_ack(entry))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        if self._tasks:
            await asyncio.wait(self._tasks)

    async def _execute_and_ack(self, entry: QueuedRun) -> None:
        entry_id, run_id = entry.entry_id, entry.run_id
        try:
            token = await self._store.acquire(self._consumer, entry_id, run_id)
        except (RedisError, OSError) as exc:  # pending still: reclaimed after the lease
            log.warning("lease not acquired", extra={"run_id": run_id, "error": str(exc)})
            return
        if token is None:  # another replica reclaimed the entry meanwhile: it is theirs
            log.warning("run taken over before it started", extra={"run_id": run_id})
            return
        work: asyncio.Task[None] = asyncio.create_task(self._traced(entry, token))
        lease = asyncio.create_task(self._hold_lease(entry_id, run_id, token, work))
        try:
            await asyncio.wait({work})
            error = None if work.cancelled() else work.exception()
            if work.cancelled() or isinstance(error, LeaseLost):
                # Taken over while this executor was frozen: its late writes were
                # refused (or the heartbeat found the lease lost and stopped it). No
                # ack: the entry belongs to the new holder.
                log.warning("lease lost; run left to its new holder", extra={"run_id": run_id})
            elif error is not None:  # the entry stays pending: another executor reclaims it
                log.error("run execution crashed", extra={"run_id": run_id}, exc_info=error)
            else:
                with telemetry.untraced():
                    await self._store.ack([entry_id])
        except (RedisError, OSError) as exc:  # not acked: done again after the lease
            log.warning("run not acknowledged", extra={"run_id": run_id, "error": str(exc)})
        finally:
            lease.cancel()
            work.cancel()  # no-op once done; stops it if this task itself is cancelled

    async def _traced(self, entry: QueuedRun, token: int) -> None:
        # Spans of the run join the trace of the request that queued it.
        with (
            telemetry.continue_trace(entry.traceparent, run_id=entry.run_id),
            telemetry.tracer.start_as_current_span("ragway.run"),
        ):
            await self._execute(entry.run_id, token)

    async def _hold_lease(
        self, entry_id: str, run_id: str, token: int, work: asyncio.Task[None]
    ) -> None:
        """Touch the queue entry well within the lease, so no replica steals a live run;
        stop the work once the lease is found lost (it could write nothing anyway)."""
        while True:
            await asyncio.sleep(self._lease_s / 3)
            try:
                with telemetry.untraced():
                    held = await self._store.touch(self._consumer, entry_id, run_id, token)
            except (RedisError, OSError) as exc:
                log.warning("lease heartbeat failed", extra={"error": str(exc)})
                continue
            if not held:
                work.cancel()
                return
