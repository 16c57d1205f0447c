"""Log lines join traces: trace and span ids, run id and tenant from the current context.

A local TracerProvider (not the global one, which a process sets once) starts the
spans; the handler under test writes into a string buffer.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import baggage, context, trace
from opentelemetry.sdk.trace import TracerProvider

from ragway import logs, telemetry

TRACER = TracerProvider().get_tracer("test")


@pytest.fixture
def capture() -> Iterator[tuple[logging.Logger, io.StringIO, logging.StreamHandler[Any]]]:
    buffer = io.StringIO()
    handler = logs.handler("test-service", "json")
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(buffer)
    logger = logging.getLogger("ragway.test_logs")
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    try:
        yield logger, buffer, handler
    finally:
        logger.handlers[:] = []


def lines(buffer: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


def test_a_json_line_inside_a_run_span_carries_its_trace_span_run_and_tenant(
    capture: tuple[logging.Logger, io.StringIO, logging.StreamHandler[Any]],
) -> None:
    logger, buffer, _ = capture
    ctx = baggage.set_baggage(telemetry.RUN_ID, "run-1")
    ctx = baggage.set_baggage(telemetry.TENANT, "demo", ctx)
    token = context.attach(ctx)
    try:
        with TRACER.start_as_current_span("stage") as span:
            logger.info("stage done", extra={"hits": 3})
    finally:
        context.detach(token)
    [line] = lines(buffer)
    span_context = span.get_span_context()
    assert line["trace_id"] == f"{span_context.trace_id:032x}"
    assert line["span_id"] == f"{span_context.span_id:016x}"
    assert (line["run_id"], line["tenant"]) == ("run-1", "demo")
    assert (line["message"], line["hits"], line["level"]) == ("stage done", 3, "INFO")
    assert (line["service"], line["logger"]) == ("test-service", "ragway.test_logs")
    assert line["time"].endswith("Z")


def test_outside_any_span_or_run_a_line_has_no_context_fields(
    capture: tuple[logging.Logger, io.StringIO, logging.StreamHandler[Any]],
) -> None:
    logger, buffer, _ = capture
    logger.warning("starting")
    [line] = lines(buffer)
    assert not {"trace_id", "span_id", "run_id", "tenant"} & set(line)


def test_a_run_id_passed_in_extra_wins_over_the_one_in_the_context(
    capture: tuple[logging.Logger, io.StringIO, logging.StreamHandler[Any]],
) -> None:
    logger, buffer, _ = capture
    with telemetry.continue_trace("", run_id="run-in-context"):
        logger.warning("reclaimed run", extra={"run_id": "run-taken-over"})
    [line] = lines(buffer)
    assert line["run_id"] == "run-taken-over"


def test_a_run_continued_from_its_stored_traceparent_logs_that_trace_even_with_tracing_off(
    capture: tuple[logging.Logger, io.StringIO, logging.StreamHandler[Any]],
) -> None:
    # No SDK span is started: the extracted remote parent is the current span context.
    logger, buffer, _ = capture
    traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    with telemetry.continue_trace(traceparent, run_id="run-2", tenant="acme"):
        logger.info("executing")
    [line] = lines(buffer)
    assert line["trace_id"] == "0af7651916cd43dd8448eb211c80319c"
    assert line["span_id"] == "b7ad6b7169203331"
    assert (line["run_id"], line["tenant"]) == ("run-2", "acme")


def test_an_exception_is_one_json_line_with_its_traceback(
    capture: tuple[logging.Logger, io.StringIO, logging.StreamHandler[Any]],
) -> None:
    logger, buffer, _ = capture
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logger.exception("run execution crashed")
    [line] = lines(buffer)
    assert "RuntimeError: boom" in line["exception"]


def test_text_lines_carry_the_same_context_as_key_value_pairs() -> None:
    buffer = io.StringIO()
    handler = logs.handler("gateway")
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(buffer)
    record = logging.LogRecord("ragway.x", logging.INFO, __file__, 1, "hello", None, None)
    with (
        telemetry.continue_trace("", run_id="run-3"),
        TRACER.start_as_current_span("s") as span,
    ):
        handler.handle(record)
    text = buffer.getvalue()
    assert "INFO gateway ragway.x: hello" in text
    assert f"trace_id={trace.format_trace_id(span.get_span_context().trace_id)}" in text
    assert "run_id=run-3" in text
