"""Whether the retriever is serving searches: when a live write may take every core.

A live write (a webhook's upsert, an access change) embeds on its own one-thread
session so that searches keep the other cores (docs/ingestion.md). Most of the time
no search is running, and that thread leaves the rest of the machine idle: while
the searches are quiet, the write's batches run on the bulk session instead, on
every core. Quiet means no search in flight and none ended for ``quiet_s``, so a
steady stream of searches keeps writes narrow between two of them as well; a
search that starts during a wide batch stops it (``on_search``), and the batch
runs again on the write's own thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class SearchActivity:
    """Searches in flight and when the last one ended; read from any thread."""

    def __init__(
        self,
        quiet_s: float,
        clock: Callable[[], float] = time.monotonic,
        *,
        on_search: Callable[[], None] | None = None,
    ) -> None:
        """``on_search`` is called as each search starts (to interrupt wide writes)."""
        if quiet_s < 0:
            raise ValueError(f"quiet_s must be >= 0, got {quiet_s}")
        self.quiet_s = quiet_s
        self._clock = clock
        self._on_search = on_search
        self._lock = threading.Lock()
        self._in_flight = 0
        # Quiet from the start: a retriever that has served no search yet is idle.
        self._last_end = clock() - quiet_s

    @contextmanager
    def searching(self) -> Iterator[None]:
        with self._lock:
            self._in_flight += 1
        if self._on_search is not None:
            self._on_search()
        try:
            yield
        finally:
            with self._lock:
                self._in_flight -= 1
                self._last_end = self._clock()

    def quiet(self) -> bool:
        with self._lock:
            return self._in_flight == 0 and self._clock() - self._last_end >= self.quiet_s
