"""The events route's own way in (services/gateway/api/events_path.py), on a real app.

The route's function and the app's exception handlers are ragway's; only the route's
function is swapped for a recorder here (it needs Redis and the event hub, which the
integration tests give it: tests/integration/test_bad_input.py, test_metrics.py and
every streaming test go through this layer). What is checked: a stream's request
reaches the route's function with what FastAPI would have passed, and never the
router; an error reads as the app's handlers write it; what the layer does not take
reaches the router as before.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from services.gateway.api import errors, events_path
from services.gateway.api.errors import ApiError
from services.gateway.api.events_path import EventsPath
from services.gateway.api.routes import runs
from services.gateway.runs.errors import RunNotFound

PRINCIPAL = object()


class Teapot(Exception):
    """An exception an app answers with a plain function, as Starlette allows."""


class Guard:
    """Stands in for ApiGuard: puts the caller where the route's dependency reads it."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope.setdefault("state", {})["principal"] = PRINCIPAL
        await self.app(scope, receive, send)


class Seen:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.routes: list[str | None] = []


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> Seen:
    record = Seen()

    async def stream_events(run_id: str, caller: Any, *deps: Any, **given: Any) -> Response:
        record.calls.append((run_id, caller, given["last_event_id"], given["after"]))
        if run_id == "missing":
            raise RunNotFound(f"run {run_id!r} not found")
        if run_id == "bad-cursor":
            raise ApiError(400, "invalid_last_event_id", "not an event id")
        if run_id == "crash":
            raise KeyError("boom")
        if run_id == "teapot":
            raise Teapot()
        return PlainTextResponse("streamed")

    monkeypatch.setattr(events_path, "stream_events", stream_events)
    return record


def app_with(seen: Seen) -> FastAPI:
    app = FastAPI()
    errors.install(app)
    app.add_exception_handler(Teapot, lambda _request, _exc: PlainTextResponse("", 418))
    app.include_router(runs.router)
    for name in ("store", "hub", "settings", "streams"):
        setattr(app.state, name, name)

    app.add_middleware(EventsPath)
    app.add_middleware(Guard)
    app.add_middleware(RouteSeen, seen=seen)  # outermost, as the HTTP metrics are
    return app


class RouteSeen:
    """Reads the matched route from the scope after the fact, as HttpMetrics does."""

    def __init__(self, app: Any, seen: Seen) -> None:
        self.app, self.seen = app, seen

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)
        self.seen.routes.append(getattr(scope.get("route"), "path", None))


async def get(app: FastAPI, method: str, path: str, **kwargs: Any) -> httpx.Response:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://gw") as client:
        return await client.request(method, path, **kwargs)


async def test_a_stream_reaches_the_routes_function_with_its_header_and_query(seen: Seen) -> None:
    app = app_with(seen)
    resp = await get(
        app,
        "GET",
        "/v1/runs/run_1/events",
        headers={"Last-Event-ID": "5-0"},
        params=[("after", "1-0"), ("after", "2-0")],
    )
    assert resp.status_code == 200 and resp.text == "streamed"
    # The header as given; the query's last value, as FastAPI reads a scalar parameter.
    assert seen.calls == [("run_1", PRINCIPAL, "5-0", "2-0")]
    # The HTTP metrics label by the route the router would have matched.
    assert seen.routes == ["/v1/runs/{run_id}/events"]
    head = await get(app, "HEAD", "/v1/runs/run_2/events")
    assert head.status_code == 200 and seen.calls[-1] == ("run_2", PRINCIPAL, None, None)


async def test_errors_read_as_the_apps_handlers_write_them(seen: Seen) -> None:
    app = app_with(seen)
    missing = await get(app, "GET", "/v1/runs/missing/events")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "run_not_found"
    bad = await get(app, "GET", "/v1/runs/bad-cursor/events")
    assert bad.status_code == 400
    assert bad.json()["error"] == {"code": "invalid_last_event_id", "message": "not an event id"}
    # No handler for it: the server's 500, as from the router, not a swallowed error.
    crash = await get(app, "GET", "/v1/runs/crash/events")
    assert crash.status_code == 500
    teapot = await get(app, "GET", "/v1/runs/teapot/events")
    assert teapot.status_code == 418


async def test_what_the_layer_does_not_take_reaches_the_router(seen: Seen) -> None:
    app = app_with(seen)
    post = await get(app, "POST", "/v1/runs/run_1/events")
    assert post.status_code == 405 and "GET" in post.headers["allow"]
    slash = await get(app, "GET", "/v1/runs/run_1/events/")
    assert slash.status_code == 307  # the router's redirect to the path without it
    nested = await get(app, "GET", "/v1/runs/a/b/events")
    assert nested.status_code == 404
    assert seen.calls == []
