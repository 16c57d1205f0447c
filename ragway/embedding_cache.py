"""Vectors already computed, kept on disk by content, so a rebuild embeds only what changed.

A knowledge build is versioned: every ``ragway builds create`` loads all of a
knowledge base into a new build, then an alias swap promotes it. Most of what a
new build embeds was embedded for the build before it (the same chunk texts, the
same answer units), and embedding is nearly all of a bulk load's time
(docs/performance.md). ``CachedEmbedder`` wraps the write path's embedder: each text
is looked up by the SHA-256 of the model's name and the text, only the misses go to
the model (in one call, so its length-sorted batching still applies), and the new
vectors are stored.

The store is one SQLite file (WAL mode) beside the indexes. A model change cannot
return a stale vector: the model's name and dimension are in every key. The file is
bounded (``max_rows``): past it the oldest rows go first. A cache that cannot be
opened, read or written (a full disk, a corrupt file) is dropped with a warning and
the embedder runs uncached; a write never fails because of it.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ragway.embedding import Embedder, Vectors

log = logging.getLogger(__name__)

# SQLite's default limit on host parameters in one statement is 32,766 (3.32+);
# lookups go in chunks well under it.
_LOOKUP_CHUNK = 900


class EmbeddingCache:
    """A bounded, persistent map from (model, text) to a float32 vector."""

    def __init__(self, path: Path, *, max_rows: int = 500_000) -> None:
        if max_rows < 1:
            raise ValueError(f"max_rows must be >= 1, got {max_rows}")
        self.path = path
        self.max_rows = max_rows
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        # One connection, used under the lock from the write threads.
        self._db: sqlite3.Connection | None = sqlite3.connect(
            str(path), check_same_thread=False, isolation_level=None
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)"
        )

    @property
    def available(self) -> bool:
        return self._db is not None

    def _drop(self, what: str, exc: Exception) -> None:
        log.warning(
            "embedding cache dropped: embedding uncached from now on",
            extra={"path": str(self.path), "during": what, "error": str(exc)},
        )
        db, self._db = self._db, None
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.close()

    def get(self, keys: Sequence[bytes], dim: int) -> dict[bytes, Vectors]:
        """The vectors stored for these keys (those of another width are ignored)."""
        found: dict[bytes, Vectors] = {}
        with self._lock:
            if self._db is None:
                return found
            try:
                for start in range(0, len(keys), _LOOKUP_CHUNK):
                    chunk = list(keys[start : start + _LOOKUP_CHUNK])
                    marks = ",".join("?" * len(chunk))
                    rows = self._db.execute(
                        f"SELECT key, vector FROM vectors WHERE key IN ({marks})",
                        chunk,
                    ).fetchall()
                    for key, blob in rows:
                        if len(blob) == 4 * dim:
                            found[bytes(key)] = np.frombuffer(blob, dtype=np.float32)
            except sqlite3.Error as exc:
                self._drop("read", exc)
                return {}
        return found

    def put(self, items: Sequence[tuple[bytes, Vectors]]) -> None:
        if not items:
            return
        with self._lock:
            if self._db is None:
                return
            try:
                self._db.execute("BEGIN")
                self._db.executemany(
                    "INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)",
                    [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items],
                )
                # Oldest first: rowids grow with each insert.
                self._db.execute(
                    "DELETE FROM vectors WHERE rowid <= (SELECT MAX(rowid) FROM vectors) - ?",
                    (self.max_rows,),
                )
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._drop("write", exc)

    def rows(self) -> int:
        with self._lock:
            if self._db is None:
                return 0
            return int(self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def open_cache(path: Path, *, max_rows: int) -> EmbeddingCache | None:
    """The cache at ``path``, or None (with a warning) when it cannot be opened."""
    try:
        return EmbeddingCache(path, max_rows=max_rows)
    except (sqlite3.Error, OSError) as exc:
        log.warning(
            "embedding cache unavailable: embedding uncached",
            extra={"path": str(path), "error": str(exc)},
        )
        return None


class CachedEmbedder:
    """An ``Embedder`` that asks ``cache`` first and the model only for the misses."""

    def __init__(
        self,
        inner: Embedder,
        cache: EmbeddingCache,
        observe: Callable[[int, int], None] | None = None,
    ) -> None:
        self.inner = inner
        self.cache = cache
        self.model_id = inner.model_id
        self.dim = inner.dim
        self._namespace = f"{inner.model_id}\0{inner.dim}\0".encode()
        # Called with (texts found, texts embedded) after each call: the metrics.
        self._observe = observe

    def key(self, text: str) -> bytes:
        return hashlib.sha256(self._namespace + text.encode("utf-8", "surrogatepass")).digest()

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        keys = [self.key(t) for t in texts]
        found = self.cache.get(list(dict.fromkeys(keys)), self.dim)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        # A text repeated within the call is embedded once.
        todo: dict[bytes, list[int]] = {}
        for i, k in enumerate(keys):
            vector = found.get(k)
            if vector is not None:
                out[i] = vector
            else:
                todo.setdefault(k, []).append(i)
        if todo:
            firsts = [positions[0] for positions in todo.values()]
            fresh = self.inner.embed([texts[i] for i in firsts])
            for positions, vector in zip(todo.values(), fresh, strict=True):
                out[positions] = vector
            self.cache.put([(k, fresh[n]) for n, k in enumerate(todo)])
        if self._observe is not None:
            self._observe(len(texts) - sum(len(p) for p in todo.values()), len(todo))
        return out
