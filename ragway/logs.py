"""Structured logging for every ragway process.

Records carry fields passed through ``extra={...}``; the formatter renders them
as ``key=value`` pairs after the message so logs stay greppable and parseable.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


class KeyValueFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        base = super().format(record)
        fields = {k: v for k, v in record.__dict__.items() if k not in _STANDARD}
        if not fields:
            return base
        return base + " " + " ".join(f"{k}={_render(v)}" for k, v in sorted(fields.items()))


def _render(value: Any) -> str:
    text = str(value)
    return f'"{text}"' if (" " in text or not text) else text


def configure(service: str, level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        KeyValueFormatter(f"%(asctime)s %(levelname)s {service} %(name)s: %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
