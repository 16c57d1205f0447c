"""The retriever's own spans: one ``retrieval`` span per Search, one child per stage.

    /ragway.v1.Retriever/Search     gRPC server span (the instrumentation's)
      └─ retrieval                  gen_ai.operation.name=retrieval, top_k, build, RRF k
          ├─ embeddings <model>     gen_ai.operation.name=embeddings (per query part),
          │                         ragway.embeddings.cached: the vector was kept, no model ran
          ├─ ragway.dense           candidates found
          ├─ ragway.sparse          candidates found
          ├─ ragway.fuse            fused candidates, RRF k
          └─ ragway.rerank          depth, artifact

Names and attributes follow the OpenTelemetry GenAI conventions where they have
one (``retrieval``, ``embeddings``); what they lack is ``ragway.*``. The query text
and the documents are never attributes.

The stages run in a thread pool, where the asyncio task's context is not current:
each stage span names its parent context explicitly (``Stages``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind
from opentelemetry.util.types import AttributeValue

tracer = trace.get_tracer("ragway.retriever")

Attributes = dict[str, AttributeValue]


@contextmanager
def retrieval(attributes: Attributes) -> Iterator[Span]:
    """The span of one Search's pipeline (the caller adds what it learns as it goes)."""
    with tracer.start_as_current_span(
        "retrieval",
        kind=SpanKind.INTERNAL,
        attributes={"gen_ai.operation.name": "retrieval", **attributes},
    ) as span:
        yield span


class Stages:
    """Starts stage spans under the context that was current when it was made."""

    def __init__(self) -> None:
        self._parent: Context = otel_context.get_current()

    @contextmanager
    def span(self, name: str, attributes: Attributes | None = None) -> Iterator[Span]:
        # Not made current: nothing inside a stage starts spans of its own, and a
        # context attached in a pool thread would have to be detached there too.
        span = tracer.start_span(name, context=self._parent, attributes=attributes)
        try:
            yield span
        except BaseException as exc:
            span.record_exception(exc)
            span.set_status(trace.StatusCode.ERROR, type(exc).__name__)
            raise
        finally:
            span.end()


def embeddings_attributes(model: str, query_part: str) -> Attributes:
    attributes: Attributes = {"gen_ai.operation.name": "embeddings", "gen_ai.request.model": model}
    if query_part:
        attributes["ragway.query_part"] = query_part
    return attributes


def part_attributes(query_part: str) -> Attributes:
    return {"ragway.query_part": query_part} if query_part else {}
