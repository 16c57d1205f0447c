"""Sliding-window quotas in Redis (the ``limits`` library), answered with the IETF headers.

The gateway (API keys and tenants) and the ingest API (webhook senders and tenants)
count their own quotas with this one checker, so both refuse alike: 429 with
``Retry-After``, and every answer carries ``RateLimit-Policy`` and ``RateLimit``
(draft-ietf-httpapi-ratelimit-headers). Each quota is a counter per minute shared by
every replica. When Redis cannot count, requests pass: the stores behind them are on
the same Redis and answer 503 themselves, and a limiter must not be the outage.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

from limits import RateLimitItem, RateLimitItemPerMinute
from limits.aio.storage import RedisStorage
from limits.aio.strategies import SlidingWindowCounterRateLimiter
from limits.errors import StorageError
from redis.exceptions import RedisError

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


class QuotaChecker:
    def __init__(
        self, redis_url: str, *, key_prefix: str, socket_timeout_s: float, connect_timeout_s: float
    ) -> None:
        storage = RedisStorage(
            "async+" + redis_url,
            implementation="redispy",
            key_prefix=key_prefix,
            socket_timeout=socket_timeout_s,
            socket_connect_timeout=connect_timeout_s,
        )
        self._limiter = SlidingWindowCounterRateLimiter(storage)

    async def check(self, quotas: list[Quota]) -> Decision:
        """Count one request against each quota, in order; stop at the first full one."""
        policy = ", ".join(f'"{q.policy}";q={q.item.amount};w={WINDOW_S}' for q in quotas)
        states: list[str] = []
        refused: Quota | None = None
        retry_after = 0
        try:
            for q in quotas:
                allowed = await self._limiter.hit(q.item, q.scope)
                stats = await self._limiter.get_window_stats(q.item, q.scope)
                reset_s = max(1, math.ceil(stats.reset_time - time.time()))
                states.append(f'"{q.policy}";r={max(0, stats.remaining)};t={reset_s}')
                if not allowed:
                    refused, retry_after = q, reset_s
                    break
        except (RedisError, StorageError, OSError) as exc:
            log.warning("rate limits not counted", extra={"error": str(exc)})
            return Decision(allowed=True, headers={})
        headers = {"RateLimit-Policy": policy, "RateLimit": ", ".join(states)}
        if refused is None:
            return Decision(allowed=True, headers=headers)
        headers["Retry-After"] = str(retry_after)
        return Decision(allowed=False, headers=headers, refused_by=refused.policy)
