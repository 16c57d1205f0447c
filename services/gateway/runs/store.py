"""Runs in Redis: the record, the per-run event stream, the work queue, idempotency.

    ragway:run:{id}            JSON run record
    ragway:run:{id}:events     stream: one entry per event (fields: type, data)
    ragway:runs:queue          stream: run ids waiting for an executor or executing
                               (consumer group); an entry is deleted when acknowledged
    ragway:idem:{key}:{digest} JSON {run_id, request}: the first run for that key
    ragway:run:{id}:lease      hash {token, holder}: who may write the run now
    ragway:cites:…, ragway:run:{id}:redactions   the runs that read each document, and
                               what was redacted of a run (ragway/redaction.py)

Creation is one Lua script, so a run is either accepted whole (record, first
event, queue entry, idempotency mapping) or not at all.

Fencing: an executor that takes a run from the queue gets a fresh lease token,
but only while it still holds the run's queue entry (XAUTOCLAIM by a replica that
reclaimed it moves the entry). Every write of a running run (record, event,
terminal write, lease heartbeat) is a script that first checks the token, so an
executor frozen past its lease (SIGSTOP, a long GC, a partition) that wakes up
after another took over writes nothing: its write raises LeaseLost.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import redis.asyncio as redis
from redis.asyncio.client import Pipeline
from redis.exceptions import ResponseError

from ragway import redaction, telemetry
from services.gateway.runs.errors import IdempotencyConflict, QueueFull
from services.gateway.runs.events import RunAcceptedEvent, RunEvent
from services.gateway.runs.models import RunFeedback, RunRecord, now_ms

QUEUE = "ragway:runs:queue"
GROUP = "executors"
# A full queue's answer: come back once a few runs have finished.
QUEUE_FULL_RETRY_AFTER_S = 2.0

# The queue holds only unacknowledged entries (``ack`` deletes them), so its length
# is the number of runs waiting or executing: past ARGV[9] nothing is accepted (a
# retry of an accepted request still finds its run).
_CREATE = """
if ARGV[4] == '1' then
  local existing = redis.call('GET', KEYS[1])
  if existing then return {0, existing} end
end
local depth = redis.call('XLEN', KEYS[4])
if depth >= tonumber(ARGV[9]) then return {2, tostring(depth)} end
if ARGV[4] == '1' then
  redis.call('SET', KEYS[1], ARGV[3], 'EX', tonumber(ARGV[5]))
end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('XADD', KEYS[3], '*', 'type', ARGV[6], 'data', ARGV[7])
if ARGV[8] == '' then
  redis.call('XADD', KEYS[4], '*', 'run_id', ARGV[1])
else
  redis.call('XADD', KEYS[4], '*', 'run_id', ARGV[1], 'traceparent', ARGV[8])
end
return {1, ARGV[1]}
"""


# Acknowledge and delete in one step: a finished run's entry is of no further use, and
# the stream stays as long as the runs still waiting or executing.
_ACK = """
local n = redis.call('XACK', KEYS[1], ARGV[1], unpack(ARGV, 2))
redis.call('XDEL', KEYS[1], unpack(ARGV, 2))
return n
"""

# The lease hash only fences writes; it outlives any execution and then expires.
LEASE_KEY_TTL_S = 24 * 3600

# XPENDING's extended form: [[id, consumer, idle_ms, deliveries]] for that one entry.
_HOLDS_ENTRY = """
local function holds_entry(queue, group, entry_id, consumer)
  local p = redis.call('XPENDING', queue, group, entry_id, entry_id, 1)
  return #p == 1 and p[1][2] == consumer
end
"""

_ACQUIRE = (
    _HOLDS_ENTRY
    + """
if not holds_entry(KEYS[1], ARGV[1], ARGV[2], ARGV[3]) then return 0 end
local token = redis.call('HINCRBY', KEYS[2], 'token', 1)
redis.call('HSET', KEYS[2], 'holder', ARGV[3])
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[4]))
return token
"""
)

_TOUCH = (
    _HOLDS_ENTRY
    + """
if redis.call('HGET', KEYS[2], 'token') ~= ARGV[4] then return 0 end
if not holds_entry(KEYS[1], ARGV[1], ARGV[2], ARGV[3]) then return 0 end
redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[3], 0, ARGV[2], 'JUSTID')
return 1
"""
)

_APPEND = """
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return false end
return redis.call('XADD', KEYS[2], '*', 'type', ARGV[2], 'data', ARGV[3])
"""

# Answer deltas (one or a burst, in order: ARGV[2i], ARGV[2i+1] each), and whether the
# run has been cancelled since: one round trip, not two per delta.
_APPEND_CHECKING = """
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return false end
for i = 2, #ARGV, 2 do
  redis.call('XADD', KEYS[2], '*', 'type', ARGV[i], 'data', ARGV[i + 1])
end
return redis.call('EXISTS', KEYS[3])
"""

_SAVE = """
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return false end
if ARGV[3] == '' then
  redis.call('SET', KEYS[2], ARGV[2])
else
  redis.call('SET', KEYS[2], ARGV[2], 'EX', tonumber(ARGV[3]))
end
return 1
"""

# The record, then an event: a run's start (saved running, then run.started) in one
# round trip instead of two, fenced like either write alone.
_SAVE_APPEND = """
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return false end
redis.call('SET', KEYS[2], ARGV[2])
return redis.call('XADD', KEYS[3], '*', 'type', ARGV[3], 'data', ARGV[4])
"""

# Compare-and-set of a record no executor leases (an ended run's), its expiry kept.
_REPLACE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1
"""

# A script is all or nothing like MULTI/EXEC (also in the AOF), and checks the token first.
# ARGV[7], ARGV[8]: an event written just before the terminal one (answer.completed),
# when given: the end of a run is one round trip.
_FINISH = """
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return false end
if ARGV[7] then
  redis.call('XADD', KEYS[3], '*', 'type', ARGV[7], 'data', ARGV[8])
end
redis.call('SET', KEYS[2], ARGV[2], 'EX', tonumber(ARGV[3]))
local id = redis.call('XADD', KEYS[3], '*', 'type', ARGV[4], 'data', ARGV[5])
redis.call('EXPIRE', KEYS[3], tonumber(ARGV[6]))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[6]))
return id
"""


# Drop the acknowledged entries older gateways left (they acked without deleting): all
# entries older than the oldest pending one, or, none pending, than the next undelivered
# one. One script, so no replica reads or delivers an entry between the two reads and
# the trim. When this took separate round trips, an entry added and delivered to
# another replica in between was trimmed as acknowledged, and the next XAUTOCLAIM
# dropped it from the pending list: its executor found the entry gone and the run
# stayed queued for ever.
_TRIM_ACKNOWLEDGED = """
local pending = redis.call('XPENDING', KEYS[1], ARGV[1])
local min_id
if pending[1] > 0 then
  min_id = pending[2]
else
  local last = '0-0'
  for _, group in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
    local fields = {}
    for i = 1, #group, 2 do fields[group[i]] = group[i + 1] end
    if fields['name'] == ARGV[1] then last = fields['last-delivered-id'] end
  end
  local ms, seq = string.match(last, '^(%d+)-(%d+)$')
  min_id = ms .. '-' .. string.format('%d', tonumber(seq) + 1)
end
return redis.call('XTRIM', KEYS[1], 'MINID', min_id)
"""


class LeaseLost(Exception):
    """This executor no longer holds the run: another took it over; it must stop."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"the lease of run {run_id} is held by another executor")
        self.run_id = run_id


# The keys the ingest worker's redaction rewrites: named once, in ragway/redaction.py.
run_key = redaction.run_key
events_key = redaction.events_key


def lease_key(run_id: str) -> str:
    return f"ragway:run:{run_id}:lease"


def cancel_key(run_id: str) -> str:
    return f"ragway:run:{run_id}:cancel"


@dataclass(frozen=True, slots=True)
class Event:
    id: str
    type: str
    data: str  # JSON


class QueuedRun(NamedTuple):
    """One queue entry: the run to execute, and the trace of the request that queued it."""

    entry_id: str
    run_id: str
    traceparent: str  # W3C; "" when the run was queued with tracing off


@dataclass(frozen=True, slots=True)
class Created:
    run_id: str
    created: bool  # False: an earlier run with the same idempotency key
    # The record as stored, when this call created it (no need to read it back).
    record: RunRecord | None = None


class RunStore:
    def __init__(self, client: redis.Redis, *, max_queue_depth: int = 10_000) -> None:
        self._r = client
        self._max_queue_depth = max_queue_depth
        self._ack = client.register_script(_ACK)
        self._create = client.register_script(_CREATE)
        self._acquire = client.register_script(_ACQUIRE)
        self._touch = client.register_script(_TOUCH)
        self._append = client.register_script(_APPEND)
        self._append_checking = client.register_script(_APPEND_CHECKING)
        self._save = client.register_script(_SAVE)
        self._save_append = client.register_script(_SAVE_APPEND)
        self._finish = client.register_script(_FINISH)
        self._replace = client.register_script(_REPLACE)
        self._trim = client.register_script(_TRIM_ACKNOWLEDGED)

    async def ensure_queue(self) -> None:
        try:
            await self._r.xgroup_create(QUEUE, GROUP, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        await self._trim_acknowledged()

    async def _trim_acknowledged(self) -> None:
        """Drop the acknowledged entries that gateways before ``ack`` deleted them left
        (``_TRIM_ACKNOWLEDGED``, atomic: a concurrent submit or delivery loses nothing)."""
        await self._trim(keys=[QUEUE], args=[GROUP])

    async def create(
        self,
        record: RunRecord,
        request_fingerprint: dict[str, Any],
        idempotency_key: str | None,
        idempotency_ttl_s: int,
    ) -> Created:
        fingerprint = json.dumps(request_fingerprint, sort_keys=True)
        idem = ""
        if idempotency_key is not None:
            digest = hashlib.sha256(idempotency_key.encode()).hexdigest()
            idem = f"ragway:idem:{record.key_id}:{digest}"
        accepted = RunAcceptedEvent(run_id=record.id, question=record.question)
        result = await self._create(
            keys=[idem or "ragway:idem:none", run_key(record.id), events_key(record.id), QUEUE],
            args=[
                record.id,
                record.model_dump_json(),
                json.dumps({"run_id": record.id, "request": fingerprint}),
                "1" if idem else "0",
                idempotency_ttl_s,
                accepted.TYPE.value,
                accepted.data(),
                # The executor continues the trace of the request that queued the run.
                telemetry.current_traceparent(),
                self._max_queue_depth,
            ],
        )
        flag, payload = int(result[0]), _text(result[1])
        if flag == 1:
            return Created(run_id=record.id, created=True, record=record)
        if flag == 2:
            raise QueueFull(int(payload), QUEUE_FULL_RETRY_AFTER_S)
        earlier = json.loads(payload)
        if earlier["request"] != fingerprint:
            raise IdempotencyConflict(earlier["run_id"])
        return Created(run_id=earlier["run_id"], created=False)

    async def get(self, run_id: str) -> RunRecord | None:
        raw = await self._r.get(run_key(run_id))
        return None if raw is None else RunRecord.model_validate_json(raw)

    async def get_checking_cancel(self, run_id: str) -> tuple[RunRecord | None, bool]:
        """The record and whether the run's cancel flag is set: what an executor reads
        first, in one round trip."""
        async with self._r.pipeline(transaction=False) as pipe:
            pipe.get(run_key(run_id))
            pipe.exists(cancel_key(run_id))
            raw, cancelled = await pipe.execute()
        return (None if raw is None else RunRecord.model_validate_json(raw)), bool(cancelled)

    async def get_with_events(
        self, run_id: str, cursor: str | None
    ) -> tuple[RunRecord | None, str]:
        """The record, and the state of its events as a stream opening needs it, in one
        round trip: with a cursor, ``event_state``'s answer for it; without, 'present'
        or 'expired'."""
        async with self.pipeline() as pipe:
            self.queue_get_with_events(pipe, run_id, cursor)
            replies: list[Any] = await pipe.execute()
        return self.got_with_events(replies, cursor)

    def pipeline(self) -> Pipeline:
        """A pipeline on the store's pool, for a caller that adds commands of its own."""
        return self._r.pipeline(transaction=False)

    def queue_get_with_events(self, pipe: Pipeline, run_id: str, cursor: str | None) -> int:
        """``get_with_events``'s commands, queued in ``pipe``; how many replies they take."""
        pipe.get(run_key(run_id))
        pipe.exists(events_key(run_id))
        if cursor:
            pipe.xrange(events_key(run_id), min=cursor, max=cursor, count=1)
        return 3 if cursor else 2

    @staticmethod
    def got_with_events(replies: Sequence[Any], cursor: str | None) -> tuple[RunRecord | None, str]:
        """``get_with_events``'s answer from the replies of its queued commands (a reply
        that is an error, from ``execute(raise_on_error=False)``, is raised)."""
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        raw, exists = replies[0], bool(replies[1])
        record = None if raw is None else RunRecord.model_validate_json(raw)
        if cursor and replies[2]:
            return record, "present"
        if cursor and exists:
            return record, "unknown"
        return record, "present" if exists else "expired"

    async def acquire(self, consumer: str, entry_id: str, run_id: str) -> int | None:
        """A new lease token for the run, while ``consumer`` holds its queue entry; else None."""
        token = await self._acquire(
            keys=[QUEUE, lease_key(run_id)], args=[GROUP, entry_id, consumer, LEASE_KEY_TTL_S]
        )
        return int(token) or None

    async def save(self, record: RunRecord, *, token: int, ttl_s: int | None = None) -> None:
        record.updated_at_ms = now_ms()
        saved = await self._save(
            keys=[lease_key(record.id), run_key(record.id)],
            args=[token, record.model_dump_json(), "" if ttl_s is None else ttl_s],
        )
        if saved is None:
            raise LeaseLost(record.id)

    async def save_and_append(self, record: RunRecord, event: RunEvent, *, token: int) -> str:
        """``save`` then ``append``, in one script (one round trip)."""
        record.updated_at_ms = now_ms()
        event_id = await self._save_append(
            keys=[lease_key(record.id), run_key(record.id), events_key(record.id)],
            args=[token, record.model_dump_json(), event.TYPE.value, event.data()],
        )
        if event_id is None:
            raise LeaseLost(record.id)
        return _text(event_id)

    async def save_detached(self, record: RunRecord, *, ttl_s: int) -> None:
        """Store a record that no executor leases (a shadow run's, written once at its end)."""
        record.updated_at_ms = now_ms()
        await self._r.set(run_key(record.id), record.model_dump_json(), ex=ttl_s)

    async def attach_feedback(self, run_id: str, feedback: RunFeedback) -> RunRecord | None:
        """Put the user's latest feedback in an ended run's record, keeping its expiry;
        None when the record is gone. No executor writes an ended run, so only other
        feedback on the same run can race: the write is a compare-and-set, retried on a
        change, and the last one wins, as in the feedback store."""
        key = run_key(run_id)
        while True:
            raw = await self._r.get(key)
            if raw is None:
                return None
            record = RunRecord.model_validate_json(raw)
            record.feedback = feedback
            if await self._replace(keys=[key], args=[raw, record.model_dump_json()]):
                return record

    async def append(self, run_id: str, event: RunEvent, *, token: int) -> str:
        event_id = await self._append(
            keys=[lease_key(run_id), events_key(run_id)],
            args=[token, event.TYPE.value, event.data()],
        )
        if event_id is None:
            raise LeaseLost(run_id)
        return _text(event_id)

    async def append_checking_cancel(self, run_id: str, event: RunEvent, *, token: int) -> bool:
        """Append like ``append``; True when the run's cancel flag is set (after the write).

        The executor streams every answer delta this way: it checked the flag after
        each one anyway, and the profile had that check as its own round trip.
        """
        return await self.append_all_checking_cancel(run_id, [event], token=token)

    async def append_all_checking_cancel(
        self, run_id: str, events: Sequence[RunEvent], *, token: int
    ) -> bool:
        """``append_checking_cancel`` for several events, in order, in one script."""
        args: list[str | int] = [token]
        for event in events:
            args += [event.TYPE.value, event.data()]
        cancelled = await self._append_checking(
            keys=[lease_key(run_id), events_key(run_id), cancel_key(run_id)], args=args
        )
        if cancelled is None:
            raise LeaseLost(run_id)
        return bool(cancelled)

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
        """Save the final record and append the terminal event in one script (after
        ``preceding``, when given).

        Two separate writes left a window: an executor (or Redis) dying between
        them left a record that says finished over a log without its terminal
        event, and the run's streams never ended. A script is all or nothing,
        also in the AOF replayed after a crash; it writes only for the lease holder.
        """
        record.updated_at_ms = now_ms()
        event_id = await self._finish(
            keys=[lease_key(record.id), run_key(record.id), events_key(record.id)],
            args=[
                token,
                record.model_dump_json(),
                record_ttl_s,
                event.TYPE.value,
                event.data(),
                event_ttl_s,
                *([] if preceding is None else [preceding.TYPE.value, preceding.data()]),
            ],
        )
        if event_id is None:
            raise LeaseLost(record.id)
        return _text(event_id)

    async def cite(self, record: RunRecord, *, ttl_s: int) -> None:
        """Index the run under every document whose passages it holds, for ``ttl_s`` (its
        record's retention): a deletion or revocation of one of them finds it there."""
        await redaction.index_citations(
            self._r, record.tenant, record.id, (s.document_id for s in record.sources), ttl_s
        )

    async def reapply_redactions(self, record: RunRecord) -> bool:
        """Redact the run again under what it was redacted of while it ran: its final
        write put the text back. True when there was any."""
        return await redaction.reapply(self._r, record.id, record.tenant)

    async def last_event_type(self, run_id: str) -> str | None:
        entries: Any = await self._r.xrevrange(events_key(run_id), count=1)
        return _text(entries[0][1][b"type"]) if entries else None

    async def request_cancel(self, run_id: str, ttl_s: int) -> None:
        """Flag the run; whichever executor holds it stops at its next step."""
        await self._r.set(cancel_key(run_id), b"1", ex=ttl_s)

    async def cancel_requested(self, run_id: str) -> bool:
        return bool(await self._r.exists(cancel_key(run_id)))

    async def event_state(self, run_id: str, event_id: str) -> str:
        """'present' when the id is an event of this run, 'expired' when the run's
        events are gone (retention), else 'unknown' (another run's id, or made up)."""
        if await self._r.xrange(events_key(run_id), min=event_id, max=event_id, count=1):
            return "present"
        return "unknown" if await self._r.exists(events_key(run_id)) else "expired"

    async def events_exist(self, run_id: str) -> bool:
        return bool(await self._r.exists(events_key(run_id)))

    # The work queue (consumer group): any gateway replica may execute any run.
    async def next_runs(self, consumer: str, count: int, block_ms: int) -> list[QueuedRun]:
        reply: Any = await self._r.xreadgroup(
            GROUP, consumer, {QUEUE: ">"}, count=count, block=block_ms
        )
        return [
            _queued(entry_id, fields)
            for _stream, entries in reply or []
            for entry_id, fields in entries
        ]

    async def reclaim(self, consumer: str, min_idle_ms: int, count: int) -> list[QueuedRun]:
        """Take over queue entries whose executor went silent for ``min_idle_ms``.

        A live executor touches its entries (``touch``) more often than that, so
        only runs of a crashed or frozen replica are taken.
        """
        reply: Any = await self._r.xautoclaim(
            QUEUE, GROUP, consumer, min_idle_time=min_idle_ms, start_id="0-0", count=count
        )
        return [_queued(entry_id, fields) for entry_id, fields in reply[1] if fields]

    async def touch(self, consumer: str, entry_id: str, run_id: str, token: int) -> bool:
        """Reset the idle time of the entry this executor holds (its lease heartbeat).

        Only while it still holds both the entry and the run's lease: a plain XCLAIM
        with min-idle 0 took the entry back from a replica that had reclaimed it.
        False: the lease is lost.
        """
        held = await self._touch(
            keys=[QUEUE, lease_key(run_id)], args=[GROUP, entry_id, consumer, token]
        )
        return bool(held)

    async def ack(self, entry_ids: Sequence[str]) -> None:
        """Acknowledge finished runs and delete their entries (the queue stays trimmed)."""
        if entry_ids:
            await self._ack(keys=[QUEUE], args=[GROUP, *entry_ids])

    async def queue_depth(self) -> int:
        """Queue entries not yet acknowledged: waiting for an executor, or executing
        (acknowledged ones are deleted, so this is the stream's length)."""
        return int(await self._r.xlen(QUEUE))

    async def ping(self) -> bool:
        return bool(await self._r.ping())


def _queued(entry_id: bytes, fields: dict[bytes, bytes]) -> QueuedRun:
    traceparent = fields.get(b"traceparent")
    return QueuedRun(
        _text(entry_id), _text(fields[b"run_id"]), _text(traceparent) if traceparent else ""
    )


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
