"""The run queue on a real Redis: trimmed as runs finish, and bounded.

Regression (issue 16): the queue stream kept every run ever queued (XACK leaves the
entry), and nothing bounded how many runs could wait, so a burst grew Redis until
it fell over instead of answering 503.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio as aioredis

from services.gateway.api.errors import http_error
from services.gateway.runs.errors import QueueFull
from services.gateway.runs.executor import RunExecutor
from services.gateway.runs.queue import RunQueue
from services.gateway.runs.store import GROUP, QUEUE, RunStore
from services.gateway.settings import GatewaySettings
from tests.integration.runs import QUESTION, demo_record
from tests.unit.services.gateway.fakes import FakeBackends


async def _finish_runs(url: str, count: int) -> tuple[int, list[Any]]:
    client = aioredis.Redis.from_url(url)
    store = RunStore(client)
    await store.ensure_queue()
    records = [demo_record() for _ in range(count)]
    for record in records:
        await store.create(record, {"question": QUESTION}, None, 60)
    settings = GatewaySettings(grpc_backoff_s=0.0)
    queue = RunQueue(
        store, RunExecutor(store, FakeBackends(), settings).execute,
        consumer="gateway-a", concurrency=2, lease_s=5,
    )  # fmt: skip
    stop = asyncio.Event()
    task = asyncio.create_task(queue.run(stop))
    for _ in range(100):
        done = [await store.get(r.id) for r in records]
        if all(d is not None and d.status.finished for d in done):
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.3)  # the acks follow the final writes
    stop.set()
    await asyncio.wait_for(task, 10)
    length = int(await client.xlen(QUEUE))
    pending: Any = await client.xpending_range(QUEUE, GROUP, "-", "+", 10)
    await client.aclose()
    return length, pending


def test_a_finished_run_leaves_nothing_in_the_queue_stream(redis_url: str) -> None:
    length, pending = asyncio.run(_finish_runs(redis_url, 3))
    assert (length, pending) == (0, [])


async def _fill(url: str) -> tuple[list[str], QueueFull, str, int]:
    client = aioredis.Redis.from_url(url)
    store = RunStore(client, max_queue_depth=2)
    await store.ensure_queue()
    first = demo_record()
    created = [
        (await store.create(first, {"question": QUESTION}, "idem-1", 60)).run_id,
        (await store.create(demo_record(), {"question": QUESTION}, None, 60)).run_id,
    ]
    refused = demo_record()
    with pytest.raises(QueueFull) as full:
        await store.create(refused, {"question": QUESTION}, None, 60)
    # A retry of an accepted request still finds its run, full queue or not.
    again = await store.create(demo_record(), {"question": QUESTION}, "idem-1", 60)
    assert again.run_id == first.id and not again.created
    assert await store.get(refused.id) is None  # nothing of the refused run was stored
    length = int(await client.xlen(QUEUE))
    await client.aclose()
    return created, full.value, refused.id, length


def test_a_full_queue_refuses_a_new_run_with_503_and_stores_nothing_of_it(redis_url: str) -> None:
    created, full, _, length = asyncio.run(_fill(redis_url))
    assert len(created) == 2 and length == 2
    error = http_error(full)
    assert (error.status, error.code) == (503, "queue_full")
    assert error.headers is not None and int(error.headers["Retry-After"]) >= 1


async def _legacy_trim(url: str, delivered: int, acked: int) -> tuple[list[str], int]:
    """A queue as older gateways left it (5 entries; the first ``acked`` of the
    ``delivered`` ones acknowledged, never deleted), then a gateway of this version
    starting: the run ids left in the stream and how many are pending."""
    client = aioredis.Redis.from_url(url)
    store = RunStore(client)
    await store.ensure_queue()
    for n in range(5):
        await client.xadd(QUEUE, {"run_id": f"old-{n}"})
    read: Any = await client.xreadgroup(GROUP, "old", {QUEUE: ">"}, count=delivered)
    ids = [entry_id for _, entries in read for entry_id, _ in entries]
    await client.xack(QUEUE, GROUP, *ids[:acked])
    await store.ensure_queue()
    left: Any = await client.xrange(QUEUE)
    pending = len(await client.xpending_range(QUEUE, GROUP, "-", "+", 10))
    await client.aclose()
    return [fields[b"run_id"].decode() for _, fields in left], pending


def test_starting_trims_acknowledged_entries_and_keeps_pending_and_waiting_ones(
    redis_url: str,
) -> None:
    # The pending entry (a run executing) and the undelivered one (waiting) remain.
    assert asyncio.run(_legacy_trim(redis_url, delivered=4, acked=3)) == (["old-3", "old-4"], 1)


def test_starting_with_none_pending_trims_up_to_the_next_undelivered_entry(
    redis_url: str,
) -> None:
    assert asyncio.run(_legacy_trim(redis_url, delivered=3, acked=3)) == (["old-3", "old-4"], 0)


async def _deliver_while_another_replica_starts(url: str, rounds: int) -> list[str]:
    """Runs queued and taken by one replica while another keeps starting (and trimming)."""
    client = aioredis.Redis.from_url(url)
    other = aioredis.Redis.from_url(url)
    store, starting = RunStore(client), RunStore(other)
    await store.ensure_queue()
    stop = asyncio.Event()

    async def keep_starting() -> None:
        while not stop.is_set():
            await starting.ensure_queue()

    trimmer = asyncio.create_task(keep_starting())
    lost: list[str] = []
    for _ in range(rounds):
        record = demo_record()
        await store.create(record, {"question": QUESTION}, None, 60)
        for entry in await store.next_runs("gateway-a", count=10, block_ms=100):
            for _ in range(3):  # the other replica's turns while this one executes
                await asyncio.sleep(0)
            if not await client.xrange(QUEUE, entry.entry_id, entry.entry_id):
                lost.append(entry.run_id)
            await store.ack([entry.entry_id])
    stop.set()
    await trimmer
    await client.aclose()
    await other.aclose()
    return lost


def test_a_replica_starting_never_trims_a_run_another_has_just_taken(redis_url: str) -> None:
    # Regression (load test, Redis restarted): the trim read the pending list and then the
    # group's last delivered id in two round trips. A run queued and delivered to another
    # replica in between was trimmed as acknowledged; XAUTOCLAIM then dropped it from the
    # pending list, its executor found it "taken over", and it stayed queued for ever.
    assert asyncio.run(_deliver_while_another_replica_starts(redis_url, 300)) == []
