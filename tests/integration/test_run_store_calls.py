"""The run store's combined calls on a real Redis: each is what its separate calls were.

The executor reads a run with its cancel flag, saves the running record with
run.started, and writes answer.completed with the final record and terminal event,
each in one round trip; a stream opens with the record and its events' state in one.
Fenced writes with a stale lease token still write nothing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import redis.asyncio as aioredis

from services.gateway.runs.events import AnswerCompleted, RunCompleted, RunStarted
from services.gateway.runs.models import RunStatus
from services.gateway.runs.store import QUEUE, LeaseLost, RunStore
from tests.integration.runs import QUESTION, demo_record

pytestmark = pytest.mark.integration
ANSWERED = AnswerCompleted(
    answer="Resume with Last-Event-ID [1].",
    citations=[],
    refused=False,
    refusal_reason=None,
    refusal_detail=None,
    verdict="grounded",
    evidence_score=0.8,
    model="extractive-v1",
    prompt_version="p1",
    degraded=[],
)


async def taken(store: RunStore, client: aioredis.Redis) -> tuple[Any, int]:
    """A created run, taken from the queue by one executor: the record and its token."""
    await store.ensure_queue()
    record = demo_record()
    await store.create(record, {"question": QUESTION}, None, 60)
    [entry] = await store.next_runs("gateway-a", count=1, block_ms=100)
    token = await store.acquire("gateway-a", entry.entry_id, record.id)
    assert token is not None
    return record, token


async def types(client: aioredis.Redis, run_id: str) -> list[str]:
    raw: Any = await client.xrange(f"ragway:run:{run_id}:events")
    return [fields[b"type"].decode() for _, fields in raw]


async def test_the_start_and_the_end_are_one_call_each_and_fenced(redis_url: str) -> None:
    client = aioredis.Redis.from_url(redis_url)
    store = RunStore(client)
    try:
        record, token = await taken(store, client)
        assert await store.get_checking_cancel(record.id) == (record, False)
        record.status = RunStatus.RUNNING
        started = RunStarted(attempt=1, restarted=False)
        with pytest.raises(LeaseLost):
            await store.save_and_append(record, started, token=token + 1)
        stale = await store.get(record.id)
        assert stale is not None and stale.status is RunStatus.QUEUED
        assert await types(client, record.id) == ["run.accepted"]

        await store.save_and_append(record, started, token=token)
        saved = await store.get(record.id)
        assert saved is not None and saved.status is RunStatus.RUNNING
        assert await types(client, record.id) == ["run.accepted", "run.started"]

        record.status = RunStatus.SUCCEEDED
        done = RunCompleted(timings_ms={"total": 1.0})
        with pytest.raises(LeaseLost):
            await store.finish(
                record, done, token=token + 1, record_ttl_s=60, event_ttl_s=60, preceding=ANSWERED
            )
        assert await types(client, record.id) == ["run.accepted", "run.started"]
        await store.finish(
            record, done, token=token, record_ttl_s=60, event_ttl_s=60, preceding=ANSWERED
        )
        raw: Any = await client.xrange(f"ragway:run:{record.id}:events")
        assert [f[b"type"].decode() for _, f in raw][2:] == ["answer.completed", "run.completed"]
        assert json.loads(raw[2][1][b"data"]) == json.loads(ANSWERED.data())
        ended = await store.get(record.id)
        assert ended is not None and ended.status is RunStatus.SUCCEEDED
        assert 0 < await client.ttl(f"ragway:run:{record.id}:events") <= 60

        await store.request_cancel(record.id, 60)
        assert (await store.get_checking_cancel(record.id))[1] is True
        assert await store.get_checking_cancel("run_" + "0" * 32) == (None, False)
    finally:
        await client.delete(QUEUE)
        await client.aclose()


async def test_a_stream_opening_reads_the_record_and_its_events_state_at_once(
    redis_url: str,
) -> None:
    client = aioredis.Redis.from_url(redis_url)
    store = RunStore(client)
    try:
        record, _token = await taken(store, client)
        entries: Any = await client.xrange(f"ragway:run:{record.id}:events")
        first_id = entries[0][0].decode()
        for cursor in (None, first_id, "1-1"):
            got, state = await store.get_with_events(record.id, cursor)
            assert got == record
            # What the two separate reads answered.
            expected = (
                await store.event_state(record.id, cursor)
                if cursor
                else ("present" if await store.events_exist(record.id) else "expired")
            )
            assert state == expected
        assert (await store.get_with_events(record.id, "1-1"))[1] == "unknown"
        await client.delete(f"ragway:run:{record.id}:events")
        assert await store.get_with_events(record.id, first_id) == (record, "expired")
        assert await store.get_with_events(record.id, None) == (record, "expired")
        assert await store.get_with_events("run_" + "0" * 32, None) == (None, "expired")
    finally:
        await client.delete(QUEUE)
        await client.aclose()
