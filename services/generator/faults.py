"""Fault injection that a load test can switch at run time: a pause before every delta.

Off unless the operator names a fault file with ``RAGWAY_FAULT_FILE``; without
that setting nothing here reads any file, so a production deployment cannot turn
a fault on by writing one. With it, the file holds JSON such as
``{"delta_delay_ms": 300}``; a missing or empty file means no fault. The file is
read again only when its modification time or size changes (one ``stat`` per
generation), and a malformed file is reported and ignored, never fatal.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

MAX_DELAY_MS = 60_000


class FaultSwitch:
    def __init__(self, path: Path | None, static_delay_ms: int = 0) -> None:
        self._path = path
        self._static_ms = static_delay_ms
        self._seen: tuple[float, int] | None = None
        self._file_ms = 0
        if path is not None:
            log.warning("fault injection enabled: reading faults from a file", extra={"path": path})

    def delta_delay_s(self) -> float:
        """The pause before each delta now: the file's value when set, else the static one."""
        if self._path is None:
            return self._static_ms / 1000
        try:
            st = os.stat(self._path)
        except FileNotFoundError:
            self._seen, self._file_ms = None, 0
            return self._static_ms / 1000
        stamp = (st.st_mtime, st.st_size)
        if stamp != self._seen:
            self._seen = stamp
            self._file_ms = _read_delay_ms(self._path)
        return (self._file_ms or self._static_ms) / 1000


def _read_delay_ms(path: Path) -> int:
    try:
        text = path.read_text()
        faults = json.loads(text) if text.strip() else {}
        value = faults.get("delta_delay_ms", 0) if isinstance(faults, dict) else None
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_DELAY_MS:
            raise ValueError(f"delta_delay_ms must be an integer 0-{MAX_DELAY_MS}, got {value!r}")
    except (OSError, ValueError) as exc:
        log.warning("fault file ignored", extra={"path": path, "error": str(exc)})
        return 0
    log.warning("generator fault set", extra={"path": path, "delta_delay_ms": value})
    return value
