"""A bounded, thread-safe map that forgets its least recently used entry first.

``functools.lru_cache`` memoises a function and hides whether a call was served
from memory. This map is for callers that must know (to say so in a span or a
metric) and that compute a missing value outside any lock, so other threads keep
reading while one computes: two threads that miss the same key at once may both
compute it, and the second ``put`` replaces the first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LruCache(Generic[K, V]):
    """At most ``max_entries`` entries; 0 keeps none (every ``get`` misses)."""

    def __init__(self, max_entries: int) -> None:
        if max_entries < 0:
            raise ValueError(f"max_entries must be >= 0, got {max_entries}")
        self.max_entries = max_entries
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value, now the most recently used, or None."""
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        """Keeps ``value`` as the most recently used; past the bound the least recent goes."""
        if self.max_entries == 0:
            return
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
