"""Stream fan-out on the real gateway: one reader per process, whatever the number of streams.

A stack with its own Redis and gateway (so its connection counts and rate limits are
this module's alone) beside the session's retriever and generator. The runs are written
straight into Redis (tests/integration/runs.py), so each test decides when events come.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis
import redis.asyncio as aioredis

from ragway_tools.launcher import Stack
from services.gateway.main import REDIS_CLIENT_NAME
from services.gateway.runs.errors import RunWaitTimedOut
from services.gateway.runs.events import AnswerDelta, RunAcceptedEvent, RunCompleted, RunEvent
from services.gateway.runs.fanout import EventHub
from services.gateway.runs.models import RunRecord, RunStatus
from services.gateway.runs.store import events_key, run_key
from tests.integration.conftest import auth, own_redis
from tests.integration.runs import demo_record
from tests.integration.sse import TERMINAL, Sse, parse

# Small, so that a client that does not read overflows it with a few events.
BUFFER_EVENTS = 16


@pytest.fixture(scope="module")
def fan(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    env = {
        "RAGWAY_STREAM_BUFFER_EVENTS": str(BUFFER_EVENTS),
        "RAGWAY_REQUESTS_PER_MINUTE": "100000",
        "RAGWAY_TENANT_REQUESTS_PER_MINUTE": "100000",
    }
    with own_redis(stack, tmp_path_factory.mktemp("fanout"), env) as s:
        s.start_gateway()
        yield s
    log = (s.logs_dir / "gateway.log").read_text()
    assert "Traceback" not in log, log[-4000:]


def idle_run(redis_url: str) -> str:
    """A run record and its first event, with no queue entry: only the test writes to it."""
    r = redis.Redis.from_url(redis_url)
    record = demo_record()
    accepted = RunAcceptedEvent(run_id=record.id, question=record.question)
    r.set(run_key(record.id), record.model_dump_json())
    r.xadd(events_key(record.id), {"type": accepted.TYPE.value, "data": accepted.data()})
    r.close()
    return record.id


def append(redis_url: str, run_id: str, events: list[RunEvent]) -> None:
    with redis.Redis.from_url(redis_url) as r, r.pipeline(transaction=False) as pipe:
        for event in events:
            pipe.xadd(events_key(run_id), {"type": event.TYPE.value, "data": event.data()})
        pipe.execute()


def gateway_connections(redis_url: str) -> int:
    with redis.Redis.from_url(redis_url) as r:
        clients = r.client_list()
    return sum(1 for c in clients if str(c.get("name", "")).startswith(REDIS_CLIENT_NAME))


async def follow_stream(
    client: httpx.AsyncClient, run_id: str, opened: asyncio.Event | None = None
) -> list[Sse]:
    """Every event of one stream to its terminal one; ``opened`` set at the first event."""
    out: list[Sse] = []
    async with client.stream("GET", f"/v1/runs/{run_id}/events", headers=auth("demo")) as resp:
        assert resp.status_code == 200
        lines: list[str] = []
        async for line in resp.aiter_lines():
            lines.append(line)
            if line != "":
                continue
            for event in parse(iter(lines)):
                out.append(event)
                if opened is not None:
                    opened.set()
            lines = []
            if out and out[-1].event in TERMINAL:
                return out
    return out


async def open_streams(stack: Stack, run_id: str, n: int) -> list[asyncio.Task[list[Sse]]]:
    """``n`` streams on the run, returned once every one of them has its first event."""
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
    client = httpx.AsyncClient(base_url=stack.config.gateway_url, timeout=60, limits=limits)
    tasks: list[asyncio.Task[list[Sse]]] = []
    for _ in range(n):
        opened = asyncio.Event()
        tasks.append(asyncio.create_task(follow_stream(client, run_id, opened)))
        await opened.wait()  # one at a time: the pool sees no burst of requests

    async def close_when_done() -> None:
        await asyncio.gather(*tasks, return_exceptions=True)
        await client.aclose()

    asyncio.get_running_loop().create_task(close_when_done())
    return tasks


def deltas(n: int, size: int = 20) -> list[RunEvent]:
    return [AnswerDelta(text=f"{i:06d}" + "x" * size, index=i) for i in range(n)]


def test_many_streams_on_one_run_all_get_every_event_in_order(fan: Stack) -> None:
    redis_url = fan.config.redis_url
    run_id = idle_run(redis_url)

    async def main() -> list[list[Sse]]:
        tasks = await open_streams(fan, run_id, 100)
        # Live events, in batches larger than one read of the hub, while all 100 listen.
        for _ in range(2):
            append(redis_url, run_id, deltas(250))
            await asyncio.sleep(0.05)
        append(redis_url, run_id, [RunCompleted(timings_ms={"total": 1.0})])
        return await asyncio.gather(*tasks)

    streams = asyncio.run(main())
    with redis.Redis.from_url(redis_url) as r:
        stored = [entry_id.decode() for entry_id, _ in r.xrange(events_key(run_id))]
    assert len(stored) == 1 + 500 + 1
    for events in streams:
        assert [e.id for e in events] == stored  # all of them, in order, no duplicate
        assert events[0].event == "run.accepted"
        assert events[-1].event == "run.completed"


def test_a_client_that_does_not_read_is_dropped_and_the_others_get_everything(
    fan: Stack,
) -> None:
    redis_url = fan.config.redis_url
    run_id = idle_run(redis_url)
    # A client with a tiny receive window that sends its request and never reads.
    stuck = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stuck.connect((fan.config.host, fan.config.gateway_port))
    stuck.sendall(
        f"GET /v1/runs/{run_id}/events HTTP/1.1\r\nHost: test\r\n"
        f"Authorization: {auth('demo')['Authorization']}\r\n\r\n".encode()
    )
    dropped_before = dropped(fan)

    async def main() -> list[list[Sse]]:
        tasks = await open_streams(fan, run_id, 10)
        # Far more bytes than the socket buffers and the stuck stream's queue hold.
        for _ in range(12):
            append(redis_url, run_id, deltas(100, size=8000))
            await asyncio.sleep(0.05)
        append(redis_url, run_id, [RunCompleted(timings_ms={"total": 1.0})])
        return await asyncio.gather(*tasks)

    try:
        streams = asyncio.run(main())
        assert dropped(fan) == dropped_before + 1
    finally:
        stuck.close()
    for events in streams:
        assert len(events) == 1 + 1200 + 1
        assert [e.json["index"] for e in events[1:-1]] == list(range(100)) * 12


def gauge(stack: Stack, name: str) -> float:
    """One unlabelled metric of the gateway's /metrics."""
    text = httpx.get(f"{stack.config.gateway_url}/metrics", timeout=10).text
    for line in text.splitlines():
        if line.startswith(f"{name} "):
            return float(line.split()[1])
    raise AssertionError(f"{name} is not exposed")


def dropped(stack: Stack) -> float:
    return gauge(stack, "ragway_streams_dropped_total")


def test_redis_connections_stay_constant_with_the_number_of_streams(fan: Stack) -> None:
    redis_url = fan.config.redis_url
    run_id = idle_run(redis_url)

    async def main() -> tuple[int, int]:
        first = await open_streams(fan, run_id, 5)
        few = gateway_connections(redis_url)
        more = await open_streams(fan, run_id, 295)
        many = gateway_connections(redis_url)
        append(redis_url, run_id, [RunCompleted(timings_ms={"total": 1.0})])
        ended = await asyncio.gather(*first, *more)
        assert all(events[-1].event == "run.completed" for events in ended)
        return few, many

    few, many = asyncio.run(main())
    # Before the hub each open stream held a connection for its blocking read: 295 more.
    assert many <= few + 2, (few, many)


def test_a_stream_that_joins_late_gets_what_the_hub_read_before_it(fan: Stack) -> None:
    """A stream that joins after the hub read a run's events gets them from memory."""
    redis_url = fan.config.redis_url
    run_id = idle_run(redis_url)

    async def main() -> tuple[list[Sse], list[Sse]]:
        early = await open_streams(fan, run_id, 1)
        append(redis_url, run_id, deltas(5))
        await asyncio.sleep(0.2)
        late = await open_streams(fan, run_id, 1)
        append(redis_url, run_id, [RunCompleted(timings_ms={"total": 1.0})])
        return (await early[0]), (await late[0])

    early, late = asyncio.run(main())
    assert early == late
    assert [e.event for e in early] == ["run.accepted"] + ["answer.delta"] * 5 + ["run.completed"]


# The follow semantics, on the hub itself against the real Redis (they were unit tests
# of the per-stream follow loop this replaces).


async def hub_ids(
    redis_url: str, run_id: str, cursor: str, *, into: list[str] | None = None, **kw: Any
) -> list[str]:
    """The ids one follower of a fresh hub gets (also appended to ``into`` as they come)."""
    reader, client = aioredis.Redis.from_url(redis_url), aioredis.Redis.from_url(redis_url)
    hub = EventHub(reader, client, buffer_events=64, recent_events=1000)
    hub.start()
    got = [] if into is None else into
    try:
        async for event in hub.follow(run_id, cursor, **kw):
            got.append(event.id)
        return got
    finally:
        await hub.close()
        assert (hub.followers, hub.watched_runs) == (0, 0)
        await reader.aclose()
        await client.aclose()


def test_the_hub_ends_with_the_terminal_event_and_resumes_after_a_cursor(fan: Stack) -> None:
    redis_url = fan.config.redis_url
    run_id = idle_run(redis_url)
    append(redis_url, run_id, [*deltas(3), RunCompleted(timings_ms={"total": 1.0})])
    with redis.Redis.from_url(redis_url) as r:
        ids = [entry_id.decode() for entry_id, _ in r.xrange(events_key(run_id))]
    assert asyncio.run(hub_ids(redis_url, run_id, "0-0")) == ids
    assert asyncio.run(hub_ids(redis_url, run_id, ids[1])) == ids[2:]

    async def late_joiner(recent_events: int) -> tuple[list[str], list[str]]:
        """One follower from the start, one that joins behind the watch's cursor."""
        reader, client = aioredis.Redis.from_url(redis_url), aioredis.Redis.from_url(redis_url)
        hub = EventHub(reader, client, buffer_events=64, recent_events=recent_events)
        hub.start()
        try:
            first = hub.follow(run_id, "0-0")
            head = [(await anext(first)).id, (await anext(first)).id]
            # The watch is past ids[1] now: the late one needs (ids[0], ids[1]] replayed,
            # from memory or (recent_events=0) with one XRANGE.
            late = [event.id async for event in hub.follow(run_id, ids[0])]
            return head + [event.id async for event in first], late
        finally:
            await hub.close()
            await reader.aclose()
            await client.aclose()

    for recent in (1000, 0):
        assert asyncio.run(late_joiner(recent)) == (ids, ids[1:])


def test_the_hub_ends_on_a_finished_record_whose_log_has_no_terminal_event(fan: Stack) -> None:
    redis_url = fan.config.redis_url
    run_id = idle_run(redis_url)
    with redis.Redis.from_url(redis_url) as r:
        record = RunRecord.model_validate_json(r.get(run_key(run_id)) or b"")
        record.status = RunStatus.FAILED
        r.set(run_key(run_id), record.model_dump_json())
        first = r.xrange(events_key(run_id))[0][0].decode()
    assert asyncio.run(hub_ids(redis_url, run_id, "0-0")) == [first]


def test_the_hub_stops_when_asked_and_times_out_as_a_504(fan: Stack) -> None:
    redis_url = fan.config.redis_url
    run_id = idle_run(redis_url)
    assert asyncio.run(hub_ids(redis_url, run_id, "0-0", stop=lambda: True)) == []
    got: list[str] = []
    with redis.Redis.from_url(redis_url) as r:
        first = r.xrange(events_key(run_id))[0][0].decode()
    # True once the accepted event is out: the idle stream then ends at the next look.
    assert asyncio.run(hub_ids(redis_url, run_id, "0-0", into=got, stop=lambda: bool(got))) == [
        first
    ]
    with pytest.raises(RunWaitTimedOut) as caught:
        asyncio.run(hub_ids(redis_url, run_id, first, timeout_s=0.3))
    assert caught.value.run_id == run_id


def test_the_hub_hands_a_stream_what_is_there_at_once_as_one_batch(fan: Stack) -> None:
    """A stream writes each batch in one chunk: a late joiner's backlog is one batch,
    and so is a burst the hub read in one go; the events are those of ``follow``."""
    redis_url = fan.config.redis_url
    finished = idle_run(redis_url)
    append(redis_url, finished, [*deltas(4), RunCompleted(timings_ms={"total": 1.0})])
    live = idle_run(redis_url)
    with redis.Redis.from_url(redis_url) as r:
        finished_ids = [entry_id.decode() for entry_id, _ in r.xrange(events_key(finished))]

    async def batches() -> tuple[list[list[str]], list[list[str]]]:
        reader, client = aioredis.Redis.from_url(redis_url), aioredis.Redis.from_url(redis_url)
        hub = EventHub(reader, client, buffer_events=64, recent_events=1000)
        hub.start()
        try:
            backlog = [[e.id for e in batch] async for batch in hub.follow_batches(finished, "0-0")]
            following = hub.follow_batches(live, "0-0")
            got = [[e.id for e in await anext(following)]]  # run.accepted
            # One transaction: the hub's blocked read sees the whole burst at once.
            with redis.Redis.from_url(redis_url) as r, r.pipeline(transaction=True) as pipe:
                for event in [*deltas(3), RunCompleted(timings_ms={"total": 1.0})]:
                    pipe.xadd(events_key(live), {"type": event.TYPE.value, "data": event.data()})
                pipe.execute()
            got += [[e.id for e in batch] async for batch in following]
            return backlog, got
        finally:
            await hub.close()
            assert (hub.followers, hub.watched_runs) == (0, 0)
            await reader.aclose()
            await client.aclose()

    backlog, live_batches = asyncio.run(batches())
    assert backlog == [finished_ids]
    with redis.Redis.from_url(redis_url) as r:
        live_ids = [entry_id.decode() for entry_id, _ in r.xrange(events_key(live))]
    assert live_batches == [live_ids[:1], live_ids[1:]]
    # follow() is the same events one by one.
    assert asyncio.run(hub_ids(redis_url, finished, "0-0")) == finished_ids


def followers(stack: Stack) -> float:
    return gauge(stack, "ragway_stream_followers")


def test_a_client_that_goes_away_ends_its_stream_within_a_tick(fan: Stack) -> None:
    """The response ends the stream's wait when its client goes away, and the hub lets
    go of its follower."""
    run_id = idle_run(fan.config.redis_url)
    before = followers(fan)
    with (
        httpx.Client(base_url=fan.config.gateway_url, timeout=30) as api,
        api.stream("GET", f"/v1/runs/{run_id}/events", headers=auth("demo")) as resp,
    ):
        lines = resp.iter_lines()
        assert next(lines).startswith("id: ")
        assert followers(fan) == before + 1
    gone = time.monotonic()
    while followers(fan) != before:
        assert time.monotonic() - gone < 5, "the stream outlived its client"
        time.sleep(0.05)


def test_the_hub_hands_a_heartbeat_only_after_heartbeat_s_without_events(fan: Stack) -> None:
    redis_url = fan.config.redis_url
    run_id = idle_run(redis_url)

    async def main() -> list[tuple[float, list[str]]]:
        reader, client = aioredis.Redis.from_url(redis_url), aioredis.Redis.from_url(redis_url)
        hub = EventHub(reader, client, buffer_events=64, recent_events=1000)
        hub.start()
        got: list[tuple[float, list[str]]] = []
        try:
            following = hub.follow_batches(run_id, "0-0", heartbeat_s=1.0)
            await anext(following)  # run.accepted
            start = time.monotonic()

            async def write() -> None:  # an event every 0.25 s: never 1 s of quiet
                for event in deltas(6):
                    await asyncio.sleep(0.25)
                    append(redis_url, run_id, [event])

            writer = asyncio.create_task(write())
            async for batch in following:
                got.append((time.monotonic() - start, [e.type for e in batch]))
                if not batch:
                    break  # the first heartbeat, once the events stopped
            await writer
            append(redis_url, run_id, [RunCompleted(timings_ms={"total": 1.0})])
            got += [(time.monotonic() - start, [e.type for e in b]) async for b in following]
            return got
        finally:
            await hub.close()
            await reader.aclose()
            await client.aclose()

    got = asyncio.run(main())
    kinds = [types for _, types in got]
    beat = kinds.index([])
    # Every delta before the heartbeat (the events kept the stream from going quiet)...
    assert sum(len(types) for types in kinds[:beat]) == 6, got
    assert all(set(types) == {"answer.delta"} for types in kinds[:beat]), got
    # ...which came a heartbeat_s after the last of them, not before (the upper bound is
    # a tick plus generous slack for a loaded machine: it only says "about then").
    quiet = got[beat][0] - got[beat - 1][0]
    assert 1.0 <= quiet <= 3.0, got
    assert kinds[-1] == ["run.completed"]
