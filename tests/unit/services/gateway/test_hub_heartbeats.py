"""The event hub's heartbeats: its one ticker hands a quiet follower an empty batch.

The hub here has no Redis to read (its clients point at a port nobody listens on): the
reader logs its errors and retries, and the followers of a quiet run still get their
heartbeats on time, as streams do while Redis is down. Heartbeats between events, on a
real Redis, are in tests/integration/test_fanout.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import redis.asyncio as aioredis

from ragway_tools.launcher import free_port
from services.gateway.runs.fanout import TICK_S, EventHub
from services.gateway.runs.store import Event

RUN = "r" * 26  # a run nobody writes to: no event ever comes


@contextlib.asynccontextmanager
async def hub_without_redis() -> AsyncIterator[EventHub]:
    url = f"redis://127.0.0.1:{free_port()}/0"
    reader, client = aioredis.Redis.from_url(url), aioredis.Redis.from_url(url)
    hub = EventHub(reader, client, buffer_events=16, recent_events=100)
    hub.start()
    try:
        yield hub
    finally:
        await hub.close()
        await reader.aclose()
        await client.aclose()


async def beats(heartbeat_s: float, n: int) -> tuple[list[list[Event]], list[float]]:
    """The first ``n`` batches of a follower on a quiet run, and when each came."""
    async with hub_without_redis() as hub:
        started = time.monotonic()
        batches, at = [], []
        following = hub.follow_batches(RUN, "0-0", heartbeat_s=heartbeat_s)
        async for batch in following:
            batches.append(batch)
            at.append(time.monotonic() - started)
            if len(batches) == n:
                break
        await following.aclose()
        assert (hub.followers, hub.watched_runs) == (0, 0)
    return batches, at


def test_a_quiet_follower_gets_an_empty_batch_every_heartbeat_s() -> None:
    batches, at = asyncio.run(beats(0.6, 3))
    assert batches == [[], [], []]
    # Each after heartbeat_s of nothing, late by at most the ticker's period (and slack).
    gaps = [b - a for a, b in zip([0.0, *at], at, strict=False)]
    assert all(0.6 <= gap <= 0.6 + TICK_S + 0.3 for gap in gaps), gaps


def test_a_heartbeat_shorter_than_a_tick_comes_every_tick() -> None:
    batches, at = asyncio.run(beats(0.05, 4))
    assert batches == [[], [], [], []]
    assert at[-1] >= 3 * TICK_S  # no faster than the ticker


def test_without_heartbeat_s_no_batch_is_empty_and_stop_still_ends_it() -> None:
    async def main() -> tuple[list[list[Event]], float]:
        stopped = False
        got: list[list[Event]] = []
        async with hub_without_redis() as hub:

            async def collect() -> None:
                async for batch in hub.follow_batches(RUN, "0-0", stop=lambda: stopped):
                    got.append(batch)

            task = asyncio.create_task(collect())
            await asyncio.sleep(4 * TICK_S)  # several ticks: no heartbeat was asked for
            stopped = True
            asked = time.monotonic()
            await asyncio.wait_for(task, 5)
            took = time.monotonic() - asked
        return got, took

    got, took = asyncio.run(main())
    assert got == []
    assert took <= TICK_S + 0.3  # within a tick of stop() turning true


def test_a_follower_that_stops_gets_no_heartbeat_after_it() -> None:
    async def main() -> list[list[Event]]:
        got: list[list[Event]] = []
        async with hub_without_redis() as hub:
            # stop() is true from the second look on: the stream ends, no heartbeat first.
            looks = iter([False])
            batches = hub.follow_batches(
                RUN, "0-0", stop=lambda: next(looks, True), heartbeat_s=0.01
            )
            async for batch in batches:
                got.append(batch)
        return got

    assert asyncio.run(main()) == []
