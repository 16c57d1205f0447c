"""A stage that misses the retrieval deadline keeps running on its pool thread.

When it finishes, the search has returned and the servicer is reading the
outcome (its timings, its question vectors) into the response; the late stage
must not write into those dictionaries any more.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from ragway.embedding import Vectors
from services.retriever.catalog import Build
from services.retriever.model import AccessScope
from services.retriever.search import HybridSearcher, SearchOptions
from tests.engine_contract import rec
from tests.unit.services.retriever.fakes import FakeEmbedder, MemoryDense, MemorySparse


class HeldEmbedder(FakeEmbedder):
    """Embeds only once released, and says when it has."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.done = threading.Event()

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.release.wait(10)
        try:
            return super().embed(texts)
        finally:
            self.done.set()


async def test_a_late_dense_stage_leaves_the_returned_outcome_alone() -> None:
    chunk = rec("hotel#1", "The hotel limit is 180 euros a night.")
    build = Build("b", MemorySparse(), MemoryDense(), threading.Lock())
    build.sparse.upsert([chunk])
    embedder = HeldEmbedder()
    executor = ThreadPoolExecutor(2)
    try:
        searcher = HybridSearcher(embedder, executor)
        options = SearchOptions(top_k=3, candidate_depth=5, budget_ms=50)
        outcome = await searcher.search(
            build, "hotel limit", AccessScope("acme", frozenset({"staff"})), options
        )
        assert [h.chunk.chunk_id for h in outcome.hits] == ["hotel#1"]  # BM25 alone
        assert [stage for stage, _ in outcome.degraded] == ["dense"]
        timings, vectors = dict(outcome.timings_ms), dict(outcome.query_vectors)
        embedder.release.set()
        assert embedder.done.wait(10)
        executor.shutdown(wait=True)  # the late stage has written what it writes
        assert outcome.timings_ms == timings and "embed" not in outcome.timings_ms
        assert outcome.query_vectors == vectors == {}
    finally:
        embedder.release.set()
        executor.shutdown(wait=True)
