"""httptools under uvicorn with h11's bound on a head still arriving (ragway/http_limits.py).

A real uvicorn server on loopback with the bounded protocol and a small app; the
requests are written on raw sockets so that the pieces a head arrives in are the test's.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from ragway.http_limits import HeaderLimit, bounded_httptools

LIMIT = 4096  # the bound on a head still arriving is twice this


async def echo(request: Request) -> PlainTextResponse:
    return PlainTextResponse(f"{request.method} {len(await request.body())}")


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    app = HeaderLimit(Starlette(routes=[Route("/", echo, methods=["GET", "POST"])]), LIMIT)
    config = uvicorn.Config(
        app, http=bounded_httptools(LIMIT), loop="asyncio", log_config=None, lifespan="off"
    )
    server = uvicorn.Server(config)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    yield sock.getsockname()[1]
    server.should_exit = True
    thread.join(10)


def exchange(port: int, pieces: list[bytes], *, pause: float = 0.005) -> bytes:
    """Send each piece as its own write (paused, so each is its own read), then read
    until the server closes; a reset ends the reply where it came."""
    reply = b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        try:
            for piece in pieces:
                sock.sendall(piece)
                time.sleep(pause)
            while chunk := sock.recv(65_536):
                reply += chunk
        except (ConnectionResetError, BrokenPipeError):
            pass
    return reply


def head(header_bytes: int) -> bytes:
    return b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: " + b"a" * header_bytes


def test_a_head_streamed_past_the_bound_is_a_431_and_never_reaches_the_app(port: int) -> None:
    # 256 pieces of 1 KiB that never end the head: the server stops at twice the limit.
    reply = exchange(port, [head(10)] + [b"a" * 1024] * 256, pause=0.002)
    assert reply.startswith(b"HTTP/1.1 431 "), reply[:200]
    assert b'"code":"headers_too_large"' in reply, reply
    assert b"went on past 8192 bytes" in reply and b"at most 4096 are accepted" in reply


def test_a_head_over_the_limit_but_within_the_bound_gets_the_apps_431(port: int) -> None:
    # Under the parser's bound the app's HeaderLimit answers, with the exact size.
    data = head(6000) + b"\r\n\r\n"
    reply = exchange(port, [data[i : i + 1000] for i in range(0, len(data), 1000)])
    assert reply.startswith(b"HTTP/1.1 431 "), reply[:200]
    assert b"headers take" in reply and b"at most 4096 are accepted" in reply, reply


def test_a_head_in_many_small_pieces_within_the_limit_is_served(port: int) -> None:
    data = head(3000) + b"\r\n\r\n"
    reply = exchange(port, [data[i : i + 100] for i in range(0, len(data), 100)], pause=0.001)
    assert reply.startswith(b"HTTP/1.1 200 ") and reply.endswith(b"GET 0"), reply[:200]


def test_large_bodies_are_not_counted_as_head(port: int) -> None:
    # Bodies far past the bound, in one write and in pieces, and two requests pipelined
    # in one write: the bound counts a head, never a body or the request before it.
    body = b"b" * 50_000
    post = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 50000\r\n\r\n" + body
    close = b"POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 50000\r\n\r\n"
    reply = exchange(port, [post + close + body])
    assert reply.count(b"HTTP/1.1 200 ") == 2 and reply.count(b"POST 50000") == 2, reply[:400]
    pieces = [close] + [body[i : i + 5000] for i in range(0, len(body), 5000)]
    reply = exchange(port, pieces)
    assert reply.startswith(b"HTTP/1.1 200 ") and reply.endswith(b"POST 50000"), reply[:200]
