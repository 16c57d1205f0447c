"""The int8 ONNX embedder against the fp32 sentence-transformers model it was exported from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragway.embedding import (
    MAX_BATCH_TOKENS,
    MAX_PADDING,
    MODEL_IDS,
    Arithmetic,
    ModelNotInstalledError,
    OnnxMiniLMEmbedder,
    Widening,
    default_onnx_model,
    fp32_model_dir,
    int8_model,
    length_sorted_batches,
    package_dir,
)

TEXTS = [
    "How do I resume a stream after a disconnect?",
    "Reconnect with the Last-Event-ID header to replay every event after that id.",
    "The Acme daily meal allowance on business trips is 45 euros.",
    "x",
    " ".join(["long"] * 400),  # past the 256-token limit: truncated, not an error
]


@pytest.mark.models
@pytest.mark.parametrize(
    ("arithmetic", "sentences", "worst"),
    # In int8, a one-letter text and 256 copies of one word quantise worst.
    [("fp32", 0.99, 0.99), ("int8", 0.985, 0.975)],
)
def test_onnx_stays_close_to_the_fp32_model_it_was_exported_from(
    arithmetic: Arithmetic, sentences: float, worst: float
) -> None:
    from sentence_transformers import SentenceTransformer

    onnx = OnnxMiniLMEmbedder(arithmetic=arithmetic).embed(TEXTS)
    fp32 = SentenceTransformer(str(fp32_model_dir()), device="cpu").encode(
        TEXTS, normalize_embeddings=True
    )
    cosines = (onnx * fp32).sum(axis=1)
    assert cosines[:3].min() > sentences, cosines
    assert cosines.min() > worst, cosines


@pytest.mark.models
def test_vectors_are_unit_length_and_batch_order_is_kept() -> None:
    embedder = OnnxMiniLMEmbedder(batch_size=2, arithmetic="fp32")
    batch = embedder.embed(TEXTS)
    assert batch.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    singles = np.vstack([embedder.embed([t]) for t in TEXTS])
    np.testing.assert_allclose(batch, singles, atol=1e-4)


@pytest.mark.models
def test_an_int8_vector_does_not_depend_on_the_texts_embedded_with_it() -> None:
    embedder = OnnxMiniLMEmbedder(arithmetic="int8")
    assert embedder.model_id == MODEL_IDS["int8"] != MODEL_IDS["fp32"]
    together = embedder.embed(TEXTS)
    singles = np.vstack([embedder.embed([t]) for t in TEXTS])
    np.testing.assert_allclose(together, singles, atol=1e-6)
    # Why one text a run: batched, the activations of all texts share one int8
    # scale, and a vector moves with its neighbours.
    batched = OnnxMiniLMEmbedder(batch_size=len(TEXTS), arithmetic="int8").embed(TEXTS)
    assert np.abs(batched - singles).max() > 1e-3


def test_the_arithmetic_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("RAGWAY_MODEL_CACHE", str(tmp_path))
    assert OnnxMiniLMEmbedder().model_id == MODEL_IDS["fp32"]
    monkeypatch.setenv("RAGWAY_EMBEDDING_ARITHMETIC", "int8")
    assert OnnxMiniLMEmbedder().model_id == MODEL_IDS["int8"]
    assert [p.name.startswith("minilm-l6-dynamic-int8-") for p in tmp_path.iterdir()] == [True]
    monkeypatch.setenv("RAGWAY_EMBEDDING_ARITHMETIC", "int4")
    with pytest.raises(ValueError, match="embedding_arithmetic"):
        OnnxMiniLMEmbedder()


@pytest.mark.models
def test_the_int8_network_runs_its_products_in_int8_and_is_derived_once(
    tmp_path: Path,
) -> None:
    import onnx

    path = int8_model(cache_dir=tmp_path)
    assert path.parent == tmp_path and path.name.startswith("minilm-l6-dynamic-int8-")
    served = [n.op_type for n in onnx.load(str(path)).graph.node]
    packaged = [n.op_type for n in onnx.load(str(default_onnx_model())).graph.node]
    # The packaged graph turns its int8 weights back into fp32 (a Cast each) and
    # multiplies in fp32; the served one multiplies 30 of its 36 weight matrices in
    # int8 (the six feed-forward down-projections stay fp32).
    assert "MatMulInteger" not in packaged and packaged.count("Cast") >= 36
    assert served.count("MatMulInteger") == 30
    written = path.stat().st_mtime_ns
    assert int8_model(cache_dir=tmp_path) == path and path.stat().st_mtime_ns == written
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no work files left


def test_an_unwritable_model_cache_is_named_with_the_fix(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    with pytest.raises(ModelNotInstalledError, match="RAGWAY_MODEL_CACHE"):
        int8_model(cache_dir=blocked / "models")


def test_the_model_cache_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from ragway.embedding import model_cache_dir

    monkeypatch.setenv("RAGWAY_MODEL_CACHE", "/srv/models")
    assert model_cache_dir() == Path("/srv/models")
    monkeypatch.delenv("RAGWAY_MODEL_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", "/var/cache/app")
    assert model_cache_dir() == Path("/var/cache/app/ragway/models")


def test_empty_input_gives_an_empty_matrix() -> None:
    assert OnnxMiniLMEmbedder().embed([]).shape == (0, 384)


def test_a_missing_model_package_is_named() -> None:
    with pytest.raises(ModelNotInstalledError, match="make install"):
        package_dir("no_such_model_package")


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="threads"):
        OnnxMiniLMEmbedder(threads=0)


def test_batches_are_length_sorted_and_capped() -> None:
    lengths = [250, 40, 45, 50, 38, 42, 41, 39, 44, 230]
    batches = length_sorted_batches(lengths, 4)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert all(len(b) <= 4 for b in batches)
    flat = [lengths[i] for b in batches for i in b]
    assert flat == sorted(lengths)
    # The two long chunk texts do not pad the short sentences' batches.
    assert [sorted(lengths[i] for i in b) for b in batches][-1] == [230, 250]


def test_a_batch_of_long_texts_ends_at_the_token_cap() -> None:
    lengths = [250] * 5 + [12] * 40
    batches = length_sorted_batches(lengths, 32)
    for batch in batches:
        assert max(lengths[i] for i in batch) * len(batch) <= MAX_BATCH_TOKENS
    assert sorted(len(b) for b in batches) == [1, 2, 2, 8, 32]  # 32 short, then capped


def test_a_batch_ends_before_padding_passes_its_share() -> None:
    lengths = [10] * 5 + [100]
    for batch in length_sorted_batches(lengths, 32):
        widest = max(lengths[i] for i in batch)
        padding = widest * len(batch) - sum(lengths[i] for i in batch)
        assert padding <= MAX_PADDING * widest * len(batch)


def test_vectors_come_back_in_the_callers_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Texts are sorted by token count for batching; row i must still be text i's."""
    embedder = OnnxMiniLMEmbedder(batch_size=2)
    seen: list[list[int]] = []

    def by_length(batch: list[list[int]]) -> np.ndarray:
        seen.append([len(ids) for ids in batch])
        out = np.zeros((len(batch), embedder.dim), dtype=np.float32)
        out[:, 0] = [len(ids) for ids in batch]  # row tagged with its token count
        return out

    monkeypatch.setattr(embedder, "_embed_batch", by_length)
    texts = [" ".join(["word"] * n) for n in (30, 1, 12, 7, 3, 20)]
    vectors = embedder.embed(texts)
    assert [int(v) for v in vectors[:, 0]] == [n + 2 for n in (30, 1, 12, 7, 3, 20)]  # CLS, SEP
    widths = [w for batch in seen for w in batch]
    assert widths == sorted(widths)  # shortest first, not in the callers' order


def test_the_thread_count_and_spinning_reach_the_session() -> None:
    session = OnnxMiniLMEmbedder(threads=3, spin=False)._session.get_session_options()
    assert session.intra_op_num_threads == 3
    assert session.get_session_config_entry("session.intra_op.allow_spinning") == "0"


class CountingSession:
    """A real onnxruntime session that counts its runs."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.runs = 0

    def run(self, *args: Any) -> Any:
        self.runs += 1
        return self.inner.run(*args)


@pytest.mark.models
def test_widening_runs_each_batch_on_the_session_its_condition_picks() -> None:
    wide = CountingSession(OnnxMiniLMEmbedder(threads=2, spin=False).session)
    outcomes: list[str] = []
    embedder = OnnxMiniLMEmbedder(
        batch_size=1, widening=Widening(wide, lambda: True, outcomes.append)
    )
    narrow = OnnxMiniLMEmbedder(batch_size=1).embed(TEXTS[:3])
    widened = embedder.embed(TEXTS[:3])
    assert wide.runs == 3 and outcomes == ["wide"] * 3  # one batch each
    np.testing.assert_allclose(widened, narrow, atol=1e-5)  # the same model either way
    # Asked per batch: a search that starts mid-call takes the rest narrow.
    calls = iter([True, False, False])
    outcomes.clear()
    embedder = OnnxMiniLMEmbedder(
        batch_size=1, widening=Widening(wide, lambda: next(calls), outcomes.append)
    )
    np.testing.assert_allclose(embedder.embed(TEXTS[:3]), narrow, atol=1e-5)
    assert wide.runs == 4 and outcomes == ["wide", "narrow", "narrow"]


@pytest.mark.models
def test_a_search_starting_stops_the_wide_run_and_its_batch_runs_again_narrow() -> None:
    real = OnnxMiniLMEmbedder(threads=2, spin=False).session

    class SearchStartsNow:
        """Interrupts as the wide run begins: onnxruntime itself must stop it."""

        def run(self, *args: Any) -> Any:
            widening.interrupt()
            return real.run(*args)

    outcomes: list[str] = []
    widening = Widening(SearchStartsNow(), lambda: True, outcomes.append)
    embedder = OnnxMiniLMEmbedder(batch_size=1, widening=widening)
    narrow = OnnxMiniLMEmbedder(batch_size=1).embed(TEXTS[:2])
    np.testing.assert_allclose(embedder.embed(TEXTS[:2]), narrow, atol=1e-5)
    assert outcomes == ["interrupted", "interrupted"]
    # An error that is not the interruption is not swallowed.
    broken = Widening(object(), lambda: True)
    with pytest.raises(AttributeError):
        OnnxMiniLMEmbedder(widening=broken).embed(["x"])


@pytest.mark.models
def test_a_search_starting_right_after_the_quiet_check_still_stops_the_wide_run() -> None:
    # The check said quiet, and a search started before the run did: the run must
    # already be registered to be interrupted (it was not, before the review).
    real = OnnxMiniLMEmbedder(threads=2, spin=False).session
    outcomes: list[str] = []

    def quiet_then_a_search_starts() -> bool:
        widening.interrupt()
        return True

    widening = Widening(real, quiet_then_a_search_starts, outcomes.append)
    narrow = OnnxMiniLMEmbedder().embed(TEXTS[:1])
    np.testing.assert_allclose(
        OnnxMiniLMEmbedder(widening=widening).embed(TEXTS[:1]), narrow, atol=1e-5
    )
    assert outcomes == ["interrupted"]
