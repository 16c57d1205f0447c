"""``python -m services.gateway``: serve the gateway with uvicorn until SIGTERM."""

from __future__ import annotations

import socket
import sys

import uvicorn

from ragway import logs, telemetry
from ragway.http_limits import parser_config
from services.gateway.main import create_app
from services.gateway.settings import GatewaySettings


def listen_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket for uvicorn.

    The protocol must be named (IPPROTO_TCP, not 0): asyncio sets TCP_NODELAY
    only on accepted sockets whose proto says TCP, and without it every SSE
    event after the headers waited ~40 ms for a delayed ACK (Nagle).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    # Rebind right after a restart (TIME_WAIT); a live listener still refuses.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def main() -> int:
    settings = GatewaySettings()
    logs.configure("gateway", settings.log_level, settings.log_format)
    # Bind first, so a taken port is a one-line error rather than a traceback.
    try:
        sock = listen_socket(settings.gateway_host, settings.gateway_port)
    except OSError as exc:
        where = f"{settings.gateway_host}:{settings.gateway_port}"
        sys.stderr.write(f"gateway: cannot listen on {where}: {exc.strerror}\n")
        return 2
    try:
        telemetry.configure("ragway-gateway")  # before the app: instrumentation patches FastAPI
        app = create_app(settings, with_executor=settings.run_executors)
    except (FileNotFoundError, ValueError) as exc:
        sys.stderr.write(f"gateway: {exc}\n")
        return 2
    config = uvicorn.Config(
        app,
        loop=settings.event_loop,
        **parser_config(settings.http_parser, settings.max_header_bytes),
        log_config=None,
        timeout_graceful_shutdown=10,
        access_log=False,
    )
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
