"""Bad input gets a precise 4xx with a message — never a 5xx, never a retrieval."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx
import pytest

from ragway_tools.launcher import Stack
from tests.integration.conftest import auth, own_redis
from tests.integration.sse import start_run

JSON = {"Content-Type": "application/json"}


def error(resp: httpx.Response, status: int, code: str | None = None) -> str:
    assert resp.status_code == status, resp.text
    body = resp.json()["error"]
    if code is not None:
        assert body["code"] == code
    assert body["message"]
    message: str = body["message"]
    return message


@pytest.mark.parametrize(
    ("body", "code", "fragment"),
    [
        ({"question": ""}, "invalid_request", "question"),
        ({"question": "   \n\t"}, "invalid_request", "question"),
        ({"question": "x" * 20_000}, "question_too_long", "20000 characters; the limit is 4000"),
        ({}, "invalid_request", "question: Field required"),
        ({"question": 42}, "invalid_request", "question"),
        ({"question": "ok?", "top_k": 0}, "invalid_request", "top_k"),
        ({"question": "ok?", "mode": "magic"}, "invalid_request", "mode"),
        ({"question": "ok?", "surprise": 1}, "invalid_request", "surprise"),
    ],
)
@pytest.mark.parametrize("path", ["/v1/runs", "/v1/ask"])
def test_invalid_bodies_get_422_naming_the_field(
    api: httpx.Client, path: str, body: dict[str, object], code: str, fragment: str
) -> None:
    assert fragment in error(api.post(path, json=body, headers=auth("demo")), 422, code)


def test_malformed_json_is_a_422(api: httpx.Client) -> None:
    resp = api.post("/v1/runs", content=b'{"question": ', headers={**auth("demo"), **JSON})
    assert "not valid JSON" in error(resp, 422, "invalid_request")


@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", None])
def test_a_wrong_content_type_is_a_415(api: httpx.Client, ctype: str | None) -> None:
    headers = auth("demo") | ({"Content-Type": ctype} if ctype else {})
    resp = api.post("/v1/runs", content=b'{"question": "hi"}', headers=headers)
    assert "application/json" in error(resp, 415, "unsupported_media_type")


def test_an_oversized_body_is_a_413(api: httpx.Client) -> None:
    resp = api.post("/v1/runs", content=b" " * 70_000, headers={**auth("demo"), **JSON})
    error(resp, 413, "body_too_large")


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    [
        ({}, 401, "missing_api_key"),
        ({"Authorization": "Bearer wrong"}, 401, "invalid_api_key"),
        ({"Authorization": "Basic abc"}, 401, "missing_api_key"),
        ({"X-API-Key": "wrong"}, 401, "invalid_api_key"),
        (auth("disabled"), 403, "key_disabled"),
        (auth("demo") | {"Origin": "https://evil.example"}, 403, "origin_not_allowed"),
    ],
)
def test_credentials_are_checked_before_anything_else(
    api: httpx.Client, headers: dict[str, str], status: int, code: str
) -> None:
    # A bad body too: authentication must answer first.
    for method, path, kwargs in [
        ("POST", "/v1/runs", {"content": b"not json"}),
        ("POST", "/v1/ask", {"json": {"question": ""}}),
        ("GET", "/v1/runs/run_0123", {}),
        ("GET", "/v1/runs/run_0123/events", {}),
    ]:
        resp = api.request(method, path, headers=headers, **kwargs)  # type: ignore[arg-type]
        error(resp, status, code)
        if status == 401:
            assert resp.headers["WWW-Authenticate"].startswith("Bearer")


def test_x_api_key_header_is_accepted(api: httpx.Client) -> None:
    assert (
        api.post(
            "/v1/runs", json={"question": "hi?"}, headers={"X-API-Key": "key-acme-staff"}
        ).status_code
        == 202
    )


@pytest.mark.parametrize(
    "run_id", ["run_" + "0" * 32, "nope", "RUN_" + "0" * 32, "run_%7Bx%7D", "x" * 300]
)
def test_an_unknown_run_id_is_a_404(api: httpx.Client, run_id: str) -> None:
    error(api.get(f"/v1/runs/{run_id}", headers=auth("demo")), 404, "run_not_found")
    error(api.get(f"/v1/runs/{run_id}/events", headers=auth("demo")), 404, "run_not_found")


@pytest.mark.parametrize(
    "bad",
    [
        "abc",
        "12",
        "1-2-3",
        "-1-0",
        "1.5-0",
        "9" * 30 + "-0",
        # Shaped like an id, but a part is past 2^64 - 1: Redis rejects it (was a 503).
        "18446744073709551616-0",
        "0-18446744073709551616",
        "99999999999999999999-99999999999999999999",
    ],
)
def test_a_malformed_last_event_id_is_a_400(api: httpx.Client, bad: str) -> None:
    run_id = start_run(api, "How do I resume a stream?", auth("demo"))
    resp = api.get(f"/v1/runs/{run_id}/events", headers=auth("demo") | {"Last-Event-ID": bad})
    assert "Last-Event-ID" in error(resp, 400, "invalid_last_event_id")
    resp = api.get(f"/v1/runs/{run_id}/events", params={"after": bad}, headers=auth("demo"))
    error(resp, 400, "invalid_last_event_id")


def test_an_after_with_a_trailing_newline_is_a_400(api: httpx.Client) -> None:
    # Python's '$' matched before a final newline, so "1-0\n" passed and Redis refused it.
    run_id = start_run(api, "How do I resume a stream?", auth("demo"))
    resp = api.get(f"/v1/runs/{run_id}/events", params={"after": "1-0\n"}, headers=auth("demo"))
    error(resp, 400, "invalid_last_event_id")


def test_a_malformed_after_beside_a_last_event_id_header_is_still_a_400(
    api: httpx.Client,
) -> None:
    # Found by schemathesis: the header wins, and a bad ?after= beside it went unread.
    run_id = start_run(api, "How do I resume a stream?", auth("demo"))
    for header in ("", "0-0"):
        resp = api.get(
            f"/v1/runs/{run_id}/events",
            params={"after": "\u0084"},
            headers=auth("demo") | {"Last-Event-ID": header},
        )
        error(resp, 400, "invalid_last_event_id")


def test_the_largest_event_id_is_accepted_as_a_cursor(api: httpx.Client) -> None:
    run_id = start_run(api, "How do I resume a stream?", auth("demo"))
    top = f"{2**64 - 1}-{2**64 - 1}"
    resp = api.get(f"/v1/runs/{run_id}/events", params={"after": top}, headers=auth("demo"))
    # A well-formed id that is not one of the run's events: the precise 400, not a 503.
    error(resp, 400, "unknown_last_event_id")


def test_an_unknown_route_and_method_answer_in_the_error_shape(api: httpx.Client) -> None:
    error(api.get("/v1/nothing", headers=auth("demo")), 404, "not_found")
    resp = api.delete("/v1/runs", headers=auth("demo"))
    error(resp, 405, "method_not_allowed")
    assert resp.headers["Allow"] == "POST"


def test_idempotency_key_returns_the_first_run_and_rejects_a_different_body(
    api: httpx.Client,
) -> None:
    headers = auth("demo") | {"Idempotency-Key": "order-42"}
    first = api.post("/v1/runs", json={"question": "How do I resume a stream?"}, headers=headers)
    again = api.post("/v1/runs", json={"question": "How do I resume a stream?"}, headers=headers)
    assert first.status_code == 202 and again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert first.json()["run_id"] == again.json()["run_id"]
    other = api.post("/v1/runs", json={"question": "Something else?"}, headers=headers)
    assert first.json()["run_id"] in error(other, 422, "idempotency_key_reused")
    # The same key under another API key is another caller's key space.
    mine = api.post(
        "/v1/runs",
        json={"question": "How do I resume a stream?"},
        headers=auth("acme") | {"Idempotency-Key": "order-42"},
    )
    assert mine.status_code == 202 and mine.json()["run_id"] != first.json()["run_id"]


def test_an_overlong_idempotency_key_is_a_400(api: httpx.Client) -> None:
    resp = api.post(
        "/v1/runs", json={"question": "hi?"}, headers=auth("demo") | {"Idempotency-Key": "k" * 300}
    )
    error(resp, 400, "invalid_idempotency_key")


def oversized_request(gateway_url: str, header_bytes: int, *, pieces: int = 1) -> bytes:
    """The reply to a GET whose one header holds ``header_bytes`` bytes, sent in ``pieces``.

    A server that stops reading closes a socket with unread bytes in it, and the kernel
    answers the client with a reset: then the reply is what arrived before it, often
    nothing (CI saw the reset at recv). A reply of 200 can only come after a whole read.
    """
    host, port = gateway_url.removeprefix("http://").split(":")
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: "
    request += b"a" * header_bytes + b"\r\n\r\n"
    step = -(-len(request) // pieces)
    reply = b""
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        try:
            for start in range(0, len(request), step):
                sock.sendall(request[start : start + step])
                if pieces > 1:
                    time.sleep(0.005)  # each piece its own read, as from a slow sender
            while chunk := sock.recv(65_536):  # every answer here closes the connection
                reply += chunk
        except (ConnectionResetError, BrokenPipeError):
            pass
    return reply


def status_of(reply: bytes) -> str:
    return reply.split(b" ", 2)[1].decode() if reply.startswith(b"HTTP/1.1 ") else "reset"


def test_headers_over_the_limit_get_a_431_with_the_reason(stack: Stack) -> None:
    # Past the limit but under the parser's backstop (twice it): always the app's 431,
    # in one read or in several. Regression: with h11 cut off at the limit itself, the
    # answer was a 400 or a 431 depending on how the kernel split the bytes.
    for pieces in (1, 8):
        reply = oversized_request(stack.config.gateway_url, 20_000, pieces=pieces)
        assert reply.startswith(b"HTTP/1.1 431 "), (pieces, reply[:200])
        assert b'"code":"headers_too_large"' in reply and b"at most 16384" in reply


def test_oversized_headers_are_refused_not_buffered(stack: Stack) -> None:
    # The default parser, httptools with the gateway's bound (ragway/http_limits.py).
    # Whole in one write, 64 KiB reaches the gateway in one read (parsed, then the app's
    # 431) or in several (the parser stops at 32 KiB: its own 431). Regressions: CI read
    # it whole and answered 200 (no app limit); CI later saw a reset, which the test
    # took for an error.
    whole = oversized_request(stack.config.gateway_url, 65_536)
    assert status_of(whole) in ("431", "reset"), whole[:200]
    # Sent slowly, 1 MiB never reaches the app: the parser stops reading at 32 KiB and
    # answers for itself. Plain httptools held it all and the app answered (its "take
    # N bytes"). At 4 times the loop's largest read (256 KiB), it cannot arrive whole
    # even if the gateway stalls while it is sent.
    slow = oversized_request(stack.config.gateway_url, 1 << 20, pieces=64)
    assert status_of(slow) in ("431", "reset"), slow[:200]
    assert b"take" not in slow, slow[-300:]
    if slow:
        assert b"went on past 32768 bytes before they ended" in slow, slow[-300:]
        assert b'"code":"headers_too_large"' in slow, slow[-300:]
    assert httpx.get(f"{stack.config.gateway_url}/healthz", timeout=10).status_code == 200


def test_oversized_headers_are_refused_with_h11_too(stack: Stack, tmp_path: Path) -> None:
    # h11 (RAGWAY_HTTP_PARSER=h11) bounds a head while it arrives with its own 400; a
    # head that arrives whole gets the app's 431 with its reason.
    with own_redis(stack, tmp_path, {"RAGWAY_HTTP_PARSER": "h11"}) as s:
        s.start_gateway()
        over = oversized_request(s.config.gateway_url, 20_000, pieces=8)
        slow = oversized_request(s.config.gateway_url, 1 << 20, pieces=64)
        fits = oversized_request(s.config.gateway_url, 8_000)
    assert over.startswith(b"HTTP/1.1 431 "), over[:200]
    assert b'"code":"headers_too_large"' in over and b"at most 16384" in over, over[-300:]
    assert status_of(slow) in ("400", "reset"), slow[:200]
    assert fits.startswith(b"HTTP/1.1 200 "), fits[:200]
