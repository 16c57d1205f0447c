"""One reader per gateway process for the events of every run that has open streams.

Before, each SSE stream (and each /v1/ask) polled Redis with its own blocking
XREAD: one pooled connection and one round trip a second per stream, and 2,000
streams on one run read the same events 2,000 times. Now the ``EventHub`` keeps
one blocking XREAD over the event keys of all *watched* runs (a run is watched
while at least one stream follows it) on a connection of its own, and hands each
event it reads to every follower of that run in memory. Redis connections per
process no longer grow with the number of streams.

    stream ─┐ follow(run, cursor)                    ┌─ XREAD BLOCK over
    stream ─┼──▶ subscriber queues (bounded) ◀─ hub ─┤  ragway:run:{id}:events …
    ask    ─┘                                        └─ + this hub's wake key

A follower gets the run's events strictly after its cursor, in order, up to and
including the terminal one; it also ends when the record says finished (or has
expired) and nothing follows, when its ``stop()`` turns true, and with
RunWaitTimedOut after ``timeout_s``:

- A follower whose cursor is behind the watch catches up first, from the events
  the hub read since it began watching the run (kept in memory, bounded), or with
  one XRANGE when its cursor is older than that; the live events it was handed
  meanwhile are deduplicated by id.
- A follower whose queue is full (a client that does not read) is dropped: its
  ``follow`` ends without a terminal event, and nobody else waits for it. The
  events stay in Redis; the client resumes with Last-Event-ID.
- A new watch wakes the blocked read through a per-hub wake stream, so a run's
  first follower waits no longer than one round trip for its first event.
- Redis errors in the reader are logged and retried; followers keep waiting (their
  streams keep their heartbeats) and continue where the hub's cursors were.

Heartbeats come from the hub too: a follower that asked for them (``heartbeat_s``) and
was handed nothing for that long gets an empty batch from the ticker that already looks
at every follower, so 2,000 streams need no ping task of their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import time
import uuid
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as redis
from redis.exceptions import RedisError

from ragway import telemetry
from services.gateway import metrics
from services.gateway.runs.errors import RunWaitTimedOut
from services.gateway.runs.models import TERMINAL_EVENTS, RunRecord
from services.gateway.runs.store import Event, events_key, run_key

log = logging.getLogger(__name__)

READ_BLOCK_MS = 1000  # how long one read waits for new events; bounds how late an end is seen

# How often followers' stop() and deadlines are looked at: within a read's time, as before.
TICK_S = READ_BLOCK_MS / 1000 / 4
# After a Redis error the reader waits this long before it reads again.
RETRY_S = 0.5
# The wake stream outlives a hub that died by this; a live hub renews it with every wake.
WAKE_TTL_S = 3600


class _End(enum.Enum):
    FINISHED = "finished"  # the record says finished (or expired) and nothing follows
    STOPPED = "stopped"  # stop() turned true
    TIMED_OUT = "timed_out"  # timeout_s passed
    DROPPED = "dropped"  # the follower's queue overflowed: a client that does not read
    CLOSED = "closed"  # the hub closed (the process stops)


class _Beat(enum.Enum):
    HEARTBEAT = "heartbeat"  # handed to a follower that was handed nothing for heartbeat_s


def _order(event_id: str) -> tuple[int, int]:
    ms, _, seq = event_id.partition("-")
    return int(ms), int(seq or 0)


@dataclass(eq=False)
class _Follower:
    capacity: int
    stop: Callable[[], bool]
    deadline: float | None
    heartbeat_s: float | None = None
    items: deque[Event | _End | _Beat] = field(default_factory=deque)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    ended: bool = False
    # When the follower was last handed something (the ticker's clock): its heartbeat is due
    # heartbeat_s after that.
    handed_at: float = field(default_factory=time.monotonic)

    def offer(self, event: Event) -> bool:
        """Queue one event; False when the queue is full (the follower is then dropped)."""
        if len(self.items) >= self.capacity:
            return False
        self.items.append(event)
        self.ready.set()
        return True

    def end(self, why: _End, *, discard: bool = False) -> None:
        if self.ended:
            return
        self.ended = True
        if discard:  # a dropped follower's backlog would only reach a client that does not read
            self.items.clear()
        self.items.append(why)
        self.ready.set()

    def beat(self, now: float) -> None:
        """A heartbeat, when one is due: nothing queued and nothing handed for a while."""
        if self.heartbeat_s is None or self.items or now - self.handed_at < self.heartbeat_s:
            return
        self.items.append(_Beat.HEARTBEAT)
        self.ready.set()
        self.handed_at = now

    async def drain(self) -> list[Event | _End | _Beat]:
        """Everything queued, once something is: a burst goes to its stream in one write."""
        while not self.items:
            self.ready.clear()
            await self.ready.wait()
        items = list(self.items)
        self.items.clear()
        if self.heartbeat_s is not None:
            self.handed_at = time.monotonic()
        return items


@dataclass(eq=False)
class _Watch:
    """One run the hub reads: its cursor, followers, and the events read since ``start``."""

    run_id: str
    start: str  # recent holds exactly the events in (start, cursor]
    cursor: str
    followers: set[_Follower] = field(default_factory=set)
    recent: deque[Event] = field(default_factory=deque)
    quiet_since: float = field(default_factory=time.monotonic)

    def remember(self, event: Event, limit: int) -> None:
        self.recent.append(event)
        self.cursor = event.id
        self.quiet_since = time.monotonic()
        while len(self.recent) > limit:
            self.start = self.recent.popleft().id


class EventHub:
    """Fans the events of watched runs out to their followers; one per gateway process.

    ``reader`` is a client of its own (one connection is enough: the hub issues one
    command at a time); ``client`` is the shared pool, for the few catch-up reads.
    """

    def __init__(
        self,
        reader: redis.Redis,
        client: redis.Redis,
        *,
        buffer_events: int,
        recent_events: int,
        read_count: int = 200,
    ) -> None:
        self._reader = reader
        self._r = client
        self._buffer = buffer_events
        self._recent = recent_events
        # A read hands a stream at most a quarter of its buffer per run, so a client that
        # reads is never dropped for one burst of events.
        self._count = max(1, min(read_count, buffer_events // 4))
        self._watches: dict[str, _Watch] = {}
        self._followers: set[_Follower] = set()
        self._wake_key = f"ragway:gateway:wake:{uuid.uuid4().hex}"
        self._wake_cursor = "0-0"
        self._blocked_on: frozenset[str] = frozenset()  # the runs the current read includes
        self._waking: asyncio.Task[None] | None = None
        self._reads = 0  # blocking reads issued, so a wake is sent once per read
        self._changed = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def reader(self) -> redis.Redis:
        return self._reader

    @property
    def followers(self) -> int:
        return len(self._followers)

    @property
    def watched_runs(self) -> int:
        return len(self._watches)

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._read_loop(), name="event-hub-reader"),
            asyncio.create_task(self._tick_loop(), name="event-hub-ticker"),
        ]

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for follower in list(self._followers):
            follower.end(_End.CLOSED)
        self._watches.clear()
        with contextlib.suppress(RedisError, OSError):
            await self._r.delete(self._wake_key)

    async def follow(
        self,
        run_id: str,
        cursor: str,
        *,
        stop: Callable[[], bool] = lambda: False,
        timeout_s: float | None = None,
    ) -> AsyncIterator[Event]:
        """The run's events after ``cursor`` ("0-0" for all), as they are written, up to
        and including the terminal one (see the module's docstring for the other ends)."""
        batches = self.follow_batches(run_id, cursor, stop=stop, timeout_s=timeout_s)
        async with contextlib.aclosing(batches):
            async for batch in batches:
                for event in batch:
                    yield event

    async def follow_batches(
        self,
        run_id: str,
        cursor: str,
        *,
        stop: Callable[[], bool] = lambda: False,
        timeout_s: float | None = None,
        heartbeat_s: float | None = None,
    ) -> AsyncGenerator[list[Event], None]:
        """``follow``'s events, in lists of those that are there at once: the backlog of
        a stream that joins late, then each burst the hub handed over while the stream
        was writing. A stream sends each list in one write, not one write per event.

        With ``heartbeat_s``, an empty list is a heartbeat: the stream was handed nothing
        (no event, no heartbeat) for ``heartbeat_s``, to within the hub's tick (TICK_S),
        and sends its heartbeat comment. Without it (``follow``, /v1/ask) no list is empty.
        """
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        if stop():
            return
        follower = _Follower(self._buffer, stop, deadline, heartbeat_s)
        watch, backlog = self._subscribe(run_id, cursor, follower)
        try:
            if backlog is None:  # older than what the hub kept: one read of the gap
                backlog = await self._range(run_id, cursor, watch.cursor)
            batch = _upto_terminal(backlog)
            if batch:
                yield batch
                cursor = batch[-1].id
                if batch[-1].type in TERMINAL_EVENTS:
                    return
            seen = _order(cursor)
            while True:
                items = await follower.drain()
                batch, end, beat = [], None, False
                for item in items:
                    if item is _Beat.HEARTBEAT:
                        beat = True
                        continue
                    if isinstance(item, _End):
                        end = item
                        break
                    order = _order(item.id)
                    if order <= seen:
                        continue  # also in the backlog
                    seen = order
                    batch.append(item)
                    if item.type in TERMINAL_EVENTS:
                        break
                if batch:
                    yield batch
                    cursor = batch[-1].id
                    if batch[-1].type in TERMINAL_EVENTS:
                        return
                elif beat and end is None:
                    yield []  # events would have kept the connection alive as well
                if end is _End.TIMED_OUT:
                    assert timeout_s is not None
                    raise RunWaitTimedOut(run_id, timeout_s)
                if end is _End.DROPPED:
                    log.info(
                        "stream dropped: its client does not read",
                        extra={"run_id": run_id, "last_event_id": cursor},
                    )
                if end is not None:
                    return
        finally:
            self._unsubscribe(watch, follower)

    def _subscribe(
        self, run_id: str, cursor: str, follower: _Follower
    ) -> tuple[_Watch, list[Event] | None]:
        """Join (or open) the run's watch; the events between ``cursor`` and the watch's
        cursor come back as the backlog (None: older than the hub kept, read them).

        No await in here: the backlog and the live events that follow it meet exactly.
        """
        watch = self._watches.get(run_id)
        if watch is None:
            watch = self._watches[run_id] = _Watch(run_id, start=cursor, cursor=cursor)
            self._wake()
        watch.followers.add(follower)
        self._followers.add(follower)
        metrics.STREAM_FOLLOWERS.set(len(self._followers))
        position = _order(cursor)
        if position >= _order(watch.cursor):
            return watch, []
        if position >= _order(watch.start):
            return watch, [event for event in watch.recent if _order(event.id) > position]
        return watch, None

    def _unsubscribe(self, watch: _Watch, follower: _Follower) -> None:
        follower.ended = True
        watch.followers.discard(follower)
        self._followers.discard(follower)
        metrics.STREAM_FOLLOWERS.set(len(self._followers))
        if not watch.followers and self._watches.get(watch.run_id) is watch:
            del self._watches[watch.run_id]

    async def _range(self, run_id: str, after: str, upto: str) -> list[Event]:
        events: list[Event] = []
        while True:
            entries: Any = await self._r.xrange(
                events_key(run_id), min=f"({after}", max=upto, count=self._count
            )
            events.extend(_event(entry_id, fields) for entry_id, fields in entries)
            if len(entries) < self._count:
                return events
            after = events[-1].id

    def _wake(self) -> None:
        """Make the blocked read include the new watch (a write to this hub's wake key)."""
        self._changed.set()
        if self._waking is None and self._blocked_on:
            self._waking = asyncio.create_task(self._send_wakes(), name="event-hub-wake")

    async def _send_wakes(self) -> None:
        try:
            # Once per blocked read that misses a watch: a watch opened while the last
            # wake was on its way may have missed the read that wake ended.
            woken = -1
            while (
                self._blocked_on
                and self._reads != woken
                and not self._blocked_on.issuperset(self._watches)
            ):
                woken = self._reads
                with telemetry.untraced():
                    async with self._r.pipeline(transaction=False) as pipe:
                        pipe.xadd(self._wake_key, {"w": "1"}, maxlen=1, approximate=False)
                        pipe.expire(self._wake_key, WAKE_TTL_S)
                        await pipe.execute()
                await asyncio.sleep(0)
        except (RedisError, OSError) as exc:  # the read returns within READ_BLOCK_MS anyway
            log.debug("event hub wake failed", extra={"error": str(exc)})
        finally:
            self._waking = None

    async def _read_loop(self) -> None:
        while True:
            if not self._watches:
                self._changed.clear()
                await self._changed.wait()
                continue
            try:
                with telemetry.untraced():
                    await self._read_once()
            except (RedisError, OSError) as exc:
                log.warning("event hub read failed; retrying", extra={"error": str(exc)})
                await asyncio.sleep(RETRY_S)
            except Exception:  # a bug: say so loudly, but never leave every stream hanging
                log.exception("event hub read crashed; retrying")
                await asyncio.sleep(RETRY_S)

    async def _read_once(self) -> None:
        watches = dict(self._watches)
        streams: dict[Any, Any] = {events_key(w.run_id): w.cursor for w in watches.values()}
        streams[self._wake_key] = self._wake_cursor
        by_key = {events_key(run_id): watch for run_id, watch in watches.items()}
        self._changed.clear()
        self._reads += 1
        self._blocked_on = frozenset(watches)
        try:
            reply: Any = await self._reader.xread(streams, count=self._count, block=READ_BLOCK_MS)
        finally:
            self._blocked_on = frozenset()
        for key, entries in reply or []:
            name = key.decode() if isinstance(key, bytes) else key
            if name == self._wake_key:
                self._wake_cursor = _text(entries[-1][0])
                continue
            watch = by_key.get(name)
            if watch is not None:
                self._deliver(watch, [_event(entry_id, fields) for entry_id, fields in entries])
        await self._end_finished(watches)

    def _deliver(self, watch: _Watch, events: list[Event]) -> None:
        for event in events:
            watch.remember(event, self._recent)
            for follower in list(watch.followers):
                if not follower.ended and not follower.offer(event):
                    follower.end(_End.DROPPED, discard=True)
                    watch.followers.discard(follower)
                    metrics.STREAMS_DROPPED.inc()
            if event.type in TERMINAL_EVENTS and self._watches.get(watch.run_id) is watch:
                # Nothing follows a terminal event: stop reading this run. Its followers
                # end on the event; a later one opens a new watch from its own cursor.
                del self._watches[watch.run_id]
                return

    async def _end_finished(self, watches: dict[str, _Watch]) -> None:
        """End the followers of quiet runs whose record says finished (or has expired).

        A run quiet for a whole read has its record looked at;
        finished and nothing after the cursor (a log that lost its terminal event, or an
        expired run) is the end. One pipelined GET for all quiet runs, not one per stream.
        """
        now = time.monotonic()
        quiet = [
            w
            for w in watches.values()
            if now - w.quiet_since >= READ_BLOCK_MS / 1000 and self._watches.get(w.run_id) is w
        ]
        if not quiet:
            return
        async with self._r.pipeline(transaction=False) as pipe:
            for watch in quiet:
                pipe.get(run_key(watch.run_id))
            raws: list[Any] = await pipe.execute()
        for watch, raw in zip(quiet, raws, strict=True):
            watch.quiet_since = now
            if raw is not None and not RunRecord.model_validate_json(raw).status.finished:
                continue
            # Finished: what is still after the cursor is the last of it.
            self._deliver(watch, await self._range(watch.run_id, watch.cursor, "+"))
            if self._watches.get(watch.run_id) is watch:
                del self._watches[watch.run_id]
            for follower in list(watch.followers):
                follower.end(_End.FINISHED)

    async def _tick_loop(self) -> None:
        """Look at every follower's stop() and deadline, whatever Redis is doing, and hand
        a heartbeat to those that asked for one and were handed nothing for that long."""
        while True:
            await asyncio.sleep(TICK_S)
            now = time.monotonic()
            for follower in list(self._followers):
                if follower.ended:
                    continue
                if follower.stop():
                    follower.end(_End.STOPPED)
                elif follower.deadline is not None and now >= follower.deadline:
                    follower.end(_End.TIMED_OUT)
                else:
                    follower.beat(now)


def _upto_terminal(events: list[Event]) -> list[Event]:
    """The events up to and including the first terminal one (nothing follows it)."""
    for i, event in enumerate(events):
        if event.type in TERMINAL_EVENTS:
            return events[: i + 1]
    return events


def _event(entry_id: bytes | str, fields: dict[bytes, bytes]) -> Event:
    return Event(id=_text(entry_id), type=_text(fields[b"type"]), data=_text(fields[b"data"]))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
