"""One in-memory span exporter for every unit test that checks spans.

The global TracerProvider can be set once per process, and the tracers ragway's
modules take at import follow it: every test module shares this one provider.
"""

from __future__ import annotations

from functools import cache

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ragway import telemetry


@cache
def memory_exporter() -> InMemorySpanExporter:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(telemetry.RunAttributes())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return exporter
