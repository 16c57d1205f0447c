"""What every ragway gRPC server shares: health, reflection, limits, graceful stop.

``serve`` runs a server until SIGTERM/SIGINT, flips health to NOT_SERVING first
(so load balancers drain it), then stops with a grace period for in-flight calls.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from ragway.settings import ServiceSettings

log = logging.getLogger(__name__)
S = TypeVar("S", bound=ServiceSettings)

MAX_MESSAGE_BYTES = 32 * 1024 * 1024
SERVER_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.so_reuseport", 0),  # a taken port must fail loudly, not be shared
]


class PortInUseError(OSError):
    pass


def main(
    name: str,
    settings_factory: Callable[[], S],
    run: Callable[[S], Coroutine[Any, Any, None]],
) -> int:
    """Process entry point of a gRPC service: settings, logging, serve until SIGTERM.

    Configuration and environment problems (bad settings, missing model, taken
    port) end the process with one clear line and exit status 2, no traceback.
    """
    from ragway import logs, telemetry
    from ragway.embedding import ModelNotInstalledError
    from ragway.metrics import serve_metrics

    try:
        settings = settings_factory()
        logs.configure(name, settings.log_level, settings.log_format)
        telemetry.configure(f"ragway-{name}")  # before the server: instrumentation patches it
        try:
            serve_metrics(settings.metrics_host, settings.metrics_port)
        except OSError as exc:
            where = f"{settings.metrics_host}:{settings.metrics_port}"
            raise PortInUseError(f"cannot serve metrics on {where}: {exc.strerror}") from exc
        asyncio.run(run(settings))
    except (PortInUseError, ModelNotInstalledError, FileNotFoundError, ValueError) as exc:
        sys.stderr.write(f"{name}: {exc}\n")
        return 2
    return 0


def add_health_and_reflection(
    server: grpc.aio.Server, service_names: Sequence[str]
) -> health.HealthServicer:
    health_servicer = health.HealthServicer(experimental_non_blocking=True)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        [*service_names, reflection.SERVICE_NAME, health.SERVICE_NAME], server
    )
    return health_servicer


def bind(server: grpc.aio.Server, address: str) -> int:
    try:
        port = int(server.add_insecure_port(address))
    except RuntimeError as exc:  # grpc raises RuntimeError when it cannot bind
        raise PortInUseError(f"cannot listen on {address}: {exc}") from exc
    if port == 0:
        raise PortInUseError(f"cannot listen on {address}: port already in use?")
    return port


def set_serving(
    health_servicer: health.HealthServicer, names: Sequence[str], serving: bool
) -> None:
    status = (
        health_pb2.HealthCheckResponse.SERVING
        if serving
        else health_pb2.HealthCheckResponse.NOT_SERVING
    )
    for name in ("", *names):
        health_servicer.set(name, status)


async def serve(
    server: grpc.aio.Server,
    health_servicer: health.HealthServicer,
    names: Sequence[str],
    *,
    grace_s: float,
    on_stop: Callable[[], Awaitable[None]] | None = None,
) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await server.start()
    set_serving(health_servicer, names, True)
    await stop.wait()
    log.info("shutting down", extra={"grace_s": grace_s})
    set_serving(health_servicer, names, False)
    await server.stop(grace_s)
    if on_stop is not None:
        await on_stop()
