"""Sliding-window quotas in Redis, answered with the IETF headers.

The gateway (API keys and tenants) and the ingest API (webhook senders and tenants)
count their own quotas with this one checker, so both refuse alike: 429 with
``Retry-After``, and every answer carries ``RateLimit-Policy`` and ``RateLimit``
(draft-ietf-httpapi-ratelimit-headers). Each quota is a counter per minute shared by
every replica. When Redis cannot count, requests pass: the stores behind them are on
the same Redis and answer 503 themselves, and a limiter must not be the outage.

The counters are those of the ``limits`` library's sliding-window-counter strategy
(its keys, its two Lua scripts, its arithmetic for what remains and when it resets),
but all of a request's quotas are counted in one script: the library's ``hit`` and
``get_window_stats`` were two round trips per quota, eight for a request that starts
a run, and the profile under load (``make profile``) had them as the biggest share of
the gateway's Redis writes. The keys stay the library's, so replicas of either kind
count into the same windows.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

from limits import RateLimitItem, RateLimitItemPerMinute
from redis.exceptions import RedisError

from ragway import redis_pools

log = logging.getLogger(__name__)

WINDOW_S = 60


@dataclass(frozen=True, slots=True)
class Quota:
    policy: str  # the name in the headers
    scope: str  # whose counter: "key:<id>", "tenant:<name>", "sender:<id>"
    item: RateLimitItem


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    headers: dict[str, str]
    refused_by: str | None = None

    @property
    def message(self) -> str:
        return f"rate limit {self.refused_by!r} exceeded; retry after the Retry-After delay"


def per_minute(amount: int) -> RateLimitItem:
    return RateLimitItemPerMinute(amount)


# For each quota in order: the library's acquire_sliding_window.lua, then its
# sliding_window.lua (what get_window_stats reads), on KEYS[2i-1] (the previous
# window) and KEYS[2i] (the current one), with ARGV[2i-1] the limit and ARGV[2i] the
# window in seconds; one hit each. Stops after the first quota that refuses, as the
# checker did. Returns {allowed, previous count, previous ttl ms, current count,
# current ttl ms} per quota counted.
_CHECK = """
local out = {}
for i = 1, #KEYS / 2 do
  local previous_key, current_key = KEYS[2 * i - 1], KEYS[2 * i]
  local limit = tonumber(ARGV[2 * i - 1])
  local expiry = tonumber(ARGV[2 * i]) * 1000
  local allowed = 1
  if 1 > limit then
    allowed = 0
  else
    local current_ttl = tonumber(redis.call('pttl', current_key))
    if current_ttl > 0 and current_ttl < expiry then
      redis.call('rename', current_key, previous_key)
      redis.call('set', current_key, 0, 'PX', current_ttl + expiry)
    end
    local previous_count = tonumber(redis.call('get', previous_key)) or 0
    local previous_ttl = tonumber(redis.call('pttl', previous_key)) or 0
    local current_count = tonumber(redis.call('get', current_key)) or 0
    current_ttl = tonumber(redis.call('pttl', current_key)) or 0
    if previous_ttl <= 0 then previous_ttl = 0 end
    if current_ttl <= 0 then current_ttl = 0 end
    local weighted = math.floor(previous_count * previous_ttl / expiry) + current_count
    if (weighted + 1) > limit then
      allowed = 0
    elseif redis.call('exists', current_key) == 1 then
      redis.call('incrby', current_key, 1)
    else
      redis.call('set', current_key, 1, 'PX', expiry * 2)
    end
  end
  local current_ttl = redis.call('pttl', current_key)
  if current_ttl > 0 and current_ttl < expiry then
    redis.call('rename', current_key, previous_key)
    redis.call('set', current_key, 0, 'PX', current_ttl + expiry)
  end
  out[i] = {
    allowed,
    tonumber(redis.call('get', previous_key)) or 0,
    redis.call('pttl', previous_key),
    tonumber(redis.call('get', current_key)) or 0,
    redis.call('pttl', current_key),
  }
  if allowed == 0 then break end
end
return out
"""


class QuotaChecker:
    def __init__(
        self,
        redis_url: str,
        *,
        key_prefix: str,
        socket_timeout_s: float,
        connect_timeout_s: float,
        max_connections: int = 64,
        pool_wait_s: float = 30.0,
    ) -> None:
        # A fixed pool that callers queue on, as the gateway's own: the library's pool had
        # no bound, and 2,000 streams opening at once opened (and authenticated) up to
        # 2,000 connections just to count them. Like the gateway's, it replaces the
        # connections a Redis restart closed: on a dead one the first request after the
        # restart went uncounted (ragway/redis_pools.py).
        self._r = redis_pools.bounded_client(
            redis_url,
            max_connections=max_connections,
            wait_s=pool_wait_s,
            socket_timeout_s=socket_timeout_s,
            connect_timeout_s=connect_timeout_s,
        )
        self._prefix = key_prefix
        self._check = self._r.register_script(_CHECK)

    def keys(self, quota: Quota) -> tuple[str, str]:
        """The previous and the current window's keys, named as the ``limits`` library does."""
        current = f"{self._prefix}:{{{quota.item.key_for(quota.scope)}}}"
        return f"{current}/-1", current

    async def check(self, quotas: list[Quota]) -> Decision:
        """Count one request against each quota, in order; stop at the first full one."""
        policy = ", ".join(f'"{q.policy}";q={q.item.amount};w={WINDOW_S}' for q in quotas)
        keys: list[str] = []
        args: list[int] = []
        for q in quotas:
            keys.extend(self.keys(q))
            args += [q.item.amount, q.item.get_expiry()]
        try:
            reply: Any = await self._check(keys=keys, args=args)
        except (RedisError, OSError) as exc:
            log.warning("rate limits not counted", extra={"error": str(exc)})
            return Decision(allowed=True, headers={})
        states: list[str] = []
        refused: Quota | None = None
        retry_after = 0
        for q, row in zip(quotas, reply, strict=False):
            allowed, remaining, reset_in = _window(q.item, row)
            reset_s = max(1, math.ceil(reset_in))
            states.append(f'"{q.policy}";r={remaining};t={reset_s}')
            if not allowed:
                refused, retry_after = q, reset_s
                break
        headers = {"RateLimit-Policy": policy, "RateLimit": ", ".join(states)}
        if refused is None:
            return Decision(allowed=True, headers=headers)
        headers["Retry-After"] = str(retry_after)
        return Decision(allowed=False, headers=headers, refused_by=refused.policy)

    async def aclose(self) -> None:
        await self._r.aclose()


def _window(item: RateLimitItem, row: list[Any]) -> tuple[bool, int, float]:
    """Whether the hit counted, what remains, and seconds until the window frees a hit:
    the arithmetic of the library's ``get_window_stats``."""
    previous_count, current_count = int(row[1]), int(row[3])
    previous_expires_in = max(0.0, float(row[2])) / 1000
    current_expires_in = max(0.0, float(row[4])) / 1000
    expiry = item.get_expiry()
    weighted = previous_count * previous_expires_in / expiry + current_count
    remaining = max(0, item.amount - math.floor(weighted))
    if not (previous_count or current_count):
        return bool(row[0]), remaining, 0.0
    previous_reset_in, current_reset_in = math.inf, math.inf
    if previous_count:
        previous_reset_in = previous_expires_in % (expiry / previous_count)
    if current_count:
        current_reset_in = current_expires_in % expiry
    return bool(row[0]), remaining, min(previous_reset_in, current_reset_in)
