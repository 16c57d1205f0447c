"""Runs executed by a process of their own, beside a gateway that only serves HTTP.

With ``RAGWAY_RUN_EXECUTORS=false`` the gateway takes nothing from the run queue; a
``services.gateway.executors`` process does, and the gateway's streams carry its events
exactly as when the gateway executed them (the event log in Redis is the contract).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from ragway_tools.launcher import Stack
from services.gateway.runs.store import GROUP, QUEUE
from tests.integration.conftest import auth, own_redis
from tests.integration.runs import QUESTION
from tests.integration.sse import read_events, start_run

pytestmark = pytest.mark.integration


@pytest.fixture
def split(stack: Stack, tmp_path: Path) -> Iterator[Stack]:
    with own_redis(stack, tmp_path, {"RAGWAY_RUN_EXECUTORS": "false"}) as s:
        s.start_gateway()
        s.start_executors()
        yield s
    for part in ("gateway", "executors"):
        log = (s.logs_dir / f"{part}.log").read_text()
        assert "Traceback" not in log, log[-4000:]


def test_the_executor_process_runs_what_the_gateway_streams(split: Stack) -> None:
    with httpx.Client(base_url=split.config.gateway_url, timeout=60) as api:
        run_id = start_run(api, QUESTION, auth("demo"))
        events = read_events(api, run_id, auth("demo"))
        types = [e.event for e in events]
        assert types[:3] == ["run.accepted", "run.started", "retrieval.completed"]
        assert types[-2:] == ["answer.completed", "run.completed"]
        record = api.get(f"/v1/runs/{run_id}", headers=auth("demo")).json()
        assert record["status"] == "succeeded"
        # Resume works as ever: after the third event, exactly the rest.
        rest = read_events(api, run_id, auth("demo"), last_event_id=events[2].id)
        assert [e.id for e in rest] == [e.id for e in events[3:]]

    # Only the executor process is a consumer of the queue; the gateway took nothing.
    executors_pid = split.part("executors").process.pid
    gateway_pid = split.part("gateway").process.pid
    with redis.Redis.from_url(split.config.redis_url) as r:
        consumers: Any = r.xinfo_consumers(QUEUE, GROUP)
    names = [c["name"].decode() if isinstance(c["name"], bytes) else c["name"] for c in consumers]
    assert [n.rsplit("-", 1)[1] for n in names] == [str(executors_pid)]
    assert str(gateway_pid) not in [n.rsplit("-", 1)[1] for n in names]


def test_the_gateway_and_the_executor_process_run_on_uvloop(split: Stack) -> None:
    # The setting's default (RAGWAY_EVENT_LOOP=uvloop), as each process logs the loop
    # it actually runs on: a silent fallback to asyncio would show here.
    for part in ("gateway", "executors"):
        log = (split.logs_dir / f"{part}.log").read_text()
        assert "event loop event_loop=uvloop" in log, log[-2000:]
        assert "event_loop=asyncio" not in log


def test_the_pure_python_loop_remains_a_setting(stack: Stack, tmp_path: Path) -> None:
    env = {"RAGWAY_EVENT_LOOP": "asyncio", "RAGWAY_HTTP_PARSER": "h11"}
    with own_redis(stack, tmp_path, env) as s:
        s.start_gateway()
        with httpx.Client(base_url=s.config.gateway_url, timeout=60) as api:
            run_id = start_run(api, QUESTION, auth("demo"))
            events = read_events(api, run_id, auth("demo"))
        log = (s.logs_dir / "gateway.log").read_text()
    assert events[-1].event == "run.completed"
    assert "event loop event_loop=asyncio" in log, log[-2000:]
