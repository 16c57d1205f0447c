"""Builds the gateway app: routes, the API guard, and the run executor in the lifespan."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources

import redis.asyncio as redis
from fastapi import FastAPI
from fastapi.responses import HTMLResponse

from ragway import __version__
from services.gateway.api import errors
from services.gateway.api.guard import ApiGuard
from services.gateway.api.routes import ask, conversations, health, runs
from services.gateway.auth import KeyRegistry
from services.gateway.clients import ServiceClients
from services.gateway.runs.conversations import ConversationStore
from services.gateway.runs.executor import RunExecutor
from services.gateway.runs.queue import RunQueue
from services.gateway.runs.store import RunStore
from services.gateway.settings import GatewaySettings

log = logging.getLogger(__name__)

DESCRIPTION = """Grounded, cited answers from a private knowledge base.

Authenticate with `Authorization: Bearer <key>`. Start a run with `POST /v1/runs`,
stream it from `GET /v1/runs/{id}/events` (Server-Sent Events, resumable with
`Last-Event-ID`), or ask synchronously with `POST /v1/ask`. Errors are
`{"error": {"code", "message"}}` with a precise status."""


def create_app(settings: GatewaySettings | None = None, *, with_executor: bool = True) -> FastAPI:
    settings = settings or GatewaySettings()
    registry = KeyRegistry.from_file(settings.api_keys_file)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        client = redis.Redis.from_url(settings.redis_url, max_connections=2048)
        clients = ServiceClients(
            settings.retriever_addr,
            settings.generator_addr,
            attempts=settings.grpc_attempts,
            backoff_s=settings.grpc_backoff_s,
            breaker_failures=settings.breaker_failures,
            breaker_cooldown_s=settings.breaker_cooldown_s,
        )
        app.state.store = RunStore(client)
        app.state.conversations = ConversationStore(client)
        app.state.clients = clients
        stop = asyncio.Event()
        executor_task = None
        if with_executor:
            consumer = f"{socket.gethostname()}-{os.getpid()}"
            executor = RunExecutor(
                app.state.store, clients, settings, conversations=app.state.conversations
            )
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
            if executor_task is not None:
                await executor_task  # finishes the runs it holds
            await clients.close()
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
    app.add_middleware(ApiGuard, registry=registry, max_body_bytes=settings.max_body_bytes)

    page = resources.files("services.gateway").joinpath("static/index.html").read_text()

    @app.get("/", include_in_schema=False)
    async def index() -> HTMLResponse:
        return HTMLResponse(page)

    return app
