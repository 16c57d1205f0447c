"""A failing dependency is cut off: runs fail fast, the API answers 503, then it recovers."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ragway_tools.launcher import Stack, StackConfig
from tests.conftest import FIXTURES
from tests.integration.conftest import auth
from tests.integration.runs import QUESTION
from tests.integration.sse import read_events, start_run


@pytest.fixture
def fragile(stack: Stack, tmp_path: Path) -> Iterator[Stack]:
    """Own Redis and retriever (so it can be killed), the session's generator, a gateway."""
    config = StackConfig.on_free_ports(
        tmp_path,
        generator_port=stack.config.generator_port,
        service_token=stack.config.service_token,
        api_keys_file=FIXTURES / "api-keys.yaml",
        extra_env={
            "RAGWAY_BREAKER_FAILURES": "2",
            "RAGWAY_BREAKER_COOLDOWN_S": "1",
            "RAGWAY_GRPC_ATTEMPTS": "2",
            "RAGWAY_GRPC_BACKOFF_S": "0.01",
        },
    )
    s = Stack(config)
    s.logs_dir.mkdir(parents=True)
    try:
        s.start_redis()
        s.start_service("retriever")
        s.start_gateway()
        yield s
    finally:
        s.stop()


def test_a_dead_retriever_trips_the_breaker_and_recovery_closes_it(fragile: Stack) -> None:
    with httpx.Client(base_url=fragile.config.gateway_url, timeout=30) as api:
        assert read_events(api, start_run(api, QUESTION, auth("demo")), auth("demo"))[-1].event == (
            "run.completed"
        )
        fragile.kill("retriever", signal.SIGKILL)

        # Two UNAVAILABLE attempts (retried once) fail the run and open the breaker.
        failed = read_events(api, start_run(api, QUESTION, auth("demo")), auth("demo"))
        assert failed[-1].event == "run.failed"
        assert failed[-1].json["error"]["code"] == "retriever_unavailable"

        # While it is open, nothing is accepted: 503 with Retry-After, no run queued.
        refused = api.post("/v1/runs", json={"question": QUESTION}, headers=auth("demo"))
        assert refused.status_code == 503
        assert refused.json()["error"]["code"] == "dependency_unavailable"
        assert int(refused.headers["Retry-After"]) >= 1
        ready = api.get("/readyz").json()
        assert ready["checks"]["retriever"] is False
        # The breaker is visible where operators look.
        assert ready["status"] == "unavailable"
        assert ready["breakers"]["retriever"] in ("open", "half-open")
        assert ready["breakers"]["generator"] == "closed"

        fragile.start_service("retriever")  # same index folder
        # As a client would: retry until a run completes. The cooldown is 1 s, then a
        # trial call closes the breaker once the channel has reconnected.
        deadline = time.monotonic() + 20
        outcomes: list[str] = []
        while time.monotonic() < deadline:
            resp = api.post("/v1/runs", json={"question": QUESTION}, headers=auth("demo"))
            if resp.status_code == 202:
                outcomes.append(read_events(api, resp.json()["run_id"], auth("demo"))[-1].event)
                if outcomes[-1] == "run.completed":
                    break
            else:
                assert resp.status_code == 503, resp.text
            time.sleep(0.2)
        assert outcomes and outcomes[-1] == "run.completed", outcomes
        ready = api.get("/readyz").json()
        assert ready["status"] == "ok" and ready["breakers"]["retriever"] == "closed", ready
