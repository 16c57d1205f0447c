"""The int8 ONNX embedder against the fp32 sentence-transformers model it was exported from."""

from __future__ import annotations

import numpy as np
import pytest

from ragway.embedding import ModelNotInstalledError, OnnxMiniLMEmbedder, fp32_model_dir, package_dir

TEXTS = [
    "How do I resume a stream after a disconnect?",
    "Reconnect with the Last-Event-ID header to replay every event after that id.",
    "The Acme daily meal allowance on business trips is 45 euros.",
    "x",
    " ".join(["long"] * 400),  # past the 256-token limit: truncated, not an error
]


@pytest.mark.models
def test_int8_onnx_matches_the_fp32_model_it_was_exported_from() -> None:
    from sentence_transformers import SentenceTransformer

    onnx = OnnxMiniLMEmbedder().embed(TEXTS)
    fp32 = SentenceTransformer(str(fp32_model_dir()), device="cpu").encode(
        TEXTS, normalize_embeddings=True
    )
    cosines = (onnx * fp32).sum(axis=1)
    assert cosines.min() > 0.99, cosines


@pytest.mark.models
def test_vectors_are_unit_length_and_batch_order_is_kept() -> None:
    embedder = OnnxMiniLMEmbedder(batch_size=2)
    batch = embedder.embed(TEXTS)
    assert batch.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    singles = np.vstack([embedder.embed([t]) for t in TEXTS])
    np.testing.assert_allclose(batch, singles, atol=1e-4)


def test_empty_input_gives_an_empty_matrix() -> None:
    assert OnnxMiniLMEmbedder().embed([]).shape == (0, 384)


def test_a_missing_model_package_is_named() -> None:
    with pytest.raises(ModelNotInstalledError, match="make install"):
        package_dir("no_such_model_package")


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="threads"):
        OnnxMiniLMEmbedder(threads=0)
