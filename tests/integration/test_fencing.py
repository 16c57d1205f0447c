"""An executor frozen past its lease must not write into the run another one took over.

Two run queues (two "replicas") on one real Redis, with in-memory backends. The
first takes the run and freezes in the generator call with its heartbeat stopped,
as a SIGSTOPped gateway does; the second reclaims the run after the lease and
finishes it. Then the first wakes up: its late writes are refused, the run's log
has exactly one terminal event, and no event of the old attempt follows the new one.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from typing import Any

import redis.asyncio as aioredis

from ragway.v1 import generator_pb2, retriever_pb2
from ragway_tools.launcher import Stack
from services.gateway.runs.executor import RunExecutor
from services.gateway.runs.models import TERMINAL_EVENTS
from services.gateway.runs.queue import RunQueue
from services.gateway.runs.store import QUEUE, RunStore
from services.gateway.settings import GatewaySettings
from tests.integration.runs import QUESTION, demo_record
from tests.unit.services.gateway.fakes import ANSWER, delta, final, search_reply

LEASE_S = 0.6
SETTINGS = GatewaySettings(grpc_backoff_s=0.0, run_lease_s=LEASE_S)


class FrozenBackends:
    """The first replica's dependencies: the generator hangs until ``thaw`` is set."""

    def __init__(self) -> None:
        self.frozen = asyncio.Event()
        self.thaw = asyncio.Event()

    async def search(
        self, request: retriever_pb2.SearchRequest, timeout_s: float
    ) -> retriever_pb2.SearchResponse:
        return search_reply()

    async def generate(
        self, request: generator_pb2.GenerateRequest, timeout_s: float
    ) -> AsyncGenerator[generator_pb2.GenerateResponse, None]:
        yield delta("Stale ", 0)
        self.frozen.set()
        await self.thaw.wait()
        yield delta("attempt ", 1)
        yield final("Stale attempt [1].", [1])


class LiveBackends(FrozenBackends):
    async def generate(
        self, request: generator_pb2.GenerateRequest, timeout_s: float
    ) -> AsyncGenerator[generator_pb2.GenerateResponse, None]:
        for message in [*ANSWER, final("Resume with [1].", [1])]:
            yield message


class Frozen(RunStore):
    """A frozen process sends no heartbeat: its lease lapses while it sleeps."""

    def __init__(self, client: aioredis.Redis) -> None:
        super().__init__(client)
        self.heartbeat = True

    async def touch(self, *args: Any, **kwargs: Any) -> Any:
        if self.heartbeat:
            return await super().touch(*args, **kwargs)
        return True


async def scenario(url: str) -> tuple[list[tuple[str, dict[str, Any]]], list[Any]]:
    client = aioredis.Redis.from_url(url)
    store_a, store_b = Frozen(client), RunStore(client)
    await store_a.ensure_queue()
    record = demo_record()
    await store_a.create(record, {"question": QUESTION}, None, 60)

    frozen, live = FrozenBackends(), LiveBackends()
    queue_a = RunQueue(
        store_a, RunExecutor(store_a, frozen, SETTINGS).execute,
        consumer="gateway-a", concurrency=1, lease_s=LEASE_S,
    )  # fmt: skip
    stop_a, stop_b = asyncio.Event(), asyncio.Event()
    task_a = asyncio.create_task(queue_a.run(stop_a))
    await asyncio.wait_for(frozen.frozen.wait(), 10)
    store_a.heartbeat = False  # SIGSTOP: no more heartbeats from gateway-a

    queue_b = RunQueue(
        store_b, RunExecutor(store_b, live, SETTINGS).execute,
        consumer="gateway-b", concurrency=1, lease_s=LEASE_S,
    )  # fmt: skip
    task_b = asyncio.create_task(queue_b.run(stop_b))
    for _ in range(100):  # gateway-b reclaims after the lease and finishes the run
        done = await store_b.get(record.id)
        if done is not None and done.status.finished:
            break
        await asyncio.sleep(0.1)

    store_a.heartbeat = True
    frozen.thaw.set()  # SIGCONT: gateway-a carries on where it stopped
    await asyncio.sleep(3 * LEASE_S)  # several heartbeats and writes' worth
    stop_a.set()
    stop_b.set()
    await asyncio.wait_for(asyncio.gather(task_a, task_b), 10)

    raw: Any = await client.xrange(f"ragway:run:{record.id}:events")
    log = [(f[b"type"].decode(), json.loads(f[b"data"])) for _, f in raw]
    pending: Any = await client.xpending_range(QUEUE, "executors", "-", "+", 10)
    await client.aclose()
    return log, pending


def test_a_frozen_executor_cannot_write_after_its_run_was_taken_over(redis_only: Stack) -> None:
    log, pending = asyncio.run(scenario(redis_only.config.redis_url))
    types = [t for t, _ in log]
    assert sum(t in TERMINAL_EVENTS for t in types) == 1, types
    assert types[-1] == "run.completed", types
    # The new attempt starts once and nothing of the old one comes after it.
    starts = [i for i, (t, _) in enumerate(log) if t == "run.started"]
    assert [log[i][1]["attempt"] for i in starts] == [1, 2], types
    after = [d.get("text") for t, d in log[starts[1] :] if t == "answer.delta"]
    assert "attempt " not in after and "Stale " not in after, log
    answers = [d["answer"] for t, d in log if t == "answer.completed"]
    assert answers == ["Resume with [1]."], answers
    assert pending == []  # acknowledged once, by the executor that finished it
