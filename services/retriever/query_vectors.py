"""The vectors of the texts searches embedded, kept in memory by model and text.

A website's chat widget asks the same few questions many times ("how do I
cancel"), and a text's vector under one model never changes, while embedding a
question is about half of a search's CPU (docs/performance.md). A search looks
its texts up here first (the whole question, its parts, the respelt question, a
followed reference) and embeds only those it misses.

Keyed by the embedder's model id and the exact text, so a model change cannot
return another model's vector. The vectors are stored as read-only copies and
handed out as they are stored: a caller that tried to change one in place would
fail rather than change every later search's question. Bounded by entries
(``RAGWAY_QUERY_VECTOR_CACHE_ENTRIES``, each about 2 KB with its key); 0 turns it off.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ragway.embedding import Embedder, Vectors
from ragway.lru import LruCache


class QueryVectorCache:
    """``observe`` hears "hit" or "miss" for every lookup while the cache is on."""

    def __init__(self, max_entries: int, observe: Callable[[str], None] | None = None) -> None:
        self._vectors: LruCache[tuple[str, str], Vectors] = LruCache(max_entries)
        self._observe = observe or (lambda _outcome: None)

    @property
    def max_entries(self) -> int:
        return self._vectors.max_entries

    def __len__(self) -> int:
        return len(self._vectors)

    def vector(self, embedder: Embedder, text: str) -> tuple[Vectors, bool]:
        """``text``'s vector under ``embedder``'s model, and whether it was kept here."""
        if self._vectors.max_entries == 0:
            return embedder.embed([text])[0], False
        key = (embedder.model_id, text)
        kept = self._vectors.get(key)
        self._observe("miss" if kept is None else "hit")
        if kept is not None:
            return kept, True
        # A copy of the row (not a view of the batch) that nobody can write to.
        vector: Vectors = np.array(embedder.embed([text])[0], dtype=np.float32, copy=True)
        vector.flags.writeable = False
        self._vectors.put(key, vector)
        return vector, False
