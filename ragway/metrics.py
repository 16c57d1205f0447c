"""Prometheus metrics shared by every service: the registry, the exposition, HTTP counters.

Each service declares its own metrics (``services/*/metrics.py``) against
``REGISTRY`` with the ``ragway_`` prefix; this module only provides the means:

    gateway, ingest API    GET /metrics on their own HTTP port (``exposition``)
    retriever, generator   a plain HTTP listener on RAGWAY_METRICS_PORT (``serve_metrics``);
                           0, the default, serves nothing

One registry per process, not the library's global default, so that importing
a third-party package that registers collectors cannot change what we expose,
and tests can list exactly ragway's metrics.

Latency histograms carry exemplars: the trace and span id of the sampled span that
was current when a value was observed (``exemplar``), so a slow bucket leads to a
trace. The text format has no exemplars; a scraper that asks for OpenMetrics
(``Accept: application/openmetrics-text``, as Prometheus does with exemplar storage
on) gets them.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from opentelemetry import trace
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    start_http_server,
)
from prometheus_client.exposition import choose_encoder

log = logging.getLogger(__name__)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")

REGISTRY = CollectorRegistry(auto_describe=True)
PREFIX = "ragway_"

# Seconds. Runs take tens of milliseconds (extractive) to tens of seconds (LLM),
# so the buckets span both, denser where the budgets are (0.5-8 s).
LATENCY_BUCKETS = (
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.0,
    4.0,
    8.0,
    15.0,
    30.0,
    60.0,
)

HTTP_REQUESTS = Counter(
    "ragway_http_requests",
    "HTTP requests answered, by route template, method and status code.",
    ["route", "method", "status"],
    registry=REGISTRY,
)

HTTP_DURATION = Histogram(
    "ragway_http_request_duration_seconds",
    "Time from a request's arrival to its response headers, by route template and method.",
    ["route", "method"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def exposition(accept: str = "") -> tuple[bytes, str]:
    """``REGISTRY`` exposed for ``GET /metrics`` and its content type: OpenMetrics (with the
    exemplars) when ``accept``, the request's Accept header, asks for it, else the text format.

    The retriever's and generator's listener (``start_http_server``) chooses the same way.
    """
    encoder, content_type = choose_encoder(accept)
    return encoder(REGISTRY), content_type


def exemplar() -> dict[str, str] | None:
    """The current span's trace and span id, for a histogram observation; None without one.

    With tracing off the current span is the API's invalid span: no exemplar, and
    the cost is one context lookup. An unsampled span's trace is not stored anywhere,
    so it makes no exemplar either.
    """
    ctx = trace.get_current_span().get_span_context()
    if not ctx.is_valid or not ctx.trace_flags.sampled:
        return None
    return {"trace_id": format(ctx.trace_id, "032x"), "span_id": format(ctx.span_id, "016x")}


def serve_metrics(host: str, port: int) -> int | None:
    """Serve ``REGISTRY`` on ``host:port`` in a daemon thread; ``port == 0`` serves nothing.

    Returns the port served, or None when off. A taken port raises OSError at
    start-up, so a misconfigured service fails loudly rather than silently.
    """
    if port == 0:
        return None
    start_http_server(port, addr=host, registry=REGISTRY)
    log.info("metrics listening", extra={"host": host, "port": port})
    return port


class HttpMetrics:
    """ASGI middleware counting and timing every HTTP response by route template.

    The route template (``/v1/runs/{run_id}``) keeps the label set bounded; a
    path no route matched counts as ``unmatched``. Streaming responses (SSE)
    are counted and timed when their status is sent, not when the stream ends:
    the duration is the time to the response headers.
    """

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        counted = False
        started = time.perf_counter()

        async def counting_send(message: Message) -> None:
            nonlocal counted
            if message["type"] == "http.response.start" and not counted:
                counted = True
                self._count(scope, int(message["status"]), started)
            await send(message)

        try:
            await self._app(scope, receive, counting_send)
        except Exception:
            if not counted:
                self._count(scope, 500, started)
            raise

    def _count(self, scope: Scope, status: int, started: float) -> None:
        # Starlette's router writes the matched route into the shared scope.
        route = scope.get("route")
        template = getattr(route, "path", None) or "unmatched"
        method = scope.get("method", "")
        HTTP_REQUESTS.labels(template, method, str(status)).inc()
        HTTP_DURATION.labels(template, method).observe(
            time.perf_counter() - started, exemplar=exemplar()
        )


def reason_label(reason: str) -> str:
    """A degradation reason as a bounded label value.

    Reasons are sentences for people ("sparse search missed its 900 ms deadline",
    "timeout: first token after 4 s"); a label must not take a new value per
    request, so the code before a colon is kept and numbers become ``N``.
    """
    head = reason.split(":", 1)[0].strip().lower()
    return _NUMBER.sub("N", head)[:80] or "unknown"
