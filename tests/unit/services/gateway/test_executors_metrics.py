"""``python -m services.gateway.executors`` serves the runs' metrics (deployed apart).

A run's metrics (``ragway_runs_total``, ``ragway_run_duration_seconds``, ...) are counted
by the process that executes it. With the executors in their own process, as the
shipped deployments run them, nothing scraped them until this process served its
registry on ``RAGWAY_METRICS_PORT`` as the retriever and the generator do.
"""

from __future__ import annotations

import asyncio
import socket
import urllib.request

import pytest

from ragway import logs, telemetry
from services.gateway import executors
from services.gateway.settings import GatewaySettings


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logs, "configure", lambda *a, **k: None)
    monkeypatch.setattr(telemetry, "configure", lambda *a, **k: None)


def test_the_executors_process_serves_the_runs_metrics_on_its_metrics_port(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = _free_port()
    monkeypatch.setenv("RAGWAY_METRICS_HOST", "127.0.0.1")
    monkeypatch.setenv("RAGWAY_METRICS_PORT", str(port))
    scraped: list[str] = []

    def scrape() -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            return str(reply.read().decode())

    async def serve(settings: GatewaySettings) -> None:  # the runs' loop, replaced
        scraped.append(await asyncio.to_thread(scrape))

    monkeypatch.setattr(executors, "serve", serve)
    assert executors.main() == 0
    assert "ragway_runs_total" in scraped[0]
    assert "ragway_run_duration_seconds" in scraped[0]


def test_a_taken_metrics_port_stops_it_with_one_line_and_status_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    monkeypatch.setenv("RAGWAY_METRICS_HOST", "127.0.0.1")
    monkeypatch.setenv("RAGWAY_METRICS_PORT", str(taken.getsockname()[1]))

    async def serve(settings: GatewaySettings) -> None:
        raise AssertionError("no runs are executed without the metrics listener it asked for")

    monkeypatch.setattr(executors, "serve", serve)
    try:
        assert executors.main() == 2
    finally:
        taken.close()
    assert "gateway executors: cannot serve metrics on 127.0.0.1:" in capsys.readouterr().err
