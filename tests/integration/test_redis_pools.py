"""The services' Redis pools after a Redis restart: the first commands are served.

Regression for the first POST /v1/runs after a restart answering 503 about half the
time: redis-py 8.1's pools lent the connections the restart had closed
(ragway/redis_pools.py). Each test leaves several connections idle in a pool,
restarts Redis (SIGKILL, then the same port and AOF), and draws them all at once.
"""

from __future__ import annotations

import asyncio
import signal

import pytest
import redis.asyncio as redis

from ragway import redis_pools
from ragway.ratelimit import Quota, QuotaChecker, per_minute
from ragway_tools.launcher import Stack

pytestmark = pytest.mark.integration
IDLE = 4


async def leave_idle(client: redis.Redis, connections: int) -> None:
    """Lend ``connections`` connections at once; all are idle in the pool afterwards."""
    waits = [client.blpop([f"test:idle:{i}"], timeout=0.05) for i in range(connections)]
    await asyncio.gather(*waits)


async def restart(stack: Stack) -> None:
    stack.kill("redis", signal.SIGKILL)
    stack.start_redis()
    # The event loop did not run during the restart: let it see each socket's end,
    # as it has long before anyone's next request after a real restart.
    await asyncio.sleep(0.1)


async def test_a_bounded_pool_lends_no_connection_the_restart_closed(redis_only: Stack) -> None:
    client = redis_pools.bounded_client(
        redis_only.config.redis_url,
        max_connections=8,
        wait_s=5,
        socket_timeout_s=5,
        connect_timeout_s=2,
        client_name="test-pool",
    )
    try:
        await leave_idle(client, IDLE)
        await client.set("test:kept", "1")
        await client.waitaof(1, 0, 10_000)  # on disk: the restart keeps it
        await restart(redis_only)
        # All at once: each draws one of the idle connections, every one closed.
        replies = await asyncio.gather(*(client.mget("test:kept", "test:no") for _ in range(IDLE)))
        assert replies == [[b"1", None]] * IDLE
    finally:
        await client.aclose()


async def test_a_single_connection_client_reconnects_after_a_restart(redis_only: Stack) -> None:
    client = redis_pools.single_connection_client(
        redis_only.config.redis_url, socket_timeout_s=5, connect_timeout_s=2, client_name="test-one"
    )
    try:
        await client.xadd("test:events", {"n": "1"})
        await client.waitaof(1, 0, 10_000)
        await restart(redis_only)
        assert await client.xlen("test:events") == 1
    finally:
        await client.aclose()


async def test_the_quota_checker_counts_the_first_requests_after_a_restart(
    redis_only: Stack,
) -> None:
    checker = QuotaChecker(
        redis_only.config.redis_url,
        key_prefix="test:ratelimit",
        socket_timeout_s=5,
        connect_timeout_s=2,
        max_connections=8,
    )
    quotas = [Quota("key-requests", "key:k1", per_minute(100))]
    try:
        await asyncio.gather(*(checker.check(quotas) for _ in range(IDLE)))
        await restart(redis_only)
        decisions = await asyncio.gather(*(checker.check(quotas) for _ in range(IDLE)))
        # Headers only when Redis counted: on a closed connection a request passes uncounted.
        assert all(d.allowed and "RateLimit" in d.headers for d in decisions)
    finally:
        await checker.aclose()
