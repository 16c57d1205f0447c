"""Cancelling a run stops the work behind it; expired or foreign event ids get clear errors."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis
import redis.asyncio as aioredis

from ragway_tools.launcher import Stack, StackConfig
from services.gateway.runs.store import RunStore, events_key, run_key
from tests.conftest import FIXTURES
from tests.integration.conftest import auth
from tests.integration.runs import QUESTION, demo_record
from tests.integration.sse import TERMINAL, Sse, parse, read_events, start_run

DELAY_MS = 300


@pytest.fixture
def slow(stack: Stack, tmp_path: Path) -> Iterator[Stack]:
    """Own Redis, a generator that pauses before every delta, and a gateway."""
    config = StackConfig.on_free_ports(
        tmp_path,
        retriever_port=stack.config.retriever_port,
        service_token=stack.config.service_token,
        api_keys_file=FIXTURES / "api-keys.yaml",
        # Paced like an LLM: four-word deltas (the default is one a sentence), so
        # the answer is still streaming when the test acts on it.
        extra_env={
            "RAGWAY_FAULT_DELTA_DELAY_MS": str(DELAY_MS),
            "RAGWAY_EXTRACTIVE_DELTA_WORDS": "4",
        },
    )
    s = Stack(config)
    s.logs_dir.mkdir(parents=True)
    try:
        s.start_redis()
        s.start_service("generator")
        yield s
    finally:
        s.stop()


def test_cancelling_mid_answer_stops_the_generator_and_ends_the_stream(slow: Stack) -> None:
    slow.start_gateway()
    with httpx.Client(base_url=slow.config.gateway_url, timeout=30) as api:
        run_id = start_run(api, QUESTION, auth("demo"))
        events: list[Sse] = []
        with api.stream("GET", f"/v1/runs/{run_id}/events", headers=auth("demo")) as resp:
            for event in parse(resp.iter_lines()):
                events.append(event)
                if event.event == "answer.delta" and len(events) == 4:
                    cancel = api.post(f"/v1/runs/{run_id}/cancel", headers=auth("demo"))
                    assert cancel.status_code == 202, cancel.text
                    assert cancel.json() == {
                        "run_id": run_id, "status": "running", "cancel_requested": True
                    }  # fmt: skip
                if event.event in TERMINAL:
                    break
        names = [e.event for e in events]
        assert names[-1] == "run.cancelled"
        assert "answer.completed" not in names
        # An uncancelled answer to this question takes 6 deltas; at most one more
        # than the one in flight when the cancel landed may slip through.
        assert names.count("answer.delta") <= 2
        record = api.get(f"/v1/runs/{run_id}", headers=auth("demo")).json()
        assert record["status"] == "cancelled"
        again = api.post(f"/v1/runs/{run_id}/cancel", headers=auth("demo"))
        assert again.status_code == 409
        assert again.json()["error"]["code"] == "run_finished"
    # The generator saw the call cancelled: the work behind the run stopped too.
    assert "generation cancelled by the caller" in (slow.logs_dir / "generator.log").read_text()


async def queue_and_cancel(url: str) -> str:
    store = RunStore(aioredis.Redis.from_url(url))
    await store.ensure_queue()
    record = demo_record()
    await store.create(record, {"question": QUESTION}, None, 60)
    await store.request_cancel(record.id, 60)
    return record.id


def test_a_run_cancelled_while_queued_never_starts(slow: Stack) -> None:
    run_id = asyncio.run(queue_and_cancel(slow.config.redis_url))
    slow.start_gateway()  # its executor takes the queued run and sees the flag
    with httpx.Client(base_url=slow.config.gateway_url, timeout=30) as api:
        events = read_events(api, run_id, auth("demo"))
        assert [e.event for e in events] == ["run.accepted", "run.cancelled"]


def test_cancel_answers_404_for_unknown_and_foreign_runs(api: httpx.Client) -> None:
    assert api.post("/v1/runs/run_" + "0" * 32 + "/cancel", headers=auth("demo")).status_code == 404
    run_id = start_run(api, QUESTION, auth("acme"))
    foreign = api.post(f"/v1/runs/{run_id}/cancel", headers=auth("globex"))
    assert foreign.status_code == 404


def test_a_last_event_id_of_another_run_is_refused_with_a_pointer(api: httpx.Client) -> None:
    mine = start_run(api, QUESTION, auth("demo"))
    other = start_run(api, QUESTION, auth("demo"))
    own_ids = {e.id for e in read_events(api, mine, auth("demo"))}
    # Event ids are Redis stream ids, unique within a run: two runs writing in the
    # same millisecond can share one (docs/streaming.md). Pick one this run lacks.
    foreign_id = next(e.id for e in read_events(api, other, auth("demo")) if e.id not in own_ids)
    resp = api.get(f"/v1/runs/{mine}/events", headers=auth("demo") | {"Last-Event-ID": foreign_id})
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert error["code"] == "unknown_last_event_id"
    assert f"/v1/runs/{mine}" in error["message"]


def test_finished_runs_expire_and_then_point_to_their_record(
    api: httpx.Client, stack: Stack
) -> None:
    run_id = start_run(api, QUESTION, auth("demo"))
    events = read_events(api, run_id, auth("demo"))
    r = redis.Redis.from_url(stack.config.redis_url)
    # Retention is key expiry after the run ends, never trimming a live stream.
    assert 0 < r.ttl(events_key(run_id)) <= 24 * 3600
    assert 24 * 3600 < r.ttl(run_key(run_id)) <= 7 * 24 * 3600
    r.delete(events_key(run_id))  # what the expiry does when it fires
    for headers in (auth("demo") | {"Last-Event-ID": events[2].id}, auth("demo")):
        resp = api.get(f"/v1/runs/{run_id}/events", headers=headers)
        assert resp.status_code == 410
        assert resp.json()["error"]["code"] == "events_expired"
        assert f"/v1/runs/{run_id}" in resp.json()["error"]["message"]
    assert api.get(f"/v1/runs/{run_id}", headers=auth("demo")).json()["status"] == "succeeded"
