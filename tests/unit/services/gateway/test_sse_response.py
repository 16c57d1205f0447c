"""The event streams' response (services/gateway/api/sse.py) on a real uvicorn server.

What sse-starlette's response did, with one task per stream instead of four: the
chunks in order then the empty last body, HEAD without opening the stream, and a client
that goes away flags the stream, which closes its iterator and cancels that one task.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import AsyncGenerator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import Message

from services.gateway.api.sse import EventStreamResponse
from tests.loopback import serving

CHUNKS = [b": one\r\n\r\n", b"id: 1-0\r\nevent: a\r\ndata: {}\r\n\r\n", b"data: last\r\n\r\n"]


@dataclass
class Seen:
    """What the server side of one request did (read by the test's thread)."""

    started: bool = False
    closed: threading.Event = field(default_factory=threading.Event)
    first_sent: threading.Event = field(default_factory=threading.Event)
    tasks_of_response: set[asyncio.Task[Any]] = field(default_factory=set)
    response: EventStreamResponse | None = None


async def finite(seen: Seen, before: set[asyncio.Task[Any]]) -> AsyncGenerator[bytes, None]:
    seen.started = True
    seen.tasks_of_response = asyncio.all_tasks() - before
    try:
        for chunk in CHUNKS:
            yield chunk
    finally:
        seen.closed.set()


async def until_gone(seen: Seen, gone: asyncio.Event) -> AsyncGenerator[bytes, None]:
    """One chunk, then quiet until the client is gone (as the hub's ticker ends a stream)."""
    seen.started = True
    try:
        yield CHUNKS[0]
        seen.first_sent.set()
        await gone.wait()
        yield b"never sent: the client is gone\r\n\r\n"
    finally:
        seen.closed.set()


async def waits_forever(seen: Seen) -> AsyncGenerator[bytes, None]:
    """One chunk, then a wait that nothing ends (a stream between two events)."""
    seen.started = True
    try:
        yield CHUNKS[0]
        seen.first_sent.set()
        await asyncio.Event().wait()
        yield b"never sent\r\n\r\n"
    finally:
        seen.closed.set()


class App:
    def __init__(self) -> None:
        self.seen: list[Seen] = []

    async def finite(self, request: Request) -> EventStreamResponse:
        seen = Seen()
        self.seen.append(seen)
        before = asyncio.all_tasks()
        seen.response = EventStreamResponse(finite(seen, before), headers={"X-Extra": "1"})
        return seen.response

    async def until_gone(self, request: Request) -> EventStreamResponse:
        seen = Seen()
        self.seen.append(seen)
        gone = asyncio.Event()
        seen.response = EventStreamResponse(until_gone(seen, gone), disconnected=gone)
        return seen.response

    async def waits_forever(self, request: Request) -> EventStreamResponse:
        seen = Seen()
        self.seen.append(seen)
        seen.response = EventStreamResponse(waits_forever(seen))
        return seen.response

    def starlette(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/finite", self.finite, methods=["GET", "HEAD"]),
                Route("/until-gone", self.until_gone),
                Route("/waits-forever", self.waits_forever),
            ]
        )


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[App, str]]:
    app = App()
    with serving(app.starlette(), "sse-response") as url:
        yield app, url


def wait_for(condition: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_the_chunks_go_out_in_order_with_the_headers_and_one_task(
    served: tuple[App, str],
) -> None:
    app, url = served
    with httpx.Client(base_url=url, timeout=10) as client:
        resp = client.get("/finite")
    assert resp.status_code == 200
    assert resp.content == b"".join(CHUNKS)  # the chunked body ended: the last body came
    assert resp.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert resp.headers["cache-control"] == "no-store"
    assert resp.headers["x-accel-buffering"] == "no"
    assert resp.headers["connection"] == "keep-alive"
    assert resp.headers["x-extra"] == "1"
    seen = app.seen[-1]
    assert seen.response is not None
    # The request's own task sends; the one task the response started is its watcher.
    assert seen.tasks_of_response == {seen.response.watcher}
    assert seen.closed.is_set()
    watcher = seen.response.watcher
    assert watcher is not None and wait_for(watcher.done)
    assert watcher.cancelled()  # the stream ended first: the watcher was cancelled


def test_the_messages_are_the_start_each_chunk_and_an_empty_last_body() -> None:
    """The ASGI messages themselves, in order (httpx does not show the empty last body)."""

    async def call() -> list[Message]:
        sent: list[Message] = []
        request_done = asyncio.Event()

        async def receive() -> Message:
            if not request_done.is_set():
                request_done.set()
                return {"type": "http.request", "body": b"", "more_body": False}
            await asyncio.Event().wait()  # the client never goes away
            raise AssertionError("unreachable")

        async def send(message: Message) -> None:
            sent.append(message)

        seen = Seen()
        response = EventStreamResponse(finite(seen, set()))
        scope = {"type": "http", "method": "GET", "headers": []}
        await response(scope, receive, send)
        assert seen.closed.is_set()
        assert response.watcher is not None
        await asyncio.sleep(0)  # the cancelled watcher's last step
        assert response.watcher.cancelled()
        return sent

    sent = asyncio.run(call())
    assert [m["type"] for m in sent] == ["http.response.start"] + ["http.response.body"] * 4
    assert sent[0]["status"] == 200
    assert [(m["body"], m["more_body"]) for m in sent[1:]] == [
        *[(chunk, True) for chunk in CHUNKS],
        (b"", False),
    ]


def test_head_gets_the_headers_and_an_empty_body_without_opening_the_stream(
    served: tuple[App, str],
) -> None:
    app, url = served
    with httpx.Client(base_url=url, timeout=10) as client:
        resp = client.head("/finite")
    assert resp.status_code == 200
    assert resp.content == b""
    assert resp.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert resp.headers["cache-control"] == "no-store"
    seen = app.seen[-1]
    assert not seen.started
    assert seen.response is not None and seen.response.watcher is None  # no task at all


def first_chunk_then_gone(url: str, path: str) -> bytes:
    """A raw client that reads up to the first chunk and then hangs up."""
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: test\r\n\r\n".encode())
        head = b""
        while CHUNKS[0] not in head:
            head += sock.recv(4096)
    return head


def test_a_client_that_goes_away_closes_the_iterator_and_cancels_the_watcher(
    served: tuple[App, str],
) -> None:
    app, url = served
    assert first_chunk_then_gone(url, "/until-gone").startswith(b"HTTP/1.1 200 ")
    seen = app.seen[-1]
    # The iterator marks the chunk sent when the response asks it for the next one,
    # which may come after the client already read the chunk: wait for it, do not race.
    assert wait_for(seen.first_sent.is_set)
    response = seen.response
    assert response is not None
    assert wait_for(response.disconnected.is_set)
    assert wait_for(seen.closed.is_set)  # the iterator's finally ran: it was closed
    watcher = response.watcher
    assert watcher is not None and wait_for(watcher.done)


def test_a_client_that_goes_away_ends_a_waiting_stream_at_once(
    served: tuple[App, str],
) -> None:
    # The iterator's wait is cancelled when the client goes away, so what its finally
    # gives back (the stream's place among the caller's streams) is given back now,
    # not when something else ends the wait: a client that closed a stream at its limit
    # and opened another got 429.
    app, url = served
    assert first_chunk_then_gone(url, "/waits-forever").startswith(b"HTTP/1.1 200 ")
    seen = app.seen[-1]
    assert seen.response is not None
    assert wait_for(seen.closed.is_set)
    assert seen.response.disconnected.is_set()
    watcher = seen.response.watcher
    assert watcher is not None and wait_for(watcher.done)
