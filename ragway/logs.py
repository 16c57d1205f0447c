"""Structured logging for every ragway process.

Records carry fields passed through ``extra={...}``; the formatter renders them
as ``key=value`` pairs after the message so logs stay greppable and parseable.
Credentials inside URLs (``redis://:password@host``, as RAGWAY_REDIS_URL carries
them) are masked in every line, whoever logged it: an exception message or a
library's own log may quote a URL.
"""

from __future__ import annotations

import logging
import re
import sys
from typing import Any

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}
# scheme://[user]:password@ -> scheme://[user]:***@
_URL_PASSWORD = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]*:)[^\s@/]+@")


def redact_url(text: str) -> str:
    """``text`` with the password of every URL in it replaced by ***."""
    return _URL_PASSWORD.sub(r"\1***@", text)


class KeyValueFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        base = super().format(record)
        fields = {k: v for k, v in record.__dict__.items() if k not in _STANDARD}
        if fields:
            base += " " + " ".join(f"{k}={_render(v)}" for k, v in sorted(fields.items()))
        return redact_url(base)


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
