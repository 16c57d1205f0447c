"""Searches keep the vectors of the texts they embedded: a question asked again is looked up.

The embedder is the packaged MiniLM (``tests.engine_contract.EMBEDDER``); ``Counted``
only counts what reaches it. The searches run over the in-memory engines.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import numpy as np
import pytest

from ragway.embedding import Embedder, OnnxMiniLMEmbedder, Vectors
from ragway.metrics import REGISTRY
from ragway.v1 import retriever_pb2 as pb
from ragway.v1 import retriever_pb2_grpc as pb_grpc
from services.retriever import metrics
from services.retriever.catalog import Build
from services.retriever.query_vectors import QueryVectorCache
from services.retriever.search import HybridSearcher, SearchOptions, SearchOutcome
from services.retriever.settings import RetrieverSettings
from tests.engine_contract import CORPUS, EMBEDDER, SCOPE
from tests.unit.services.retriever.fakes import (
    MemoryDense,
    MemorySparse,
    running,
    serve_in_memory,
)
from tests.unit.spans import memory_exporter

QUESTION = "hotel limit per night"


class Counted:
    """The packaged embedder, counting the texts it was asked to embed."""

    def __init__(self, inner: Embedder = EMBEDDER, model_id: str | None = None) -> None:
        self._inner = inner
        self.model_id = model_id or inner.model_id
        self.dim = inner.dim
        self.texts: list[str] = []
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Vectors:
        with self._lock:
            self.texts.extend(texts)
        return self._inner.embed(texts)


def fresh(text: str) -> Vectors:
    vector: Vectors = EMBEDDER.embed([text])[0]
    return vector


def lookups(outcome: str) -> float:
    return (
        REGISTRY.get_sample_value(
            "ragway_retriever_query_vector_cache_texts_total", {"outcome": outcome}
        )
        or 0.0
    )


def test_a_kept_vector_is_the_one_a_fresh_embed_gives_and_cannot_be_changed() -> None:
    embedder = Counted()
    cache = QueryVectorCache(4)
    first, cached_first = cache.vector(embedder, QUESTION)
    again, cached_again = cache.vector(embedder, QUESTION)
    assert (cached_first, cached_again) == (False, True)
    assert embedder.texts == [QUESTION]  # the second came from the cache
    assert np.array_equal(again, fresh(QUESTION)) and again.dtype == np.float32
    assert again is first  # the miss handed out the kept copy too
    with pytest.raises(ValueError, match="read-only"):
        again[0] = 1.0
    assert np.array_equal(cache.vector(embedder, QUESTION)[0], fresh(QUESTION))


class Reusing(Counted):
    """Hands out every batch's vectors in the same array, as a buffer-reusing embedder could."""

    def __init__(self) -> None:
        super().__init__()
        self._out = np.zeros((1, self.dim), dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> Vectors:
        self._out[:] = super().embed(texts)
        return self._out


def test_a_kept_vector_is_a_copy_of_its_own_not_a_view_of_what_the_embedder_returned() -> None:
    embedder = Reusing()
    cache = QueryVectorCache(4)
    cache.vector(embedder, QUESTION)
    cache.vector(embedder, "cancel a run")  # the embedder's array now holds this text's
    assert np.array_equal(cache.vector(embedder, QUESTION)[0], fresh(QUESTION))


def test_past_its_bound_the_least_recently_asked_text_is_embedded_again() -> None:
    embedder = Counted()
    cache = QueryVectorCache(2)
    for text in ("cancel a run", "resume a stream", "cancel a run", "rotate a key"):
        cache.vector(embedder, text)
    # "resume a stream" was the least recently asked when "rotate a key" came.
    assert embedder.texts == ["cancel a run", "resume a stream", "rotate a key"]
    assert cache.vector(embedder, "cancel a run")[1] is True
    assert cache.vector(embedder, "resume a stream")[1] is False
    assert len(cache) == 2


def test_a_bound_of_zero_embeds_every_time_and_counts_nothing() -> None:
    embedder = Counted()
    hits, misses = lookups("hit"), lookups("miss")
    cache = QueryVectorCache(0, metrics.observe_query_vector)
    assert [cache.vector(embedder, QUESTION)[1] for _ in range(3)] == [False] * 3
    assert embedder.texts == [QUESTION] * 3 and len(cache) == 0
    assert (lookups("hit"), lookups("miss")) == (hits, misses)


def test_another_models_vector_of_the_same_text_is_not_taken() -> None:
    cache = QueryVectorCache(4)
    cache.vector(Counted(), QUESTION)
    other = Counted(model_id="another-model")
    assert cache.vector(other, QUESTION)[1] is False
    assert other.texts == [QUESTION]


def test_the_counter_counts_every_lookup_as_a_hit_or_a_miss() -> None:
    hits, misses = lookups("hit"), lookups("miss")
    cache = QueryVectorCache(4, metrics.observe_query_vector)
    for text in (QUESTION, QUESTION, "cancel a run", QUESTION):
        cache.vector(Counted(), text)
    assert (lookups("hit") - hits, lookups("miss") - misses) == (2, 2)


def test_many_search_threads_at_once_each_get_their_own_texts_vector() -> None:
    texts = [f"how do I cancel run number {n}" for n in range(12)]
    expected = {t: fresh(t) for t in texts}
    embedder = Counted()
    cache = QueryVectorCache(5)  # fewer than the texts: entries come and go meanwhile
    start = threading.Barrier(8)

    def ask(seed: int) -> list[tuple[str, Vectors]]:
        start.wait()
        asked = [texts[(seed * 5 + i) % len(texts)] for i in range(40)]
        return [(t, cache.vector(embedder, t)[0]) for t in asked]

    with ThreadPoolExecutor(8) as pool:
        answers = [a for got in pool.map(ask, range(8)) for a in got]
    assert len(answers) == 320
    assert all(np.array_equal(vector, expected[text]) for text, vector in answers)
    assert len(cache) <= 5
    assert len(embedder.texts) < 320  # some were served from the cache


def test_the_setting_defaults_to_a_few_thousand_and_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert RetrieverSettings().query_vector_cache_entries == 4096
    monkeypatch.setenv("RAGWAY_QUERY_VECTOR_CACHE_ENTRIES", "0")
    assert RetrieverSettings().query_vector_cache_entries == 0
    for bad in ("-1", "1000001"):
        monkeypatch.setenv("RAGWAY_QUERY_VECTOR_CACHE_ENTRIES", bad)
        with pytest.raises(ValueError, match="query_vector_cache_entries"):
            RetrieverSettings()


# -- through the search ------------------------------------------------------------


def memory_build() -> Build:
    build = Build("b-test", MemorySparse(), MemoryDense(), threading.Lock())
    build.sparse.upsert(CORPUS)
    build.dense.upsert(CORPUS, EMBEDDER.embed([c.embedding_text for c in CORPUS]).tolist())
    return build


def search(searcher: HybridSearcher, build: Build, question: str) -> SearchOutcome:
    options = SearchOptions(top_k=4, candidate_depth=10, budget_ms=30_000)
    return asyncio.run(searcher.search(build, question, SCOPE, options))


def test_a_question_searched_again_is_not_embedded_and_gets_the_same_vectors_and_hits() -> None:
    build = memory_build()
    exporter = memory_exporter()
    with ThreadPoolExecutor(2) as pool:
        uncached = search(HybridSearcher(Counted(), pool), build, QUESTION)
        embedder = Counted()
        searcher = HybridSearcher(embedder, pool, query_vectors=QueryVectorCache(16))
        exporter.clear()
        first = search(searcher, build, QUESTION)
        second = search(searcher, build, QUESTION)
    assert embedder.texts == [QUESTION]
    for outcome in (first, second):
        # What the gateway hands the generator is the same, kept or not.
        assert outcome.query_vectors.keys() == uncached.query_vectors.keys() == {QUESTION}
        assert np.array_equal(outcome.query_vectors[QUESTION], uncached.query_vectors[QUESTION])
        assert [h.chunk.chunk_id for h in outcome.hits] == [h.chunk.chunk_id for h in uncached.hits]
        assert "embed" in outcome.timings_ms  # the stage is still timed: the lookup's time
    spans = [s for s in exporter.get_finished_spans() if s.name.startswith("embeddings ")]
    assert [(s.attributes or {})["ragway.embeddings.cached"] for s in spans] == [False, True]
    assert all((s.attributes or {})["gen_ai.embeddings.dimension.count"] == 384 for s in spans)


def test_a_searcher_without_a_cache_embeds_every_search() -> None:
    build = memory_build()
    embedder = Counted()
    with ThreadPoolExecutor(2) as pool:
        searcher = HybridSearcher(embedder, pool, query_vectors=QueryVectorCache(0))
        search(searcher, build, QUESTION)
        search(searcher, build, QUESTION)
    assert embedder.texts == [QUESTION, QUESTION]


# -- through the server --------------------------------------------------------------


async def _search_twice(settings: RetrieverSettings) -> list[pb.SearchResponse]:
    async with (
        running(settings) as rs,
        grpc.aio.insecure_channel(f"127.0.0.1:{rs.port}") as channel,
    ):
        stub = pb_grpc.RetrieverStub(channel)
        token = settings.service_token_value()
        auth = (("authorization", f"Bearer {token}"),) if token else ()
        request = pb.SearchRequest(
            query=QUESTION, tenant="acme", access_groups=["staff"], query_vectors=True
        )
        return [await stub.Search(request, timeout=10, metadata=auth) for _ in range(2)]


@pytest.mark.parametrize("entries", [4096, 0])
def test_the_server_keeps_vectors_as_its_setting_says_and_answers_the_same_either_way(
    entries: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_in_memory(monkeypatch, OnnxMiniLMEmbedder)
    settings = RetrieverSettings(
        index_dir=tmp_path, retriever_listen="127.0.0.1:0", query_vector_cache_entries=entries
    )
    hits, misses = lookups("hit"), lookups("miss")
    replies = asyncio.run(_search_twice(settings))
    counted = (lookups("hit") - hits, lookups("miss") - misses)
    assert counted == ((1, 1) if entries else (0, 0))
    for reply in replies:
        (sent,) = reply.query_vectors
        assert sent.text == QUESTION and reply.embedding_model == EMBEDDER.model_id
        assert np.array_equal(np.asarray(sent.vector, dtype=np.float32), fresh(QUESTION))
