"""Real HTTP servers on loopback for the LLM backend tests.

``LlamaServer`` runs llama-cpp-python's OpenAI-compatible server
(``python -m llama_cpp.server``) with the packaged SmolLM2 GGUF model.

``Endpoint`` is a small OpenAI-compatible HTTP server (Starlette on uvicorn, in
a thread) whose replies the test lines up: pass a request through to the real
llama server, answer 429/503 with ``Retry-After``, stall without a byte, or
stream a scripted reply. The scripted reply exists for one case only: a model
that invents a number, which the real 135M model does not do on demand.
The endpoint records every request and whether the client hung up mid-stream.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ragway_tools.launcher import free_port
from tests.loopback import serving


def require_llama_cpp() -> None:
    """llama-cpp-python must be installed; with RAGWAY_TEST_REQUIRE_LLM=1 (``make test``)
    or in CI its absence fails the test run instead of skipping."""
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        if os.environ.get("CI") or os.environ.get("RAGWAY_TEST_REQUIRE_LLM") == "1":
            pytest.fail(
                "llama-cpp-python is not installed, and the LLM tests are required: "
                "run 'make install-llm'"
            )
        pytest.skip("llama-cpp-python is not installed (run 'make install-llm')")


def smollm2_path() -> Path:
    from services.generator.backends.llama_local import packaged_gguf

    return packaged_gguf()


class LlamaServer:
    """``python -m llama_cpp.server`` on a free loopback port, with SmolLM2."""

    def __init__(self, log_path: Path, model: Path) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.model = "smollm2-135m"
        self._log = open(log_path, "ab")  # noqa: SIM115 - closed in stop()
        args = [
            "--model", str(model),
            "--model_alias", self.model,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", "4096",
            "--n_threads", "1",
            "--n_threads_batch", "1",
        ]  # fmt: skip
        self.process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", *args],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited: see {log_path}")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"llama_cpp.server not ready in 120 s: see {log_path}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


# -- what the endpoint does with the next request ---------------------------
@dataclass(frozen=True)
class Proxy:
    upstream: str  # base URL of a real OpenAI-compatible server


@dataclass(frozen=True)
class Status:
    code: int
    retry_after: str | None = None


@dataclass(frozen=True)
class Stall:
    """Accept the request and send nothing until the client goes away."""


@dataclass(frozen=True)
class Script:
    """Stream these pieces as chat-completion chunks, then finish."""

    pieces: tuple[str, ...]
    finish_reason: str = "stop"
    stall_after: bool = False  # then send nothing more, as a model that hangs mid-reply
    # (prompt_tokens, completion_tokens): sent after the finish as OpenAI does with
    # stream_options.include_usage, in a chunk of its own with no choices.
    usage: tuple[int, int] | None = None


Behaviour = Proxy | Status | Stall | Script


@dataclass
class Seen:
    at: float  # time.monotonic() when the request arrived
    body: dict[str, object]
    authorization: str | None
    hung_up: bool = False  # the client closed the stream before its end
    finished: bool = False
    forwarded: int = 0  # bytes of the reply sent so far


@dataclass
class Endpoint:
    """Serves queued behaviours in order; the last one repeats."""

    behaviours: deque[Behaviour] = field(default_factory=deque)
    requests: list[Seen] = field(default_factory=list)
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def then(self, *behaviours: Behaviour) -> Endpoint:
        self.behaviours.clear()
        self.behaviours.extend(behaviours)
        self.requests.clear()
        return self

    def _next(self) -> Behaviour:
        return self.behaviours.popleft() if len(self.behaviours) > 1 else self.behaviours[0]

    async def chat(self, request: Request) -> Response:
        body = await request.json()
        seen = Seen(time.monotonic(), body, request.headers.get("authorization"))
        self.requests.append(seen)
        behaviour = self._next()
        if isinstance(behaviour, Status):
            headers = {"Retry-After": behaviour.retry_after} if behaviour.retry_after else {}
            return JSONResponse(
                {"error": {"message": f"status {behaviour.code}"}},
                status_code=behaviour.code,
                headers=headers,
            )
        if isinstance(behaviour, Stall):
            return StreamingResponse(self._stall(seen), media_type="text/event-stream")
        if isinstance(behaviour, Script):
            return StreamingResponse(self._script(seen, behaviour), media_type="text/event-stream")
        return StreamingResponse(
            self._proxy(seen, behaviour.upstream, body), media_type="text/event-stream"
        )

    async def _stall(self, seen: Seen) -> AsyncIterator[bytes]:
        try:
            await asyncio.sleep(3600)
            yield b""
        finally:
            seen.hung_up = True

    async def _script(self, seen: Seen, script: Script) -> AsyncIterator[bytes]:
        try:
            for piece in script.pieces:
                yield _sse({"choices": [{"index": 0, "delta": {"content": piece}}]})
                await asyncio.sleep(0)
            if script.stall_after:
                await asyncio.sleep(3600)
            end = {"index": 0, "delta": {}, "finish_reason": script.finish_reason}
            yield _sse({"choices": [end]})
            if script.usage is not None:
                prompt, completion = script.usage
                counts = {"prompt_tokens": prompt, "completion_tokens": completion}
                yield _sse({"choices": [], "usage": counts | {"total_tokens": prompt + completion}})
            yield b"data: [DONE]\n\n"
            seen.finished = True
        finally:
            seen.hung_up = not seen.finished

    async def _proxy(self, seen: Seen, upstream: str, body: object) -> AsyncIterator[bytes]:
        try:
            async with (
                httpx.AsyncClient(timeout=60) as client,
                client.stream("POST", f"{upstream}/chat/completions", json=body) as response,
            ):
                async for raw in response.aiter_raw():
                    seen.forwarded += len(raw)
                    yield raw
            seen.finished = True
        finally:
            seen.hung_up = not seen.finished


def _sse(event: dict[str, object]) -> bytes:
    return f"data: {json.dumps(event)}\n\n".encode()


def serve_endpoint() -> Iterator[Endpoint]:
    """Run an ``Endpoint`` on a free loopback port until the generator is closed."""
    endpoint = Endpoint(behaviours=deque([Stall()]), port=free_port())
    app = Starlette(routes=[Route("/v1/chat/completions", endpoint.chat, methods=["POST"])])
    with serving(app, "llm-endpoint", port=endpoint.port):
        yield endpoint
