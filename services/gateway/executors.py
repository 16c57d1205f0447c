"""``python -m services.gateway.executors``: execute runs from the queue, serve no HTTP.

With ``RAGWAY_RUN_EXECUTORS=false`` a gateway process only serves the API and its
streams; processes of this module take the runs from the same Redis queue (a consumer
each, leases and takeover as any gateway replica's executor, runs/queue.py). Thousands
of streams on a gateway's event loop then cannot delay the runs they watch, and the
runs cannot delay the streams. It is the gateway's own lifespan (the run store, the
backends' clients, paths and the executor), without the server, until SIGTERM.

The runs' metrics (``ragway_runs_total``, ``ragway_run_duration_seconds``, the stages,
degradations, breakers, canary gates) are counted where a run executes, so this process
serves its registry as the retriever and the generator do: on
``RAGWAY_METRICS_HOST:RAGWAY_METRICS_PORT`` (0, the default, serves none). That listener
is a thread of its own and answers while the event loop is stuck: it is for scraping,
not a health check.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys

import uvloop

from ragway import logs, telemetry
from ragway.metrics import serve_metrics
from services.gateway.main import create_app
from services.gateway.settings import GatewaySettings

log = logging.getLogger(__name__)
READY = "run executors ready"  # the launcher waits for this line


async def serve(settings: GatewaySettings) -> None:
    app = create_app(settings, with_executor=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with app.router.lifespan_context(app):
        log.info(READY, extra={"concurrency": settings.executor_concurrency})
        await stop.wait()
    # Leaving the lifespan finished the runs this process held (as a gateway's does).


def main() -> int:
    settings = GatewaySettings()
    logs.configure("gateway-executors", settings.log_level, settings.log_format)
    try:
        serve_metrics(settings.metrics_host, settings.metrics_port)
    except OSError as exc:
        where = f"{settings.metrics_host}:{settings.metrics_port}"
        sys.stderr.write(f"gateway executors: cannot serve metrics on {where}: {exc.strerror}\n")
        return 2
    try:
        telemetry.configure("ragway-gateway")
        loop_factory = uvloop.new_event_loop if settings.event_loop == "uvloop" else None
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(serve(settings))
    except (FileNotFoundError, ValueError) as exc:
        sys.stderr.write(f"gateway executors: {exc}\n")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
