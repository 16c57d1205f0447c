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

import redis.asyncio as redis
from redis.exceptions import RedisError

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
        scopes = [
            ("key-streams", f"ragway:streams:key:{caller.key_id}", self._per_key),
            ("tenant-streams", f"ragway:streams:tenant:{caller.tenant}", self._per_tenant),
        ]
        slot = Slot(uuid.uuid4().hex, tuple(key for _, key, _ in scopes))
        now_ms = int(time.time() * 1000)
        args: list[str | int] = [slot.member, now_ms, now_ms + int(SLOT_TTL_S * 1000)]
        try:
            full = int(
                await self._take(keys=list(slot.keys), args=args + [n for _, _, n in scopes])
            )
        except (RedisError, OSError) as exc:
            log.warning("stream limits not counted", extra={"error": str(exc)})
            return None
        if full:
            policy, _, limit = scopes[full - 1]
            raise StreamLimitReached(policy, limit)
        return slot

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
