"""Concurrent event streams per API key and per tenant, counted in Redis over all replicas.

    ragway:streams:key:<id>        sorted set: stream id → the time its place lapses
    ragway:streams:tenant:<name>   the same for every key of the tenant

A stream takes a place in both sets before it starts (429 too_many_streams when either
is full), holds it while it runs, and gives it back when it ends. One renewer per process
renews every place held there in one pipelined pass every ``RENEW_EVERY_S`` (before, each
stream had a task of its own and a script call per renewal: 10,000 open streams were
10,000 tasks and 10,000 round trips every 20 s). A replica that dies
leaves its places behind; they lapse after ``SLOT_TTL_S`` unrenewed, so a crash costs a
caller at most that long. When Redis cannot count, the stream opens: reading its events
needs Redis anyway and fails on its own, and a limiter must not be the outage.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

import redis.asyncio as redis
from redis.asyncio.client import Pipeline
from redis.exceptions import NoScriptError, RedisError

from services.gateway.auth import Principal

log = logging.getLogger(__name__)

SLOT_TTL_S = 60.0
RENEW_EVERY_S = SLOT_TTL_S / 3
# Places renewed per pipeline: one pass over 10,000 streams is ten round trips, none of
# them a command buffer large enough to hold the event loop for long.
RENEW_BATCH = 1000

# KEYS: the sets; ARGV: member, now (ms), lapses at (ms), then each set's limit.
# 0: taken in every set; i: the i-th set is full (nothing taken).
_TAKE = """
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[2])
  if redis.call('ZCARD', key) >= tonumber(ARGV[3 + i]) then return i end
end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, ARGV[3], ARGV[1])
  redis.call('PEXPIRE', key, math.floor(tonumber(ARGV[3]) - tonumber(ARGV[2])))
end
return 0
"""


@dataclass(frozen=True, slots=True)
class Slot:
    member: str
    keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Taking:
    """A take on its way: the slot it asks for, the script's arguments, each set's
    policy and limit (in the sets' order)."""

    slot: Slot
    args: list[str | int]
    scopes: tuple[tuple[str, int], ...]


class StreamLimitReached(Exception):
    def __init__(self, policy: str, limit: int) -> None:
        super().__init__(
            f"concurrent stream limit {policy!r} ({limit}) reached; close a stream or retry"
        )
        self.policy = policy


class StreamSlots:
    def __init__(
        self,
        client: redis.Redis,
        *,
        per_key: int,
        per_tenant: int,
        ttl_s: float = SLOT_TTL_S,
        renew_every_s: float = RENEW_EVERY_S,
    ) -> None:
        self._r = client
        self._per_key = per_key
        self._per_tenant = per_tenant
        self._ttl_s = ttl_s
        self._renew_every_s = renew_every_s
        self._take = client.register_script(_TAKE)
        self._held: dict[str, Slot] = {}  # by member: the places of this process's streams
        self._renewer: asyncio.Task[None] | None = None
        self._releasing: set[asyncio.Task[None]] = set()

    @property
    def held(self) -> int:
        return len(self._held)

    @property
    def renewing(self) -> bool:
        return self._renewer is not None

    async def take(self, caller: Principal) -> Slot | None:
        """A place for one stream of the caller; StreamLimitReached when none is free.
        None: Redis could not count (the stream opens unbounded)."""
        taking = self._taking(caller)
        try:
            reply: Any = await self._take(keys=list(taking.slot.keys), args=taking.args)
        except (RedisError, OSError) as exc:
            reply = exc
        return await self.taken(taking, reply)

    def queue_take(self, pipe: Pipeline, caller: Principal) -> Taking:
        """``take``'s script, queued in a pipeline that reads something else the stream's
        opening needs (one round trip for both); ``taken`` reads its reply. Queued by its
        digest: a script object in a pipeline costs a SCRIPT EXISTS round trip first."""
        taking = self._taking(caller)
        pipe.evalsha(self._take.sha, len(taking.slot.keys), *taking.slot.keys, *taking.args)
        return taking

    async def taken(self, taking: Taking, reply: Any) -> Slot | None:
        """The slot a take's reply gave (an error reply, as ``execute(raise_on_error=False)``
        returns it, included); StreamLimitReached when a set was full."""
        if isinstance(reply, NoScriptError):  # Redis restarted or flushed its scripts
            try:
                reply = await self._take(keys=list(taking.slot.keys), args=taking.args)
            except (RedisError, OSError) as exc:
                reply = exc
        if isinstance(reply, (RedisError, OSError)):
            log.warning("stream limits not counted", extra={"error": str(reply)})
            return None
        full = int(reply)
        if full:
            policy, limit = taking.scopes[full - 1]
            raise StreamLimitReached(policy, limit)
        return taking.slot

    async def untake(self, taking: Taking, reply: Any) -> None:
        """Give back what a queued take got, when the stream does not open after all."""
        if not isinstance(reply, Exception) and int(reply) == 0:
            await self.release(taking.slot)

    def _taking(self, caller: Principal) -> Taking:
        scopes = [
            ("key-streams", f"ragway:streams:key:{caller.key_id}", self._per_key),
            ("tenant-streams", f"ragway:streams:tenant:{caller.tenant}", self._per_tenant),
        ]
        slot = Slot(uuid.uuid4().hex, tuple(key for _, key, _ in scopes))
        now_ms = int(time.time() * 1000)
        args: list[str | int] = [slot.member, now_ms, now_ms + int(self._ttl_s * 1000)]
        return Taking(slot, args + [n for _, _, n in scopes], tuple((p, n) for p, _, n in scopes))

    def hold(self, slot: Slot) -> None:
        """Keep the slot's place while its stream runs (the process's renewer renews it)."""
        self._held[slot.member] = slot
        if self._renewer is None:
            self._renewer = asyncio.create_task(self._renew_loop(), name="stream-slot-renewer")

    def let_go(self, slot: Slot) -> None:
        """The stream ended: stop renewing its place and give it back. The release runs as
        a task of its own, so a stream ended by cancellation still gives its place back."""
        self._held.pop(slot.member, None)
        task = asyncio.create_task(self.release(slot), name="stream-slot-release")
        self._releasing.add(task)
        task.add_done_callback(self._releasing.discard)

    async def renew_held(self) -> None:
        """One pass: every place held in this process lapses ``ttl_s`` from now."""
        slots = list(self._held.values())
        lapses = int((time.time() + self._ttl_s) * 1000)
        for start in range(0, len(slots), RENEW_BATCH):
            batch = slots[start : start + RENEW_BATCH]
            try:
                async with self._r.pipeline(transaction=False) as pipe:
                    keys: set[str] = set()
                    for slot in batch:
                        for key in slot.keys:
                            # XX: a place that lapsed (and was swept) is not taken back.
                            pipe.zadd(key, {slot.member: lapses}, xx=True)
                            keys.add(key)
                    for key in keys:
                        pipe.pexpire(key, int(self._ttl_s * 1000))
                    await pipe.execute()
            except (RedisError, OSError) as exc:  # they lapse only after ttl_s unrenewed
                log.warning(
                    "stream slots not renewed", extra={"error": str(exc), "slots": len(batch)}
                )

    async def _renew_loop(self) -> None:
        try:
            # Ends when this process holds no place; the next hold starts a new one.
            while self._held:
                await asyncio.sleep(self._renew_every_s)
                await self.renew_held()
        finally:
            self._renewer = None

    async def close(self) -> None:
        """Stop renewing (the process stops) and wait for the releases under way."""
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewer
        if self._releasing:
            await asyncio.gather(*self._releasing, return_exceptions=True)

    async def release(self, slot: Slot) -> None:
        try:
            async with self._r.pipeline(transaction=False) as pipe:
                for key in slot.keys:
                    pipe.zrem(key, slot.member)
                await pipe.execute()
        except (RedisError, OSError) as exc:  # it lapses on its own
            log.warning("stream slot not released", extra={"error": str(exc)})
