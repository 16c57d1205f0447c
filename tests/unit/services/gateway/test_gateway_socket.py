"""Regression: SSE events were held ~40 ms by Nagle because the listening socket had proto 0."""

from __future__ import annotations

import asyncio
import socket

import pytest

from services.gateway.__main__ import listen_socket


def test_accepted_connections_have_tcp_nodelay() -> None:
    async def accepted_nodelay() -> int:
        sock = listen_socket("127.0.0.1", 0)
        port = sock.getsockname()[1]
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            conn = writer.get_extra_info("socket")
            seen.set_result(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=sock)
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            return await asyncio.wait_for(seen, 5)
        finally:
            writer.close()
            server.close()

    assert asyncio.run(accepted_nodelay()) == 1


def test_a_port_with_a_live_listener_is_still_refused() -> None:
    first = listen_socket("127.0.0.1", 0)
    try:
        with pytest.raises(OSError, match="in use"):
            listen_socket("127.0.0.1", first.getsockname()[1])
    finally:
        first.close()
