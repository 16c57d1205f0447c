"""Builds the gateway app: routes, the API guard, and the run executor in the lifespan."""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from redis.exceptions import RedisError

from ragway import __version__, redis_pools, telemetry
from ragway.http_limits import HeaderLimit
from ragway.metrics import HttpMetrics, exposition
from services.gateway import metrics
from services.gateway.api import errors, spec
from services.gateway.api.cors import Cors
from services.gateway.api.events_path import EventsPath
from services.gateway.api.guard import ApiGuard
from services.gateway.api.routes import admin, ask, conversations, health, runs
from services.gateway.auth import KeyRegistry
from services.gateway.clients import ServiceClients
from services.gateway.paths.control import PathControl
from services.gateway.paths.models import RerankerOffer
from services.gateway.paths.store import PathStore
from services.gateway.ratelimit import RateLimiter
from services.gateway.runs.conversations import ConversationStore
from services.gateway.runs.executor import RunExecutor
from services.gateway.runs.fanout import EventHub
from services.gateway.runs.feedback import FeedbackStore
from services.gateway.runs.queue import RunQueue
from services.gateway.runs.store import RunStore
from services.gateway.settings import GatewaySettings
from services.gateway.streams import StreamSlots

log = logging.getLogger(__name__)
# How often the queue depth gauge is refreshed from Redis: a scrape interval's worth.
QUEUE_SAMPLE_S = 5.0

# Names the gateway's Redis connections in CLIENT LIST (the hub's adds "-events").
REDIS_CLIENT_NAME = "ragway-gateway"

DEMO_WIDGET_KEY = "rgw-demo-public-key"  # config/api-keys.yaml, for /widget-demo

DESCRIPTION = """Grounded, cited answers from a private knowledge base.

Authenticate with `Authorization: Bearer <key>`. Start a run with `POST /v1/runs`,
stream it from `GET /v1/runs/{id}/events` (Server-Sent Events, resumable with
`Last-Event-ID`), or ask synchronously with `POST /v1/ask`. Errors are
`{"error": {"code", "message"}}` with a precise status."""


def create_app(settings: GatewaySettings | None = None, *, with_executor: bool = True) -> FastAPI:
    settings = settings or GatewaySettings()
    registry = KeyRegistry.from_file(settings.api_keys_file)
    service_token = settings.service_token_value()  # read now: a bad file fails the start

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # The loop this process runs on (RAGWAY_EVENT_LOOP), as it runs: a process that
        # fell back to asyncio says so here rather than only in its latency.
        loop_module = type(asyncio.get_running_loop()).__module__.split(".")[0]
        log.info("event loop", extra={"event_loop": loop_module})
        # A fixed pool that callers queue on: a burst of requests (2,000 streams opening
        # at once) waits for a connection instead of opening one each.
        # Both pools replace the connections a Redis restart closed (ragway/redis_pools.py).
        client = redis_pools.bounded_client(
            settings.redis_url,
            max_connections=settings.redis_max_connections,
            wait_s=settings.redis_pool_wait_s,
            socket_timeout_s=settings.redis_socket_timeout_s,
            connect_timeout_s=settings.redis_connect_timeout_s,
            client_name=REDIS_CLIENT_NAME,
        )
        # The hub's blocking read holds its connection: a pool of its own, of one.
        hub = EventHub(
            redis_pools.single_connection_client(
                settings.redis_url,
                socket_timeout_s=settings.redis_socket_timeout_s,
                connect_timeout_s=settings.redis_connect_timeout_s,
                client_name=f"{REDIS_CLIENT_NAME}-events",
            ),
            client,
            buffer_events=settings.stream_buffer_events,
            recent_events=settings.stream_recent_events,
        )
        hub.start()
        app.state.hub = hub
        clients = ServiceClients(
            settings.retriever_addr,
            settings.generator_addr,
            attempts=settings.grpc_attempts,
            backoff_s=settings.grpc_backoff_s,
            breaker_failures=settings.breaker_failures,
            breaker_cooldown_s=settings.breaker_cooldown_s,
            service_token=service_token,
        )
        app.state.store = RunStore(client, max_queue_depth=settings.max_queue_depth)
        app.state.conversations = ConversationStore(client)
        app.state.streams = StreamSlots(
            client, per_key=settings.streams_per_key, per_tenant=settings.streams_per_tenant
        )
        app.state.feedback = FeedbackStore(client)
        app.state.clients = clients

        async def rerankers() -> list[RerankerOffer]:
            return [
                RerankerOffer.model_validate({f: getattr(r, f) for f in RerankerOffer.model_fields})
                for r in await clients.list_rerankers()
            ]

        paths = PathControl(
            PathStore(client),
            clients.describe_build,
            record_ttl_s=settings.record_retention_s,
            list_rerankers=rerankers,
        )
        app.state.paths = paths
        stop = asyncio.Event()
        executor_task = None
        sampler = asyncio.create_task(
            _sample_queue_depth(app.state.store, stop), name="queue-depth"
        )
        if with_executor:
            consumer = f"{socket.gethostname()}-{os.getpid()}"
            executor = RunExecutor(
                app.state.store, clients, settings, paths, conversations=app.state.conversations
            )
            paths.attach_shadow(executor.shadow)
            queue = RunQueue(
                app.state.store,
                executor.execute,
                consumer=consumer,
                concurrency=settings.executor_concurrency,
                lease_s=settings.run_lease_s,
            )
            executor_task = asyncio.create_task(queue.run(stop), name="run-executor")
        try:
            yield
        finally:
            stop.set()
            await sampler
            if executor_task is not None:
                await executor_task  # finishes the runs it holds
            await hub.close()  # after the executor: its last events still reach streams
            await app.state.streams.close()
            await paths.close()
            await clients.close()
            await hub.reader.aclose()
            await client.aclose()

    app = FastAPI(
        title="ragway",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
    )
    app.state.settings = settings
    errors.install(app)
    app.include_router(runs.router)
    app.include_router(ask.router)
    app.include_router(conversations.router)
    app.include_router(health.router)
    app.include_router(admin.router)
    # Innermost: behind the guard, ahead of FastAPI's router (api/events_path.py).
    app.add_middleware(EventsPath)
    app.add_middleware(
        ApiGuard,
        registry=registry,
        max_body_bytes=settings.max_body_bytes,
        limiter=RateLimiter(settings),
    )
    # Outside the guard: a preflight is answered before the guard asks for a key.
    app.add_middleware(Cors, registry=registry)
    # Before anything reads a header: one parser-independent bound (ragway/http_limits.py).
    app.add_middleware(HeaderLimit, max_bytes=settings.max_header_bytes)
    # Outermost, so requests the guard or CORS refuse (401, 403, 413, 429) are counted too.
    app.add_middleware(HttpMetrics)

    static = resources.files("services.gateway").joinpath("static")
    page = static.joinpath("index.html").read_text()
    widget = static.joinpath("widget.js").read_text()
    widget_demo = static.joinpath("widget-demo.html").read_text()

    @app.get("/", include_in_schema=False)
    async def index() -> HTMLResponse:
        return HTMLResponse(page)

    @app.get("/widget.js", include_in_schema=False)
    async def widget_js() -> Response:
        # Embedded by pages of other origins: let them load it under COEP too.
        return Response(
            widget,
            media_type="text/javascript",
            headers={
                "Cache-Control": "public, max-age=300",
                "Cross-Origin-Resource-Policy": "cross-origin",
                "X-Content-Type-Options": "nosniff",
            },
        )

    @app.get("/widget-demo", include_in_schema=False)
    async def widget_demo_page(key: str = DEMO_WIDGET_KEY) -> HTMLResponse:
        # ?key= tries another key; escaped, as it lands in an attribute.
        body = widget_demo.replace(DEMO_WIDGET_KEY, html.escape(key, quote=True))
        # The policy a careful host page would set: the widget needs nothing inline.
        csp = "default-src 'none'; script-src 'self'; connect-src 'self'"
        return HTMLResponse(body, headers={"Content-Security-Policy": csp})

    @app.get("/metrics", include_in_schema=False)
    async def prometheus_metrics(request: Request) -> Response:
        body, content_type = exposition(request.headers.get("accept", ""))
        return Response(body, media_type=content_type)

    if settings.console == "html":
        # The evidence console (docs/channels.md): static, holds no secret; its API calls
        # carry the key the user types, so the guard on /v1 decides what it may read.
        console = static.joinpath("console.html").read_text()

        @app.get("/console", include_in_schema=False)
        async def evidence_console() -> HTMLResponse:
            return HTMLResponse(console)
    elif settings.console == "gradio":
        # Imported only when asked for: the default gateway never loads Gradio.
        from services.gateway.console.app import mount

        mount(app, registry, settings.ask_timeout_s)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = spec.tidy_parameters(FastAPI.openapi(app))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


async def _sample_queue_depth(store: RunStore, stop: asyncio.Event) -> None:
    """Keep ``ragway_queue_depth`` current; a scrape cannot wait on Redis itself."""
    while not stop.is_set():
        try:
            with telemetry.untraced():
                metrics.QUEUE_DEPTH.set(await store.queue_depth())
        except (RedisError, OSError) as exc:  # the queue reader logs Redis outages already
            log.debug("queue depth sample failed", extra={"error": str(exc)})
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), QUEUE_SAMPLE_S)
