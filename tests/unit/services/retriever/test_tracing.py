"""A Search is one ``retrieval`` span with a child span per stage, in the caller's trace.

The searcher runs over the in-memory engines; the spans go to the shared
in-memory exporter (tests/unit/spans.py).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan

from ragway import telemetry
from services.retriever.catalog import Build
from services.retriever.search import HybridSearcher, SearchOptions
from tests.engine_contract import CORPUS, SCOPE
from tests.unit.services.retriever.fakes import FakeEmbedder, MemoryDense, MemorySparse
from tests.unit.spans import memory_exporter


class FixedReranker:
    model_id = "reranker-test-1"

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        return [float(len(p)) for p in passages]


def memory_build(embedder: FakeEmbedder) -> Build:
    build = Build("b-test", MemorySparse(), MemoryDense(), threading.Lock())
    build.sparse.upsert(CORPUS)
    build.dense.upsert(CORPUS, embedder.embed([c.embedding_text for c in CORPUS]).tolist())
    return build


def search(query: str) -> list[ReadableSpan]:
    exporter = memory_exporter()
    embedder = FakeEmbedder()
    build = memory_build(embedder)
    exporter.clear()
    with ThreadPoolExecutor(2) as pool:
        searcher = HybridSearcher(embedder, pool, reranker=FixedReranker(), rerank_depth=3)
        options = SearchOptions(top_k=4, candidate_depth=10, budget_ms=30_000)
        with (
            telemetry.continue_trace("", run_id="r-search", tenant="acme"),
            telemetry.tracer.start_as_current_span("/ragway.v1.Retriever/Search"),
        ):
            asyncio.run(searcher.search(build, query, SCOPE, options))
    return list(exporter.get_finished_spans())


def test_every_stage_is_a_child_of_the_retrieval_span_in_the_callers_trace() -> None:
    spans = {s.name: s for s in search("hotel limit per night")}
    assert set(spans) == {
        "/ragway.v1.Retriever/Search",
        "retrieval",
        "embeddings fake-embedder",
        "ragway.sparse",
        "ragway.dense",
        "ragway.fuse",
        "ragway.rerank",
    }
    call, retrieval = spans["/ragway.v1.Retriever/Search"], spans["retrieval"]
    assert retrieval.parent is not None and retrieval.parent.span_id == call.context.span_id
    for name, span in spans.items():
        assert span.context.trace_id == call.context.trace_id
        if name not in {"retrieval", "/ragway.v1.Retriever/Search"}:
            assert span.parent is not None and span.parent.span_id == retrieval.context.span_id
        # The baggage reached the spans started in the pool threads too.
        assert (span.attributes or {})[telemetry.RUN_ID] == "r-search"
    assert retrieval.kind is trace.SpanKind.INTERNAL
    attributes = retrieval.attributes or {}
    assert attributes["gen_ai.operation.name"] == "retrieval"
    assert attributes["gen_ai.request.top_k"] == 4
    assert attributes["gen_ai.data_source.id"] == "b-test"
    assert attributes["ragway.fusion.rrf_k"] == 60
    assert attributes["ragway.retrieval.hits"] in {1, 2, 3, 4}
    embed = spans["embeddings fake-embedder"].attributes or {}
    assert embed["gen_ai.operation.name"] == "embeddings"
    assert embed["gen_ai.request.model"] == "fake-embedder"
    assert embed["gen_ai.embeddings.dimension.count"] == 8
    assert (spans["ragway.sparse"].attributes or {})["ragway.candidates"] != 0
    rerank = spans["ragway.rerank"].attributes or {}
    assert (rerank["ragway.rerank.depth"], rerank["ragway.rerank.model"]) == (3, "reranker-test-1")
    # No span carries the query.
    values = [str(v) for s in spans.values() for v in (s.attributes or {}).values()]
    assert not any("hotel" in v for v in values)


def test_a_question_with_parts_has_stage_spans_per_part() -> None:
    spans = search("How much is the hotel limit and when does the cafeteria open?")
    parts = {
        (s.attributes or {}).get("ragway.query_part") for s in spans if s.name == "ragway.sparse"
    }
    assert parts == {None, "part1", "part2"}
