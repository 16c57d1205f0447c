"""Refuses a request whose headers are too large, whatever parser read them.

h11 bounds headers only while a request is still incomplete: one that arrives whole
in a single read (up to the loop's read size, 64-256 KiB) is parsed in full, and
httptools never bounds them. This check makes the limit the same on every path:
the request is answered 431 before any middleware or route sees it. The gateway and
the ingest API both serve with h11 (its bound on a request still arriving) and this.

h11's bound is set to ``parser_bound`` (twice the limit), not to the limit itself: a
request just over the limit then always gets the precise 431 whether it arrived in one
read or in several, and h11 cuts off only a sender still streaming headers past twice
the limit (its 400, or a reset when the client is still writing as the socket closes).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from ragway.http_errors import error_response


def header_bytes(scope: Scope) -> int:
    """Bytes of the request line's target and headers as sent: ``name: value\\r\\n`` each."""
    target = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
    return target + sum(len(name) + len(value) + 4 for name, value in scope["headers"])


def parser_bound(max_header_bytes: int) -> int:
    """The size at which h11 stops reading a request still arriving: the memory backstop."""
    return 2 * max_header_bytes


class HeaderLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self._app = app
        self._max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":  # neither API serves websockets
            size = header_bytes(scope)
            if size > self._max_bytes:
                message = (
                    f"the request's target and headers take {size} bytes; "
                    f"at most {self._max_bytes} are accepted"
                )
                refusal = error_response(431, "headers_too_large", message, {"Connection": "close"})
                await refusal(scope, receive, send)
                return
        await self._app(scope, receive, send)
