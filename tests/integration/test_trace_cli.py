"""``ragway trace RUN_ID`` against the session stack's Redis: a finished run's timeline."""

from __future__ import annotations

import json

import httpx
from typer.testing import CliRunner

from ragway_tools.cli import app
from ragway_tools.launcher import Stack
from tests.integration.conftest import auth
from tests.integration.sse import read_events, start_run


def test_a_finished_run_prints_its_stage_tree_and_event_timeline(
    stack: Stack, api: httpx.Client
) -> None:
    run_id = start_run(api, "How do I resume a stream after a disconnect?", auth("demo"))
    assert read_events(api, run_id, auth("demo"))[-1].event == "run.completed"
    redis_url = stack.config.redis_url
    shown = CliRunner().invoke(app, ["trace", run_id, "--redis-url", redis_url])
    assert shown.exit_code == 0, shown.output
    for part in (run_id, "Stages", "retrieve", "generate", "Events", "run.completed"):
        assert part in shown.output
    as_json = CliRunner().invoke(app, ["trace", run_id, "--redis-url", redis_url, "--json"])
    assert as_json.exit_code == 0, as_json.output
    timeline = json.loads(as_json.output)
    stages = {(s["depth"], s["stage"]) for s in timeline["stages"]}
    assert {(0, "total"), (1, "retrieve"), (2, "sparse"), (2, "fuse"), (1, "generate")} <= stages
    events = [e["type"] for e in timeline["events"]]
    assert events[0] == "run.accepted" and events[-1] == "run.completed"
    offsets = [e["at_ms"] for e in timeline["events"]]
    assert offsets == sorted(offsets) and offsets[0] >= 0


def test_an_unknown_run_id_is_one_clear_error_and_exit_status_1(stack: Stack) -> None:
    shown = CliRunner().invoke(
        app, ["trace", "run_does_not_exist", "--redis-url", stack.config.redis_url]
    )
    assert shown.exit_code == 1
    assert "no run 'run_does_not_exist'" in shown.output
