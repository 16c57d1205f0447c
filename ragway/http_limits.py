"""Refuses a request whose headers are too large, whatever parser read them.

A parser bounds headers only while a request is still incomplete: one that arrives
whole in a single read (up to the loop's read size, 64-256 KiB) is parsed in full.
``HeaderLimit`` makes the limit the same on every path: the request is answered 431
before any middleware or route sees it.

While a request's head is still arriving, the parser is the only bound on what the
server holds. h11 has one (``h11_max_incomplete_event_size``); httptools has none, and
under uvicorn it read a 2 MB header whole before the app could refuse it.
``bounded_httptools`` gives it the same bound: a head that goes on past it over further
reads is refused with 431 and the connection closed, so the gateway parses in C
(docs/performance.md) without holding what a slow sender streams at it.

The bound is ``parser_bound`` (twice the limit), not the limit itself: a request just
over the limit then always gets the app's precise 431 whether it arrived in one read or
in several, and the parser cuts off only a sender still streaming headers past twice the
limit (httptools: its own 431; h11: its 400; either may be a reset when the client is
still writing as the socket closes).
"""

from __future__ import annotations

from typing import Any, Literal

from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ragway.http_errors import error_response


def header_bytes(scope: Scope) -> int:
    """Bytes of the request line's target and headers as sent: ``name: value\\r\\n`` each."""
    target = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
    return target + sum(len(name) + len(value) + 4 for name, value in scope["headers"])


def parser_bound(max_header_bytes: int) -> int:
    """The size at which the parser stops reading a request still arriving: the memory backstop."""
    return 2 * max_header_bytes


# How long a connection refused for its head stays open, dropping what still arrives.
LINGER_S = 2.0


def bounded_httptools(max_header_bytes: int) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol with h11's bound on a head still arriving.

    The bytes of the reads that follow the one in which a request's head began are
    counted until its headers end; past ``parser_bound`` the request is answered 431
    and the connection closed once what still arrives is drained (``_refuse``). The
    read in which the head began is not counted: it may hold the end of the request
    before it (pipelining), and it is bounded by the loop's read size anyway, as h11's
    own bound is.
    """
    bound = parser_bound(max_header_bytes)
    message = (
        f"the request's target and headers went on past {bound} bytes before they ended; "
        f"at most {max_header_bytes} are accepted"
    )
    body = bytes(error_response(431, "headers_too_large", message).body)  # as the app's
    refusal = (
        b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
        b"content-type: application/json\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\n"
        b"connection: close\r\n\r\n" + body
    )

    class BoundedHttpToolsProtocol(HttpToolsProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._in_head = False  # a request began and its headers have not ended
            self._began = False  # a request began during the current read
            self._head_bytes = 0
            self._refused = False

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return  # read and dropped until the connection closes
            self._began = False
            continued = self._in_head
            super().data_received(data)
            if not self._in_head or self.transport.is_closing():
                return
            if continued and not self._began:
                self._head_bytes += len(data)
                if self._head_bytes > bound:
                    self._refuse()

        def _refuse(self) -> None:
            # A socket closed with unread bytes in it answers the sender with a reset,
            # which may reach it before the 431 does. So the refusal is sent with the
            # write side shut, the rest of the head is read and dropped, and the
            # connection closes when the sender does or LINGER_S later.
            self._refused = True
            self.transport.write(refusal)
            if self.transport.can_write_eof():
                self.transport.write_eof()
            self.loop.call_later(LINGER_S, self.transport.close)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._in_head, self._began, self._head_bytes = True, True, 0

        def on_headers_complete(self) -> None:
            self._in_head = False
            super().on_headers_complete()

    return BoundedHttpToolsProtocol


def parser_config(parser: Literal["h11", "httptools"], max_header_bytes: int) -> dict[str, Any]:
    """``uvicorn.Config``'s parser arguments, the parser bounded at ``parser_bound`` on a
    head still arriving: h11 by its own setting, httptools through ``bounded_httptools``.
    Never uvicorn's "auto", which picks the plain httptools protocol when it is installed."""
    http = "h11" if parser == "h11" else bounded_httptools(max_header_bytes)
    return {"http": http, "h11_max_incomplete_event_size": parser_bound(max_header_bytes)}


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
