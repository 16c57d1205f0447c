"""OpenTelemetry tracing, configured only by the standard ``OTEL_*`` environment variables.

Off unless ``OTEL_TRACES_EXPORTER`` names an exporter (``otlp`` or ``console``) or an
``OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`` is set, and ``OTEL_SDK_DISABLED`` is not
``true``. Off installs nothing: the API's no-op tracer answers ragway's own spans.
On, ``configure`` installs the SDK TracerProvider (service name, sampler and
resource attributes from ``OTEL_SERVICE_NAME``, ``OTEL_TRACES_SAMPLER[_ARG]`` and
``OTEL_RESOURCE_ATTRIBUTES``, read by the SDK itself) and the maintained
instrumentations: FastAPI, gRPC client (aio and sync) and aio server, Redis, httpx,
Celery.

These are OpenTelemetry's own variables, not ragway settings, which is why this
module reads the environment rather than a ``*Settings`` object.

The run's context crosses the Redis run queue as a W3C ``traceparent`` stored in
the queue entry (``current_traceparent`` when queued, ``continue_trace`` when
executed). ``ragway.run_id`` and ``ragway.tenant`` travel as W3C baggage, which the
gRPC and Celery instrumentations propagate with the trace; a span processor copies
them onto every span each process starts.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib.util import find_spec

from opentelemetry import baggage, context, trace
from opentelemetry.context import Context
from opentelemetry.propagate import extract, inject
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

log = logging.getLogger(__name__)

RUN_ID = "ragway.run_id"
TENANT = "ragway.tenant"
_BAGGAGE_KEYS = (RUN_ID, TENANT)
# Probes and scrapes would be most of the spans and tell nothing.
EXCLUDED_URLS = "/metrics,/healthz,/readyz"

tracer = trace.get_tracer("ragway")


def enabled(env: Mapping[str, str] | None = None) -> bool:
    """Whether the ``OTEL_*`` variables ask for traces."""
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter:
        return exporter != "none"
    return bool(
        env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    )


def configure(
    service_name: str,
    *,
    exporter: SpanExporter | None = None,
    env: Mapping[str, str] | None = None,
) -> TracerProvider | None:
    """Install tracing for this process when the environment asks for it; else nothing.

    ``service_name`` is the default ``service.name``; ``OTEL_SERVICE_NAME`` or a
    ``service.name`` in ``OTEL_RESOURCE_ATTRIBUTES`` wins. ``exporter`` replaces the
    one the environment names (tests pass an in-memory exporter). Call it once,
    before any app, server, channel or client is created: the instrumentations
    patch their constructors.
    """
    env = os.environ if env is None else env
    if exporter is None and not enabled(env):
        return None
    resource = Resource.create()
    # The SDK's default is "unknown_service:<executable>": neither variable named one.
    if str(resource.attributes.get(SERVICE_NAME, "unknown_service")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: service_name}))
    provider = TracerProvider(resource=resource)  # the sampler comes from OTEL_TRACES_SAMPLER
    provider.add_span_processor(RunAttributes())
    provider.add_span_processor(BatchSpanProcessor(exporter or _exporter(env)))
    trace.set_tracer_provider(provider)
    _instrument(provider)
    log.info("tracing on", extra={"service_name": resource.attributes.get(SERVICE_NAME)})
    return provider


def _exporter(env: Mapping[str, str]) -> SpanExporter:
    name = env.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() or "otlp"
    if name == "console":
        return ConsoleSpanExporter()
    if name != "otlp":
        raise ValueError(f"OTEL_TRACES_EXPORTER={name!r}: ragway ships 'otlp' and 'console'")
    protocol = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get(
        "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"
    )
    if protocol != "http/protobuf":
        raise ValueError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r}: ragway ships the http/protobuf exporter"
        )
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()  # endpoint, headers, timeout: OTEL_EXPORTER_OTLP_*


def _instrument(provider: TracerProvider) -> None:
    """The instrumentations of the libraries this process has installed.

    Each service image installs only its own libraries (deploy/docker/requirements),
    and an instrumentation module imports the library it patches.
    """
    from opentelemetry.instrumentation.grpc import (
        GrpcAioInstrumentorClient,
        GrpcAioInstrumentorServer,
        GrpcInstrumentorClient,
        filters,
    )
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

    # The aio server interceptor awaits every handler; the library health and
    # reflection servicers are synchronous, and probes would be most spans anyway.
    untraced = filters.any_of(filters.health_check(), filters.service_prefix("grpc.reflection."))
    GrpcAioInstrumentorServer(filter_=filters.negate(untraced)).instrument(  # type: ignore[no-untyped-call]
        tracer_provider=provider
    )
    # Readiness probes call the peers' health service: a root trace each, untraced.
    GrpcAioInstrumentorClient(filter_=filters.negate(filters.health_check())).instrument(  # type: ignore[no-untyped-call]
        tracer_provider=provider
    )
    # The ingest worker writes to the retriever over a synchronous channel
    # (ragway/service_auth.py): without this its task's trace would stop there.
    GrpcInstrumentorClient(filter_=filters.negate(filters.health_check())).instrument(  # type: ignore[no-untyped-call]
        tracer_provider=provider
    )
    HTTPXClientInstrumentor().instrument(tracer_provider=provider)
    if find_spec("fastapi") is not None:
        from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

        # No span per ASGI send/receive: an SSE stream would get one per event.
        FastAPIInstrumentor().instrument(
            tracer_provider=provider,
            excluded_urls=EXCLUDED_URLS,
            exclude_spans=["receive", "send"],
        )
    if find_spec("redis") is not None:
        from opentelemetry.instrumentation.redis import RedisInstrumentor

        RedisInstrumentor().instrument(tracer_provider=provider)
    if find_spec("celery") is not None:
        from opentelemetry.instrumentation.celery import CeleryInstrumentor

        CeleryInstrumentor().instrument(tracer_provider=provider)  # type: ignore[no-untyped-call]


class RunAttributes(SpanProcessor):
    """Copies the run id and tenant from the baggage onto every span started under them."""

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        for key in _BAGGAGE_KEYS:
            value = baggage.get_baggage(key, parent_context)
            if value is not None:
                span.set_attribute(key, str(value))

    def on_end(self, span: ReadableSpan) -> None:
        return None


def current_traceparent() -> str:
    """The active span's W3C ``traceparent``, or "" when there is none (tracing off)."""
    carrier: dict[str, str] = {}
    inject(carrier)
    return carrier.get("traceparent", "")


@contextmanager
def continue_trace(traceparent: str, *, run_id: str, tenant: str | None = None) -> Iterator[None]:
    """Make ``traceparent`` the parent, and the run's id and tenant the baggage, of the block.

    The executor picks a run up long after the request that queued it ended; its
    spans still join that request's trace. Without a stored traceparent (queued
    with tracing off) the block starts a new trace.
    """
    ctx = extract({"traceparent": traceparent} if traceparent else {})
    ctx = baggage.set_baggage(RUN_ID, run_id, ctx)
    if tenant is not None:
        ctx = baggage.set_baggage(TENANT, tenant, ctx)
    token = context.attach(ctx)
    try:
        yield
    finally:
        context.detach(token)


@contextmanager
def untraced() -> Iterator[None]:
    """No instrumentation spans in the block: for polls that would each start a trace."""
    from opentelemetry.instrumentation.utils import suppress_instrumentation

    with suppress_instrumentation():
        yield


@contextmanager
def with_tenant(tenant: str) -> Iterator[None]:
    """Add the tenant to the baggage of the block (known only once the run's record is read)."""
    token = context.attach(baggage.set_baggage(TENANT, tenant))
    try:
        yield
    finally:
        context.detach(token)
