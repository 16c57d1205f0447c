"""Small in-memory stand-ins for the engines and the embedder, for servicer tests.

They honour the same access rule as the real engines (``AccessScope.admits``),
so a search through them shows what the servicer hands on, not engine quality.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import numpy as np
import pytest

from ragway.embedding import Vectors
from services.retriever.indexes import DenseIndex, SparseIndex
from services.retriever.model import AccessScope, Candidate, ChunkRecord
from services.retriever.server import RetrieverServer
from services.retriever.settings import RetrieverSettings

DIM = 8


class FakeEmbedder:
    """Deterministic unit vectors from a text's hash; counts what it embedded."""

    model_id = "fake-embedder"
    dim = DIM
    session = None  # what a live write's Widening borrows from the bulk embedder

    def __init__(self) -> None:
        self.embedded: list[str] = []
        # Called with every batch after it is embedded: lets a test act mid-write.
        self.on_embed: Callable[[Sequence[str]], None] | None = None

    def vector(self, text: str) -> list[float]:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")
        v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
        return [float(x) for x in v / np.linalg.norm(v)]

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.embedded.extend(texts)
        if self.on_embed is not None:
            self.on_embed(texts)
        return np.array([self.vector(t) for t in texts], dtype=np.float32).reshape(-1, DIM)


def _ranked(scored: list[tuple[float, ChunkRecord]], limit: int) -> list[Candidate]:
    scored.sort(key=lambda s: (-s[0], s[1].chunk_id))
    return [Candidate(c, score, rank) for rank, (score, c) in enumerate(scored[:limit], start=1)]


class MemorySparse:
    """Word-overlap search; no ``document_chunks``, so it is no ``ChunkSource``."""

    def __init__(self) -> None:
        self.chunks: dict[str, ChunkRecord] = {}

    def upsert(self, chunks: Sequence[ChunkRecord]) -> None:
        self.chunks.update((c.chunk_id, c) for c in chunks)

    def delete_documents(self, tenant: str, document_ids: Sequence[str]) -> int:
        gone = [
            k
            for k, c in self.chunks.items()
            if c.tenant == tenant and c.document_id in document_ids
        ]
        for k in gone:
            del self.chunks[k]
        return len(gone)

    def search(self, query: str, scope: AccessScope, limit: int) -> list[Candidate]:
        words = set(query.lower().split())
        scored = [
            (float(len(words & set(c.text.lower().split()))), c)
            for c in self.chunks.values()
            if scope.admits(c)
        ]
        return _ranked([s for s in scored if s[0] > 0], limit)

    def count(self) -> int:
        return len(self.chunks)

    def close(self) -> None:
        """Nothing to release."""


class ReadableSparse(MemorySparse):
    """A sparse index that can hand back stored chunks (a ``ChunkSource``)."""

    def document_chunks(self, tenant: str, document_id: str) -> list[ChunkRecord]:
        return sorted(
            (c for c in self.chunks.values() if (c.tenant, c.document_id) == (tenant, document_id)),
            key=lambda c: c.chunk_id,
        )


class MemoryDense:
    def __init__(self) -> None:
        self.chunks: dict[str, ChunkRecord] = {}
        self.vectors: dict[str, list[float]] = {}

    def upsert(self, chunks: Sequence[ChunkRecord], vectors: Sequence[Sequence[float]]) -> None:
        assert len(chunks) == len(vectors)
        for c, v in zip(chunks, vectors, strict=True):
            self.chunks[c.chunk_id] = c
            self.vectors[c.chunk_id] = list(v)

    def delete_documents(self, tenant: str, document_ids: Sequence[str]) -> int:
        gone = [
            k
            for k, c in self.chunks.items()
            if c.tenant == tenant and c.document_id in document_ids
        ]
        for k in gone:
            del self.chunks[k], self.vectors[k]
        return len(gone)

    def search(self, vector: Sequence[float], scope: AccessScope, limit: int) -> list[Candidate]:
        scored = [
            (float(np.dot(vector, self.vectors[k])), c)
            for k, c in self.chunks.items()
            if scope.admits(c)
        ]
        return _ranked(scored, limit)

    def count(self) -> int:
        return len(self.chunks)

    def close(self) -> None:
        """Nothing to release."""


class MemoryEngines:
    """An ``Engines`` that keeps every build's indexes in memory."""

    def __init__(self, *, readable: bool = True) -> None:
        self._readable = readable
        self.aliases: dict[str, str] = {}

    def open_sparse(self, build_id: str, folder: Path) -> SparseIndex:
        return ReadableSparse() if self._readable else MemorySparse()

    def open_dense(self, build_id: str, folder: Path, dim: int) -> DenseIndex:
        return MemoryDense()

    def publish_alias(self, alias: str, build_id: str) -> None:
        self.aliases[alias] = build_id

    def in_folder(self) -> tuple[str, ...]:
        return ()  # nothing on disk

    def close(self) -> None:
        """Nothing to release."""


def serve_in_memory(monkeypatch: pytest.MonkeyPatch, embedder: type) -> None:
    """``services.retriever.server.create_server`` builds ``embedder`` (for every
    session it makes) and in-memory engines."""
    from services.retriever import server

    monkeypatch.setattr(server, "OnnxMiniLMEmbedder", embedder)
    monkeypatch.setattr(server, "create_engines", lambda settings, dim: MemoryEngines())


@asynccontextmanager
async def running(settings: RetrieverSettings) -> AsyncIterator[RetrieverServer]:
    """``create_server(settings)`` started, then stopped and closed."""
    from services.retriever import server

    rs = server.create_server(settings)
    await rs.server.start()
    try:
        yield rs
    finally:
        await rs.server.stop(None)
        await rs.close()
