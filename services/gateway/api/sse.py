"""The event streams' HTTP response: a chunk iterator sent as ``text/event-stream``.

It replaces sse-starlette's ``EventSourceResponse``, whose anyio task group started
four tasks per stream (the sender, a ping loop, an exit-signal listener, a disconnect
listener) and a cancel scope per send: at 2,000 streams opening at once that was about
a third of the gateway's CPU (docs/performance.md). Here the request's own task sends
the chunks, and one task per stream waits for the client to go away. Heartbeats and the
shutdown's ``stream.closing`` come from the chunk iterator itself (the event hub's one
ticker hands a quiet stream its heartbeat and polls ``exiting()``), not from tasks of
the response's own.

The contract with the iterator: it is closed (``aclose``) however the response ends;
when the client goes away while it waits, the wait is cancelled (its ``finally`` blocks
run at once), and the response sends nothing more.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Mapping

from sse_starlette.sse import AppStatus
from starlette.background import BackgroundTask
from starlette.datastructures import MutableHeaders
from starlette.responses import Response
from starlette.types import Receive, Scope, Send


def exiting() -> bool:
    """True once the server was told to stop (SIGTERM, SIGINT): streams then say goodbye.

    Importing sse_starlette.sse replaces uvicorn's ``Server.handle_exit`` with one that
    also sets ``AppStatus.should_exit`` (that import is ours: ragway still encodes its
    events with sse_starlette's ``ServerSentEvent``). A process-wide flag is what the
    event hub's ticker can read for every stream at every tick at no cost; it is the
    flag sse-starlette's own responses read. uvicorn's ``Server.should_exit`` (which
    sse-starlette also polls, through the SIGTERM handler, for servers whose handler was
    bound before the patch) is not needed: the gateway imports its routes, and so this
    module, in ``create_app`` before ``Server.run`` binds its signal handlers.
    """
    return AppStatus.should_exit


class EventStreamResponse(Response):
    """Sends ``chunks`` as they come, as ``text/event-stream``, then the empty last body.

    HEAD gets the headers and an empty body, and the iterator is never started: an
    endless stream would never send its last body (sse-starlette's issue #218).
    ``disconnected`` is set when the client goes away (an ``http.disconnect``).
    """

    media_type = "text/event-stream"

    def __init__(
        self,
        chunks: AsyncGenerator[bytes, None],
        *,
        disconnected: asyncio.Event | None = None,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        background: BackgroundTask | None = None,
    ) -> None:
        self.chunks = chunks
        self.disconnected = asyncio.Event() if disconnected is None else disconnected
        self.status_code = status_code
        self.background = background
        # The headers sse-starlette's response sent, so clients and proxies see no change:
        # not cached, not buffered by a proxy (nginx: X-Accel-Buffering), kept alive.
        given = MutableHeaders(headers=dict(headers or {}))
        given.setdefault("Cache-Control", "no-store")
        given["Connection"] = "keep-alive"
        given["X-Accel-Buffering"] = "no"
        self.init_headers(given)
        self.watcher: asyncio.Task[None] | None = None
        self._streaming = False  # chunks are being sent: a disconnect may cancel that

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            send = self._wrap_websocket_denial_send(send)
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": self.status_code,
                    "headers": self.raw_headers,
                }
            )
            if scope["type"] == "http" and scope["method"] == "HEAD":
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            else:
                await self._stream(receive, send)
        finally:
            if self.watcher is not None:
                self.watcher.cancel()
            await self.chunks.aclose()
        if self.background is not None:
            await self.background()

    async def _stream(self, receive: Receive, send: Send) -> None:
        task = asyncio.current_task()
        self.watcher = asyncio.create_task(self._watch(receive, task), name="sse-disconnect")
        self._streaming = True
        try:
            async for chunk in self.chunks:
                if self.disconnected.is_set():
                    return
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        except asyncio.CancelledError:
            if not self.disconnected.is_set() or task is None:
                raise  # not ours: the server is cancelling the request
            # The watcher's: the client went away while the stream waited. The iterator
            # saw the cancellation at its await and has ended (its finally blocks ran).
            task.uncancel()
            return
        finally:
            self._streaming = False
        if not self.disconnected.is_set():
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _watch(self, receive: Receive, stream: asyncio.Task[object] | None) -> None:
        """The one task of a stream: waits for the client to go away, then ends the
        stream at once, wherever it waits (its place among the caller's streams is given
        back now, not at the hub's next tick: a client that closes one stream and opens
        another at its limit gets the place)."""
        while (await receive())["type"] != "http.disconnect":
            pass  # a request body (an event stream's GET has none): nothing to do
        self.disconnected.set()
        # Only while the chunks are being sent: never into the response's own cleanup.
        if self._streaming and stream is not None:
            stream.cancel()
