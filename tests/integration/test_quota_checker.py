"""The one-script quota checker against the ``limits`` library it replaced, on a real Redis.

The checker counts all of a request's quotas in one Lua script; before, each quota was
the library's ``hit`` then ``get_window_stats``. Both must decide alike and read the
same counters (replicas of both kinds share the windows during an upgrade). The
library runs here beside the checker as the reference.
"""

from __future__ import annotations

import math

import pytest
import redis
from limits.aio.storage import RedisStorage
from limits.aio.strategies import SlidingWindowCounterRateLimiter

from ragway.ratelimit import WINDOW_S, Quota, QuotaChecker, per_minute

pytestmark = pytest.mark.integration
PREFIX = "test:ratelimit"


def library(url: str) -> SlidingWindowCounterRateLimiter:
    storage = RedisStorage("async+" + url, implementation="redispy", key_prefix=PREFIX)
    return SlidingWindowCounterRateLimiter(storage)


async def library_check(
    limiter: SlidingWindowCounterRateLimiter, quotas: list[Quota]
) -> tuple[bool, list[int]]:
    """The checker's old body: hit then stats per quota, stop at the first refusal."""
    remaining: list[int] = []
    for q in quotas:
        allowed = await limiter.hit(q.item, q.scope)
        stats = await limiter.get_window_stats(q.item, q.scope)
        remaining.append(max(0, stats.remaining))
        if not allowed:
            return False, remaining
    return True, remaining


def states(headers: dict[str, str]) -> list[int]:
    return [int(part.split(";r=")[1].split(";")[0]) for part in headers["RateLimit"].split(", ")]


async def test_decides_as_the_library_and_shares_its_counters(redis_url: str) -> None:
    checker = QuotaChecker(redis_url, key_prefix=PREFIX, socket_timeout_s=5, connect_timeout_s=2)
    limiter = library(redis_url)
    quotas = [
        Quota("key-requests", "key:k1", per_minute(5)),
        Quota("tenant-requests", "tenant:t1", per_minute(7)),
    ]
    try:
        # Alternate the two: each sees the other's hits, and stops where it would.
        seen: list[tuple[bool, list[int]]] = []
        for i in range(9):
            if i % 2:
                decision = await checker.check(quotas)
                seen.append((decision.allowed, states(decision.headers)))
                assert decision.headers["RateLimit-Policy"] == (
                    f'"key-requests";q=5;w={WINDOW_S}, "tenant-requests";q=7;w={WINDOW_S}'
                )
            else:
                seen.append(await library_check(limiter, quotas))
        assert seen == [
            (True, [4, 6]),
            (True, [3, 5]),
            (True, [2, 4]),
            (True, [1, 3]),
            (True, [0, 2]),
            (False, [0]),  # the key's quota refuses; the tenant's is not counted
            (False, [0]),
            (False, [0]),
            (False, [0]),
        ]
        refused = await checker.check(quotas)
        assert refused.refused_by == "key-requests"
        retry = int(refused.headers["Retry-After"])
        assert 1 <= retry <= math.ceil(WINDOW_S)
        # The tenant's counter holds the five counted hits only.
        r = redis.Redis.from_url(redis_url)
        current = checker.keys(quotas[1])[1]
        assert int(r.get(current) or 0) == 5
        r.close()
    finally:
        await checker.aclose()


async def test_a_refusing_later_quota_keeps_the_earlier_hits(redis_url: str) -> None:
    checker = QuotaChecker(redis_url, key_prefix=PREFIX, socket_timeout_s=5, connect_timeout_s=2)
    quotas = [
        Quota("key-requests", "key:k2", per_minute(100)),
        Quota("key-runs", "key:k2", per_minute(1)),
    ]
    try:
        first = await checker.check(quotas)
        second = await checker.check(quotas)
        assert first.allowed and states(first.headers) == [99, 0]
        assert not second.allowed and second.refused_by == "key-runs"
        assert states(second.headers) == [98, 0]  # counted in the first, refused in the second
        assert int(second.headers["Retry-After"]) >= 1
    finally:
        await checker.aclose()


async def test_passes_when_redis_cannot_count() -> None:
    checker = QuotaChecker(
        "redis://127.0.0.1:1/0", key_prefix=PREFIX, socket_timeout_s=1, connect_timeout_s=1
    )
    decision = await checker.check([Quota("key-requests", "key:k3", per_minute(1))])
    assert decision.allowed and decision.headers == {}
    await checker.aclose()
