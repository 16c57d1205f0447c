"""Concurrent event streams per API key and per tenant, counted in Redis over all replicas.

    ragway:streams:key:<id>        sorted set: stream id → the time its place lapses
    ragway:streams:tenant:<name>   the same for every key of the tenant

A stream takes a place in both sets before it starts (429 too_many_streams when either
is full), renews it while it runs, and gives it back when it ends. A replica that dies
leaves its places behind; they lapse after ``SLOT_TTL_S`` unrenewed, so a crash costs a
caller at most that long. When Redis cannot count, the stream opens: reading its events
needs Redis anyway and fails on its own, and a limiter must not be the outage.
"""

from __future__ import annotations

import asyncio
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

_RENEW = """
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, 'XX', ARGV[2], ARGV[1])
  redis.call('PEXPIRE', key, tonumber(ARGV[3]))
end
return 1
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
    def __init__(self, client: redis.Redis, *, per_key: int, per_tenant: int) -> None:
        self._r = client
        self._per_key = per_key
        self._per_tenant = per_tenant
        self._take = client.register_script(_TAKE)
        self._renew = client.register_script(_RENEW)

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
        args: list[str | int] = [slot.member, now_ms, now_ms + int(SLOT_TTL_S * 1000)]
        return Taking(slot, args + [n for _, _, n in scopes], tuple((p, n) for p, _, n in scopes))

    async def hold(self, slot: Slot) -> None:
        """Renew the slot until cancelled (the stream ended), then give it back."""
        try:
            while True:
                await asyncio.sleep(RENEW_EVERY_S)
                lapses = int((time.time() + SLOT_TTL_S) * 1000)
                try:
                    await self._renew(
                        keys=list(slot.keys),
                        args=[slot.member, lapses, int(SLOT_TTL_S * 1000)],
                    )
                except (RedisError, OSError) as exc:
                    log.warning("stream slot not renewed", extra={"error": str(exc)})
        finally:
            await self.release(slot)

    async def release(self, slot: Slot) -> None:
        try:
            async with self._r.pipeline(transaction=False) as pipe:
                for key in slot.keys:
                    pipe.zrem(key, slot.member)
                await pipe.execute()
        except (RedisError, OSError) as exc:  # it lapses on its own
            log.warning("stream slot not released", extra={"error": str(exc)})
