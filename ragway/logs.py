"""Structured logging for every ragway process.

Records carry fields passed through ``extra={...}``. Two renderings, chosen by
``RAGWAY_LOG_FORMAT``: ``text`` (the default) puts them as ``key=value`` pairs
after the message, greppable by people; ``json`` writes one JSON object per line
for log shippers.

Either way a filter on the handler stamps every record with the context it was
logged in, so log lines join traces: ``trace_id`` and ``span_id`` of the current
OpenTelemetry span (W3C hex, as trace backends show them), and ``run_id`` and
``tenant`` from the W3C baggage the run carries (ragway/telemetry.py). The
baggage is set by the executor even with tracing off, so run ids are on the lines
of a run either way; trace ids only where a span context exists.

Credentials inside URLs (``redis://:password@host``, as RAGWAY_REDIS_URL carries
them) are masked in every line of either rendering, whoever logged it: an
exception message or a library's own log may quote a URL.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from typing import Any, Literal

from opentelemetry import baggage, trace

LogFormat = Literal["text", "json"]

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}
# The baggage keys of ragway/telemetry.py (not imported: telemetry imports the SDK,
# which a process with tracing off never needs), and the log field each becomes.
_BAGGAGE_FIELDS = (("ragway.run_id", "run_id"), ("ragway.tenant", "tenant"))


class TraceContextFilter(logging.Filter):
    """Adds ``trace_id``, ``span_id``, ``run_id`` and ``tenant`` from the current context.

    A field the call passed in ``extra`` wins: a record about another run than the
    one in the context (the queue's takeovers) names that run.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        fields = record.__dict__
        span_context = trace.get_current_span().get_span_context()
        if span_context.is_valid:
            fields.setdefault("trace_id", trace.format_trace_id(span_context.trace_id))
            fields.setdefault("span_id", trace.format_span_id(span_context.span_id))
        for key, field in _BAGGAGE_FIELDS:
            value = baggage.get_baggage(key)
            if value is not None:
                fields.setdefault(field, str(value))
        return True


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in record.__dict__.items() if k not in _STANDARD}


# scheme://[user]:password@ -> scheme://[user]:***@
_URL_PASSWORD = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]*:)[^\s@/]+@")


def redact_url(text: str) -> str:
    """``text`` with the password of every URL in it replaced by ***."""
    return _URL_PASSWORD.sub(r"\1***@", text)


class KeyValueFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        base = super().format(record)
        fields = _fields(record)
        if fields:
            base += " " + " ".join(f"{k}={_render(v)}" for k, v in sorted(fields.items()))
        return redact_url(base)


def _render(value: Any) -> str:
    text = str(value)
    return f'"{text}"' if (" " in text or not text) else text


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, service, logger, message, then the fields."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": _utc(record.created),
            "level": record.levelname,
            "service": self.service,
            "logger": record.name,
            "message": record.getMessage(),
        }
        # Fields never replace the envelope: a stray extra={"message": ...} stays visible.
        for key, value in sorted(_fields(record).items()):
            line[key if key not in line else f"field.{key}"] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return redact_url(json.dumps(line, default=str, ensure_ascii=False))


def _utc(created: float) -> str:
    millis = int(created * 1000) % 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created)) + f".{millis:03d}Z"


def handler(service: str, log_format: LogFormat = "text") -> logging.Handler:
    """A stderr handler rendering ``log_format``, with the trace-context filter."""
    out = logging.StreamHandler(sys.stderr)
    if log_format == "json":
        out.setFormatter(JsonFormatter(service))
    else:
        out.setFormatter(
            KeyValueFormatter(f"%(asctime)s %(levelname)s {service} %(name)s: %(message)s")
        )
    out.addFilter(TraceContextFilter())
    return out


def configure(service: str, level: str = "INFO", log_format: LogFormat = "text") -> None:
    root = logging.getLogger()
    root.handlers[:] = [handler(service, log_format)]
    root.setLevel(level.upper())
