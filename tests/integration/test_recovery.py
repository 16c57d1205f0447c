"""Crashes lose nothing: a dead executor's run is finished elsewhere; Redis restarts keep runs.

These tests run their own Redis server and gateway (short lease) next to the
session's retriever and generator, so they can kill things freely.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import redis
import redis.asyncio as aioredis

from ragway_tools.launcher import Stack
from services.gateway.runs.events import AnswerDelta, RunAcceptedEvent, RunStarted
from services.gateway.runs.models import RunStatus
from services.gateway.runs.store import RunStore, events_key, run_key
from tests.integration.conftest import auth, own_redis
from tests.integration.runs import QUESTION, demo_record
from tests.integration.sse import read_events, start_run


@pytest.fixture
def own(stack: Stack, tmp_path: Path) -> Iterator[Stack]:
    with own_redis(stack, tmp_path, {"RAGWAY_RUN_LEASE_S": "1", "RAGWAY_HEARTBEAT_S": "0.2"}) as s:
        yield s


async def accept_and_abandon(url: str) -> str:
    """What a gateway does before it dies mid-run: accept, take the run, start, stream a bit."""
    client = aioredis.Redis.from_url(url)
    store = RunStore(client)
    await store.ensure_queue()
    record = demo_record()
    await store.create(record, {"question": QUESTION}, None, 60)
    taken = await store.next_runs("gateway-that-dies", count=1, block_ms=1000)
    assert [entry.run_id for entry in taken] == [record.id]
    token = await store.acquire("gateway-that-dies", taken[0].entry_id, record.id)
    assert token is not None
    record.status, record.attempts = RunStatus.RUNNING, 1
    await store.save(record, token=token)
    await store.append(record.id, RunStarted(attempt=1, restarted=False), token=token)
    await store.append(record.id, AnswerDelta(text="A partial answer", index=0), token=token)
    await client.aclose()
    return record.id


def test_a_run_whose_executor_died_is_finished_by_another_replica(own: Stack) -> None:
    run_id = asyncio.run(accept_and_abandon(own.config.redis_url))
    own.start_gateway()  # a live replica: it must reclaim the silent run after the lease
    with httpx.Client(base_url=own.config.gateway_url, timeout=30) as api:
        events = read_events(api, run_id, auth("demo"))
        names = [e.event for e in events]
        assert names[:3] == ["run.accepted", "run.started", "answer.delta"]
        restart = events[3]
        assert restart.event == "run.started"
        assert restart.json == {"attempt": 2, "restarted": True}
        assert names[-2:] == ["answer.completed", "run.completed"]
        assert "Last-Event-ID" in events[-2].json["answer"]
        record = api.get(f"/v1/runs/{run_id}", headers=auth("demo")).json()
        assert record["status"] == "succeeded"
        assert record["attempts"] == 2


def test_runs_survive_a_redis_restart_and_the_gateway_reports_the_outage(own: Stack) -> None:
    own.start_gateway()
    with httpx.Client(base_url=own.config.gateway_url, timeout=30) as api:
        done = start_run(api, QUESTION, auth("demo"))
        before = read_events(api, done, auth("demo"))
        assert before[-1].event == "run.completed"

        # appendfsync everysec: a write reaches the AOF within about a second, and
        # while an fsync is in flight (the new AOF's first one, a busy disk) Valkey
        # holds writes back up to two. Kill Redis once what the client saw is on
        # disk, as it is a second or two later in any deployment. WAITAOF waits for
        # the calling connection's own writes, and the AOF is one ordered file: a
        # write of ours after the run's covers the run's too.
        client = redis.Redis.from_url(own.config.redis_url)
        client.set("ragway:test:aof-probe", "1")
        assert client.waitaof(1, 0, 10_000)[0] == 1
        client.close()
        own.kill("redis", signal.SIGKILL)
        ready = api.get("/readyz")
        assert ready.status_code == 503
        assert ready.json()["checks"]["redis"] is False
        refused = api.post("/v1/runs", json={"question": QUESTION}, headers=auth("demo"))
        assert refused.status_code == 503
        assert refused.headers["Retry-After"] == "1"
        assert refused.json()["error"]["code"] == "store_unavailable"

        own.start_redis()  # same data folder: the AOF is replayed
        # The finished run and every one of its events came back from the AOF.
        assert read_events(api, done, auth("demo")) == before
        # The executor outlived the outage: a new run completes.
        after = read_events(api, start_run(api, QUESTION, auth("demo")), auth("demo"))
        assert after[-1].event == "run.completed"


def test_the_first_requests_after_redis_closed_the_idle_connections_are_served(
    own: Stack,
) -> None:
    """Regression: redis-py 8.1's pools lent connections the server had closed (a restart
    closes them all), and the first POST /v1/runs after a Redis restart was a 503 about
    half the time, by which connection it drew (ragway/redis_pools.py)."""
    own.start_gateway()
    with (
        httpx.Client(base_url=own.config.gateway_url, timeout=30) as api,
        ThreadPoolExecutor(max_workers=6) as pool,
    ):
        done = start_run(api, QUESTION, auth("demo"))
        # Streams opening at once: each pool lends several connections, idle afterwards.
        replays = list(pool.map(lambda _: read_events(api, done, auth("demo")), range(6)))
        assert all(events[-1].event == "run.completed" for events in replays)

        # What a restart does to the gateway's connections, without the restart's
        # timing: the server closes every one of them, the idle ones included.
        client = redis.Redis.from_url(own.config.redis_url)
        closed = client.client_kill_filter(_type="normal", skipme=True)
        client.close()
        assert closed >= 4  # the gateway's pool (several), the rate limiter's, the hub's
        time.sleep(0.3)  # the gateway's event loop sees each socket end

        # Requests at once draw one idle connection each: none may be a closed one.
        def post(_: int) -> httpx.Response:
            return api.post("/v1/runs", json={"question": QUESTION}, headers=auth("demo"))

        answers = list(pool.map(post, range(4)))
        assert [r.status_code for r in answers] == [202] * 4, [r.text for r in answers]
        # The rate limiter's pool too: on a closed connection a request is not counted.
        assert all("RateLimit" in r.headers for r in answers)
        for r in answers:
            assert read_events(api, r.json()["run_id"], auth("demo"))[-1].event == "run.completed"


async def finish_without_terminal_event(url: str) -> str:
    """An executor that died between saving the final record and appending the final event.

    Before the two became one transaction (RunStore.finish) this state was one
    kill -9 (of a gateway or of Redis) away; a log written by such a version
    can still be in Redis after an upgrade.
    """
    client = aioredis.Redis.from_url(url)
    store = RunStore(client)
    await store.ensure_queue()
    record = demo_record()
    await store.create(record, {"question": QUESTION}, None, 60)
    taken = await store.next_runs("gateway-that-dies", count=1, block_ms=1000)
    assert [entry.run_id for entry in taken] == [record.id]
    token = await store.acquire("gateway-that-dies", taken[0].entry_id, record.id)
    assert token is not None
    record.status, record.attempts, record.answer = RunStatus.SUCCEEDED, 1, "An answer"
    await store.append(record.id, RunStarted(attempt=1, restarted=False), token=token)
    await store.save(record, token=token)  # ...and the gateway died here
    await client.aclose()
    return record.id


def test_a_finished_run_whose_terminal_event_was_lost_still_ends_its_streams(own: Stack) -> None:
    run_id = asyncio.run(finish_without_terminal_event(own.config.redis_url))
    own.start_gateway()  # reclaims the entry after the lease and repairs the log
    with httpx.Client(base_url=own.config.gateway_url, timeout=30) as api:
        deadline = time.monotonic() + 30
        events = read_events(api, run_id, auth("demo"))
        while events[-1].event != "run.completed" and time.monotonic() < deadline:
            time.sleep(0.2)  # the stream ended without an end: the client reconnects
            events = read_events(api, run_id, auth("demo"))
        assert [e.event for e in events] == ["run.accepted", "run.started", "run.completed"]
        record = api.get(f"/v1/runs/{run_id}", headers=auth("demo")).json()
        assert (record["status"], record["attempts"]) == ("succeeded", 1)  # not run again


async def accept_without_queueing(url: str) -> str:
    """A run record and its first event, but no queue entry: its stream stays idle."""
    client = aioredis.Redis.from_url(url)
    record = demo_record()
    accepted = RunAcceptedEvent(run_id=record.id, question=record.question)
    # Written as store.create would, less its queue entry (no executor ever holds it).
    await client.set(run_key(record.id), record.model_dump_json())
    await client.xadd(events_key(record.id), {"type": accepted.TYPE.value, "data": accepted.data()})
    await client.aclose()
    return record.id


def test_an_idle_stream_carries_heartbeat_comments(own: Stack) -> None:
    own.start_gateway()
    run_id = asyncio.run(accept_without_queueing(own.config.redis_url))
    lines: list[str] = []
    with (
        httpx.Client(base_url=own.config.gateway_url, timeout=30) as api,
        api.stream("GET", f"/v1/runs/{run_id}/events", headers=auth("demo")) as resp,
    ):
        for line in resp.iter_lines():
            lines.append(line)
            if sum(1 for seen in lines if seen.startswith(":")) == 3:
                break  # three heartbeats at 0.2 s: the idle stream is alive
    assert lines[:2] == [f"id: {lines[0][4:]}", "event: run.accepted"]
    assert [line for line in lines if line.startswith(":")] == [": heartbeat"] * 3


def test_a_stopping_gateway_ends_open_streams_with_a_closing_event(own: Stack) -> None:
    own.start_gateway()
    run_id = asyncio.run(accept_without_queueing(own.config.redis_url))
    gateway = own.part("gateway").process
    lines: list[str] = []
    with (
        httpx.Client(base_url=own.config.gateway_url, timeout=30) as api,
        api.stream("GET", f"/v1/runs/{run_id}/events", headers=auth("demo")) as resp,
    ):
        for line in resp.iter_lines():  # ends when the server closes the stream
            lines.append(line)
            if line == "event: run.accepted":
                gateway.send_signal(signal.SIGTERM)
    events = [block.split("\n") for block in "\n".join(lines).split("\n\n") if block.strip()]
    closing = [b for b in events if "event: stream.closing" in b]
    assert len(closing) == 1, lines
    # No id: the client's Last-Event-ID stays on the last real event.
    assert not any(field.startswith("id:") for field in closing[0])
    assert "retry: 1000" in closing[0]
    # uvicorn finishes its shutdown, then re-raises SIGTERM so supervisors see why it ended.
    assert gateway.wait(timeout=20) in (0, -signal.SIGTERM)
    assert "Application shutdown complete" in (own.logs_dir / "gateway.log").read_text()
