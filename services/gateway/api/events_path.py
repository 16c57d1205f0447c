"""The event streams' own way in: ``GET /v1/runs/{run_id}/events`` past FastAPI's router.

Streams open by the thousand at once (a widget on a busy page, every tab that
reconnects after a deploy), and each opening is CPU on the one event loop that
serves them all. At 2,000 streams opening together, FastAPI's share of each, the
router's match over every route, the dependency solver, the parameter checks and
the exception middleware's wrappers, was a quarter of the time to the last first
event (docs/performance.md). This layer sits just inside the guard, so
authentication, the rate limit, the key kind's scopes, CORS, the header bound and
the HTTP metrics apply as to every request, and hands the route's own function
(``routes/runs.py:stream_events``) what FastAPI would have: the path's run id, the
``Last-Event-ID`` header and the ``after`` query parameter, as Starlette reads
them. What that function raises is answered by the app's own exception handlers,
so an error reads the same either way.

The FastAPI route stays registered: it is the OpenAPI contract, and it serves what
this layer does not take (a path with a trailing slash, a method other than GET or
HEAD gets the router's 307 or 405 as before).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from fastapi.routing import APIRoute
from starlette.datastructures import Headers, QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from services.gateway.api.errors import endpoints
from services.gateway.api.routes.runs import stream_events

TEMPLATE = "/v1/runs/{run_id}/events"
# The router's own pattern for "{run_id}": one path segment, percent-decoded.
_EVENTS = re.compile(r"^/v1/runs/([^/]+)/events$")

Handler = Callable[[Request, Exception], Awaitable[Response] | Response]


class EventsPath:
    def __init__(self, app: ASGIApp) -> None:
        self._app = app
        self._route: APIRoute | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        matched = (
            _EVENTS.match(scope["path"])
            if scope["type"] == "http" and scope["method"] in ("GET", "HEAD")
            else None
        )
        if matched is None:
            await self._app(scope, receive, send)
            return
        app = scope["app"]
        run_id = matched.group(1)
        # What the router writes into the scope: the HTTP metrics label by the route's
        # template, and a reader of the scope finds the endpoint and its parameters.
        if self._route is None:
            self._route = _route(app.routes)
        scope["route"] = self._route
        scope["endpoint"] = stream_events
        scope["path_params"] = {"run_id": run_id}
        state = app.state
        try:
            response: Response = await stream_events(
                run_id,
                scope["state"]["principal"],  # the guard's
                state.store,
                state.hub,
                state.settings,
                state.streams,
                last_event_id=Headers(scope=scope).get("last-event-id"),
                after=QueryParams(scope["query_string"]).get("after"),
            )
        except Exception as exc:
            handler = _handler_for(app.exception_handlers, exc)
            if handler is None:
                raise  # as from the router: the server's 500
            answered = handler(Request(scope, receive), exc)
            # Starlette takes plain functions as handlers too (ragway's are async).
            response = await answered if inspect.isawaitable(answered) else answered
        await response(scope, receive, send)


def _route(routes: Any) -> APIRoute:
    """The FastAPI route this layer stands in for."""
    for route in endpoints(routes):
        if isinstance(route, APIRoute) and route.path == TEMPLATE:
            return route
    raise RuntimeError(f"no route {TEMPLATE} to stand in for")


def _handler_for(handlers: Mapping[Any, Handler], exc: Exception) -> Handler | None:
    """The app's handler for ``exc``: its class's, or the nearest base class's, as
    Starlette's exception middleware looks them up. A handler for ``Exception`` (or
    500) is the server error middleware's, outside this layer: not used here."""
    for cls in type(exc).__mro__:
        if cls is Exception:
            return None
        if cls in handlers:
            return handlers[cls]
    return None
