"""The executor's own spans, one per stage, under the run's span (runs/queue.py).

Names and attributes follow the OpenTelemetry GenAI conventions where they have
one (the ``retrieval`` operation); the rest are ``ragway.*``. The question text
is never an attribute.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry.trace import Span

from ragway import telemetry
from services.gateway.runs.models import RunRecord


@contextmanager
def stage(name: str, record: RunRecord) -> Iterator[Span]:
    """A span for one stage; the tenant joins the baggage, so the gRPC call carries it."""
    attributes: dict[str, str | int] = {
        telemetry.RUN_ID: record.id,
        telemetry.TENANT: record.tenant,
        "ragway.mode": record.mode,
    }
    if name == "retrieval":
        attributes |= {"gen_ai.operation.name": "retrieval", "gen_ai.request.top_k": record.top_k}
    with (
        telemetry.with_tenant(record.tenant),
        telemetry.tracer.start_as_current_span(name, attributes=attributes) as span,
    ):
        yield span
