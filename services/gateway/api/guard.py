"""The API's front door, ahead of routing and body parsing.

For every ``/v1/`` request: authenticate (401/403) before anything else is
looked at, then count it against the caller's rate limits (429, ratelimit.py),
then refuse what the key's kind may not call (403, api/scopes.py), then for
requests with a body insist on JSON (415) and a bounded size (413).
Doing this in middleware guarantees the order: a caller without a
valid key learns nothing about the shape of the API and never reaches retrieval.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.gateway.api import scopes
from services.gateway.api.errors import error_response
from services.gateway.auth import AuthError, KeyRegistry
from services.gateway.ratelimit import RateLimiter

# The requests that start a run, counted against the runs quotas too.
STARTS_RUN = frozenset({("POST", "/v1/runs"), ("POST", "/v1/ask")})


class ApiGuard:
    def __init__(
        self, app: ASGIApp, registry: KeyRegistry, max_body_bytes: int, limiter: RateLimiter
    ) -> None:
        self._app = app
        self._registry = registry
        self._max_body = max_body_bytes
        self._limiter = limiter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/v1/"):
            await self._app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            principal = self._registry.authenticate(_api_key(headers), headers.get("origin"))
        except AuthError as exc:
            extra = {"WWW-Authenticate": 'Bearer realm="ragway"'} if exc.status == 401 else None
            await error_response(exc.status, exc.code, exc.message, extra)(scope, receive, send)
            return
        scope.setdefault("state", {})["principal"] = principal

        starts_run = (scope["method"], scope["path"].rstrip("/")) in STARTS_RUN
        decision = await self._limiter.check(principal, starts_run=starts_run)
        if not decision.allowed:
            await error_response(429, "rate_limited", decision.message, decision.headers)(
                scope, receive, send
            )
            return
        send = _with_headers(send, decision.headers)  # every answer, a stream at its start
        refused = scopes.refusal(principal.kind, principal.key_id, scope["method"], scope["path"])
        if refused is not None:
            await error_response(403, "key_kind_not_allowed", refused)(scope, receive, send)
            return

        has_body = headers.get("content-length", "0") != "0" or "transfer-encoding" in headers
        if scope["method"] in ("POST", "PUT", "PATCH") and has_body:
            ctype = headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype != "application/json":
                shown = ctype or "none"
                await error_response(
                    415,
                    "unsupported_media_type",
                    f"send 'Content-Type: application/json', not {shown!r}",
                )(scope, receive, send)
                return
            declared = headers.get("content-length")
            if declared is not None and declared.isdigit() and int(declared) > self._max_body:
                await self._too_large(scope, receive, send)
                return
            body = await self._read_body(receive)
            if body is None:
                await self._too_large(scope, receive, send)
                return
            receive = _replay(body, receive)
        await self._app(scope, receive, send)

    async def _read_body(self, receive: Receive) -> bytes | None:
        """The whole body, or None past the limit (chunked bodies declare no length)."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self._max_body:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        await error_response(
            413, "body_too_large", f"the request body exceeds {self._max_body} bytes"
        )(scope, receive, send)


def _with_headers(send: Send, headers: dict[str, str]) -> Send:
    if not headers:
        return send

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            out = MutableHeaders(scope=message)
            for name, value in headers.items():
                out[name] = value
        await send(message)

    return wrapped


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def wrapped() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # then http.disconnect, as the server reports it

    return wrapped


def _api_key(headers: dict[str, str]) -> str | None:
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip() or None
    return headers.get("x-api-key") or None
