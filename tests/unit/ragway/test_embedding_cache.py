"""The write path's embedding cache: misses go to the model, hits come from disk.

The model is the real packaged MiniLM; a counting wrapper records which texts
reached it.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from ragway.embedding import OnnxMiniLMEmbedder, Vectors
from ragway.embedding_cache import CachedEmbedder, EmbeddingCache, open_cache

TEXTS = [
    "Refunds are issued to the original payment method within 10 business days.",
    "The Business plan includes up to 2,000 members.",
    "Plans and pricing > Compare plans",
]


class Counting:
    def __init__(self, inner: OnnxMiniLMEmbedder, model_id: str | None = None) -> None:
        self.inner = inner
        self.model_id = model_id or inner.model_id
        self.dim = inner.dim
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.seen += list(texts)
        return self.inner.embed(texts)


@pytest.fixture(scope="module")
def model() -> OnnxMiniLMEmbedder:
    return OnnxMiniLMEmbedder()


def test_only_texts_not_embedded_before_reach_the_model(
    model: OnnxMiniLMEmbedder, tmp_path: Path
) -> None:
    counted: list[tuple[int, int]] = []
    inner = Counting(model)
    cached = CachedEmbedder(
        inner, EmbeddingCache(tmp_path / "c.sqlite"), lambda h, m: counted.append((h, m))
    )
    first = cached.embed(TEXTS[:2])
    assert inner.seen == TEXTS[:2]
    # A text repeated within one call is embedded once; known ones not again.
    again = cached.embed([TEXTS[1], TEXTS[2], TEXTS[2], TEXTS[0]])
    assert inner.seen == [*TEXTS[:2], TEXTS[2]]
    assert counted == [(0, 2), (2, 1)]
    # The callers' order, and the very vectors the model gave.
    np.testing.assert_array_equal(again[0], first[1])
    np.testing.assert_array_equal(again[3], first[0])
    np.testing.assert_array_equal(again[1], again[2])
    np.testing.assert_allclose(
        again, model.embed([TEXTS[1], TEXTS[2], TEXTS[2], TEXTS[0]]), atol=1e-5
    )
    assert cached.embed([]).shape == (0, model.dim)


def test_the_vectors_survive_a_restart_and_another_model_never_reads_them(
    model: OnnxMiniLMEmbedder, tmp_path: Path
) -> None:
    path = tmp_path / "c.sqlite"
    CachedEmbedder(Counting(model), EmbeddingCache(path)).embed(TEXTS)
    reopened = Counting(model)
    CachedEmbedder(reopened, EmbeddingCache(path)).embed(TEXTS)
    assert reopened.seen == []
    # The model's name is in the key: a new model embeds everything again.
    other = Counting(model, model_id="another-model")
    CachedEmbedder(other, EmbeddingCache(path)).embed(TEXTS)
    assert other.seen == TEXTS


def test_past_its_bound_the_oldest_vectors_go_first(
    model: OnnxMiniLMEmbedder, tmp_path: Path
) -> None:
    cache = EmbeddingCache(tmp_path / "c.sqlite", max_rows=2)
    inner = Counting(model)
    cached = CachedEmbedder(inner, cache)
    for text in TEXTS:
        cached.embed([text])
    assert cache.rows() == 2
    inner.seen.clear()
    cached.embed(TEXTS)
    assert inner.seen == [TEXTS[0]]  # the first written was dropped


def test_a_broken_cache_file_embeds_uncached_with_a_warning(
    model: OnnxMiniLMEmbedder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not a database " * 100)
    with caplog.at_level(logging.WARNING):
        assert open_cache(path, max_rows=10) is None
    assert "embedding cache unavailable" in caplog.text
    # A cache that fails after opening (its table gone under it) is dropped, once.
    ok = tmp_path / "ok.sqlite"
    cache = EmbeddingCache(ok)
    inner = Counting(model)
    cached = CachedEmbedder(inner, cache)
    cached.embed(TEXTS[:1])
    with sqlite3.connect(ok) as other:
        other.execute("DROP TABLE vectors")
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        out = cached.embed(TEXTS[:1])
    assert inner.seen == [TEXTS[0], TEXTS[0]] and out.shape == (1, model.dim)
    assert not cache.available and "embedding cache dropped" in caplog.text
    cached.embed(TEXTS[:1])  # uncached from now on, without raising


def test_max_rows_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_rows"):
        EmbeddingCache(tmp_path / "c.sqlite", max_rows=0)
