"""``python -m services.gateway``: serve the gateway with uvicorn until SIGTERM."""

from __future__ import annotations

import socket
import sys

import uvicorn

from ragway import logs
from services.gateway.main import create_app
from services.gateway.settings import GatewaySettings


def main() -> int:
    settings = GatewaySettings()
    logs.configure("gateway", settings.log_level)
    # Bind first, so a taken port is a one-line error rather than a traceback.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((settings.gateway_host, settings.gateway_port))
    except OSError as exc:
        where = f"{settings.gateway_host}:{settings.gateway_port}"
        sys.stderr.write(f"gateway: cannot listen on {where}: {exc.strerror}\n")
        return 2
    try:
        app = create_app(settings)
    except (FileNotFoundError, ValueError) as exc:
        sys.stderr.write(f"gateway: {exc}\n")
        return 2
    config = uvicorn.Config(app, log_config=None, timeout_graceful_shutdown=10, access_log=False)
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
