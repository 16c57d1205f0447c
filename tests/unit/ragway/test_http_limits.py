"""The header bound every HTTP API of ragway applies, whatever parser read the request."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from ragway.http_limits import HeaderLimit


async def hello(request: Request) -> PlainTextResponse:
    return PlainTextResponse("hello")


def client(max_bytes: int) -> TestClient:
    app = Starlette(routes=[Route("/hello", hello)])
    return TestClient(HeaderLimit(app, max_bytes=max_bytes))


def test_headers_past_the_limit_are_a_431_with_the_reason() -> None:
    resp = client(4096).get("/hello", headers={"X-Big": "a" * 5000})
    assert resp.status_code == 431
    assert resp.headers["Connection"] == "close"
    error = resp.json()["error"]
    assert error["code"] == "headers_too_large"
    assert "at most 4096 are accepted" in error["message"]


def test_the_target_counts_toward_the_limit() -> None:
    # A long query string is as much header bytes as a long header.
    assert client(4096).get("/hello", params={"q": "a" * 5000}).status_code == 431
    assert client(4096).get("/hello", params={"q": "a" * 1000}).status_code == 200


def test_headers_within_the_limit_reach_the_app() -> None:
    resp = client(4096).get("/hello", headers={"X-Some": "a" * 3000})
    assert resp.status_code == 200 and resp.text == "hello"
