"""CORS for ``/v1/`` and ``/widget.js``, driven by the API keys' ``allowed_origins``.

A preflight carries no API key, so it cannot be checked against one key: it is
answered for any origin that *some* enabled key admits, and the actual request
is then checked against its own key by the API guard (403 ``origin_not_allowed``).
Actual responses to such an origin carry ``Access-Control-Allow-Origin`` so that
a browser page can read them, refusals included: the widget shows the reason.
No cookies are involved (the key travels in ``Authorization``), so
``Access-Control-Allow-Credentials`` is never sent.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.gateway.api.errors import error_response
from services.gateway.auth import KeyRegistry

ALLOW_METHODS = "GET, POST, OPTIONS"
ALLOW_HEADERS = "Authorization, Content-Type, Idempotency-Key, Last-Event-ID, X-API-Key"
# Response headers a browser script may read beyond the CORS-safelisted ones.
EXPOSE_HEADERS = "Location, Idempotent-Replayed, Retry-After, WWW-Authenticate"
PREFLIGHT_MAX_AGE_S = 600


def _covered(path: str) -> bool:
    return path.startswith("/v1/") or path == "/widget.js"


class Cors:
    def __init__(self, app: ASGIApp, registry: KeyRegistry) -> None:
        self._app = app
        self._registry = registry

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _covered(scope["path"]):
            await self._app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        origin = headers.get("origin")
        if origin is None:  # not a cross-origin browser call: nothing to add
            await self._app(scope, receive, send)
            return
        public = scope["path"] == "/widget.js"  # a public script any page may load
        admitted = public or self._registry.origin_admitted(origin)
        if scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
            await self._preflight(origin, admitted)(scope, receive, send)
            return
        if not admitted:
            await self._app(scope, receive, send)  # the guard refuses it with its reason
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                out = MutableHeaders(scope=message)
                out["Access-Control-Allow-Origin"] = origin
                out["Access-Control-Expose-Headers"] = EXPOSE_HEADERS
                out.add_vary_header("Origin")
            await send(message)

        await self._app(scope, receive, send_with_cors)

    @staticmethod
    def _preflight(origin: str, admitted: bool) -> Response:
        if not admitted:
            return error_response(
                403,
                "origin_not_allowed",
                f"origin {origin!r} may not use this API: no API key lists it",
                {"Vary": "Origin"},
            )
        return Response(
            status_code=204,
            headers={
                "Access-Control-Allow-Origin": origin,
                "Access-Control-Allow-Methods": ALLOW_METHODS,
                "Access-Control-Allow-Headers": ALLOW_HEADERS,
                "Access-Control-Max-Age": str(PREFLIGHT_MAX_AGE_S),
                "Vary": "Origin",
            },
        )
