"""A Redis that accepts connections and never answers (a partition) fails calls, not hangs.

Regression (issue 16): the gateway's Redis client had no socket timeout, so a
partitioned Redis hung every request and every executor write for ever. A
listening socket that never replies stands in for it.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from services.gateway.main import create_app
from services.gateway.settings import GatewaySettings
from tests.conftest import FIXTURES


@pytest.fixture
def silent_redis() -> Iterator[str]:
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:  # take every connection, read nothing, answer nothing
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"redis://127.0.0.1:{server.getsockname()[1]}/0"
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


def test_a_request_against_a_silent_redis_is_a_503_within_the_socket_timeout(
    silent_redis: str,
) -> None:
    settings = GatewaySettings(
        api_keys_file=FIXTURES / "api-keys.yaml",
        redis_url=silent_redis,
        redis_socket_timeout_s=2.0,
    )
    app = create_app(settings, with_executor=False)
    answer: list[tuple[int, str, float]] = []

    def call() -> None:
        with TestClient(app) as http:
            t0 = time.monotonic()
            resp = http.get(
                "/v1/runs/run_" + "0" * 32, headers={"Authorization": "Bearer key-acme-staff"}
            )
            answer.append((resp.status_code, resp.json()["error"]["code"], time.monotonic() - t0))

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(30)
    assert answer, "the request hung on the silent Redis"
    status, code, took_s = answer[0]
    assert (status, code) == (503, "store_unavailable")
    # The rate limiter's call and the store's each wait out one timeout at most.
    assert took_s < 3 * settings.redis_socket_timeout_s + 2
