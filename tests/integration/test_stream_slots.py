"""The stream places of one process are renewed by one renewer, in one pass.

A real Redis of its own (``redis_url``); short lifetimes, so a place that was not
renewed would lapse within the test.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
import redis.asyncio as aioredis

from services.gateway.auth import Principal
from services.gateway.streams import StreamLimitReached, StreamSlots

CALLER = Principal("key-1", "acme", frozenset({"public"}))
KEY_SET = "ragway:streams:key:key-1"


def test_held_places_outlive_their_lifetime_and_a_let_go_one_is_given_back(
    redis_url: str,
) -> None:
    async def main() -> None:
        client = aioredis.Redis.from_url(redis_url)
        slots = StreamSlots(client, per_key=5, per_tenant=5, ttl_s=1.0, renew_every_s=0.2)
        try:
            taken = [await slots.take(CALLER) for _ in range(3)]
            assert all(s is not None for s in taken)
            kept, gone, _ = taken
            for slot in taken:
                assert slot is not None
                slots.hold(slot)
            assert slots.renewing and slots.held == 3
            await asyncio.sleep(1.6)  # past the 1 s lifetime: only renewals keep them
            rows: Any = await client.zrange(KEY_SET, 0, -1, withscores=True)
            lapses = {m.decode(): float(s) for m, s in rows}
            assert len(lapses) == 3
            assert all(s > time.time() * 1000 for s in lapses.values())
            assert gone is not None and kept is not None
            slots.let_go(gone)
            await asyncio.sleep(0.1)
            listed: Any = await client.zrange(KEY_SET, 0, -1)
            members = {m.decode() for m in listed}
            assert gone.member not in members and kept.member in members
            # The given-back place is free again: two held, three more fit the limit of 5,
            # and a sixth is refused.
            more = [await slots.take(CALLER) for _ in range(3)]
            assert sum(s is not None for s in more) == 3
            with pytest.raises(StreamLimitReached):
                await slots.take(CALLER)
            for slot in taken + more:
                if slot is not None:
                    slots.let_go(slot)
            await asyncio.sleep(0.5)
            # Nothing held: the renewer ended (the next hold starts one) and the set is empty.
            assert not slots.renewing and slots.held == 0
            assert await client.zcard(KEY_SET) == 0
        finally:
            await slots.close()
            await client.aclose()

    asyncio.run(main())


def test_a_place_nobody_renews_lapses(redis_url: str) -> None:
    # The other half of the contract: a crashed replica's places free themselves.
    async def main() -> None:
        client = aioredis.Redis.from_url(redis_url)
        slots = StreamSlots(client, per_key=1, per_tenant=1, ttl_s=0.5, renew_every_s=0.2)
        try:
            first = await slots.take(CALLER)
            assert first is not None  # taken, never held: as if its process died
            with pytest.raises(StreamLimitReached, match="key-streams"):
                await slots.take(CALLER)
            await asyncio.sleep(0.7)
            assert await slots.take(CALLER) is not None
        finally:
            await slots.close()
            await client.aclose()

    asyncio.run(main())
