"""The rerank stage with a real cross-encoder forward pass.

No package ships cross-encoder weights, so the packaged MiniLM encoder is loaded
as a CrossEncoder: its classification head is freshly initialised (seeded), so
the scores carry no relevance, but the stage's mechanics are real: every pair
goes through the model, the head of the list is reordered by those scores, and
the tail keeps the fused order.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ragway.embedding import OnnxMiniLMEmbedder, fp32_model_dir
from services.retriever.catalog import Build
from services.retriever.engines.edge_dense import EdgeDenseIndex
from services.retriever.engines.tantivy_sparse import TantivySparseIndex
from services.retriever.model import AccessScope
from services.retriever.rerank import CrossEncoderReranker, RerankerLoadError, load_reranker
from services.retriever.search import HybridSearcher, SearchOptions, SearchOutcome
from tests.engine_contract import CORPUS, NOW

pytestmark = pytest.mark.models
EMBEDDER = OnnxMiniLMEmbedder()
SCOPE = AccessScope("acme", frozenset({"staff", "hr"}), as_of=NOW)


@pytest.fixture(scope="module")
def reranker() -> CrossEncoderReranker:
    import torch

    torch.manual_seed(0)
    return CrossEncoderReranker(fp32_model_dir())


def build(tmp_path: Path) -> Build:
    b = Build(
        "test", TantivySparseIndex(tmp_path / "s"), EdgeDenseIndex(tmp_path / "d", dim=384),
        threading.Lock(),
    )  # fmt: skip
    b.sparse.upsert(CORPUS)
    b.dense.upsert(CORPUS, EMBEDDER.embed([c.embedding_text for c in CORPUS]).tolist())
    return b


def test_the_head_is_reordered_by_cross_encoder_scores(
    tmp_path: Path, reranker: CrossEncoderReranker
) -> None:
    b = build(tmp_path)
    query = "hotel limit per night"
    with ThreadPoolExecutor(2) as pool:
        searcher = HybridSearcher(EMBEDDER, pool, reranker=reranker, rerank_depth=3)

        def search(rerank: bool) -> SearchOutcome:
            options = SearchOptions(top_k=5, candidate_depth=10, rerank=rerank, budget_ms=30_000)
            return asyncio.run(searcher.search(b, query, SCOPE, options))

        fused, out = search(False), search(True)
    head, tail = out.hits[:3], out.hits[3:]
    assert all(h.rerank is not None for h in head)
    assert all(h.rerank is None for h in tail)
    scores = [h.rerank or 0.0 for h in head]
    assert scores == sorted(scores, reverse=True)
    # The same three chunks as the fused head, only reordered; the tail untouched.
    assert {h.chunk.chunk_id for h in head} == {h.chunk.chunk_id for h in fused.hits[:3]}
    assert [h.chunk.chunk_id for h in tail] == [h.chunk.chunk_id for h in fused.hits[3:5]]
    assert out.timings_ms["rerank"] > 0
    assert out.degraded == []


def test_scores_are_one_per_passage_and_deterministic(reranker: CrossEncoderReranker) -> None:
    passages = ["Hotels up to 180 euros per night.", "The cafeteria opens at eight."]
    first = reranker.score("hotel limit", passages)
    assert len(first) == 2
    assert reranker.score("hotel limit", passages) == first
    assert reranker.score("hotel limit", []) == []


def test_a_missing_or_foreign_model_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(RerankerLoadError, match="reranker model folder not found"):
        load_reranker(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RerankerLoadError, match="neither a ragway reranker artifact"):
        load_reranker(tmp_path / "empty")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "artifact.json").write_text('{"format": "someone-else/9"}')
    with pytest.raises(RerankerLoadError, match="artifact format 'someone-else/9'"):
        load_reranker(tmp_path / "other")
