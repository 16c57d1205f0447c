"""An ASGI app served by uvicorn on a loopback port, in a thread of the test process.

For tests that need a real HTTP server on a real socket (an LLM endpoint, an SSE
response's disconnect handling, the load suite's client) without a process of
their own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from starlette.types import ASGIApp

from ragway_tools.launcher import free_port


@contextmanager
def serving(app: ASGIApp, name: str, *, port: int | None = None) -> Iterator[str]:
    """The app's base URL while it is served; stopped at once when the block ends
    (a stream still open would otherwise hold a graceful shutdown)."""
    port = port or free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=name, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"the test server {name!r} did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        server.force_exit = True
        thread.join(timeout=10)
