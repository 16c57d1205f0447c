"""Unit vectors stored at write time: used only when they are exactly the generator's."""

from __future__ import annotations

import numpy as np
import pytest

from ragway.unit_vectors import digest, embed_chunks, pack, unit_texts, unpack
from tests.unit.services.retriever.fakes import FakeEmbedder

TABLE = (
    "Plans and limits",
    "Storage",
    "Storage depends on the plan:\n\n| Plan | Storage |\n|---|---|\n| Free | 5 GB |\n"
    "| Business | 100 GB |\n\nExtra storage costs $2 per 10 GB a month.",
)


def test_the_vectors_round_trip_in_unit_order() -> None:
    embedder = FakeEmbedder()
    (blob,) = embed_chunks(embedder, [TABLE])
    texts = unit_texts(*TABLE)
    assert len(texts) == 4  # the lead-in sentence, two rows, the closing sentence
    vectors = unpack(blob, embedder.model_id, texts)
    assert vectors is not None
    expected = np.array([embedder.vector(t) for t in texts], dtype=np.float32)
    # float16 storage: each vector within 1e-3 of the float32 one.
    assert np.abs(vectors - expected).max() < 1e-3


def test_one_embedding_call_serves_every_chunk() -> None:
    embedder = FakeEmbedder()
    other = ("FAQ", "Refunds", "Annual plans can be refunded within 30 days.")
    blobs = embed_chunks(embedder, [TABLE, other])
    assert len(blobs) == 2 and all(blobs)
    assert embedder.embedded == unit_texts(*TABLE) + unit_texts(*other)


def test_another_model_or_other_units_get_nothing() -> None:
    embedder = FakeEmbedder()
    (blob,) = embed_chunks(embedder, [TABLE])
    texts = unit_texts(*TABLE)
    assert unpack(blob, "another-model", texts) is None
    # A generator that splits the chunk differently (another version) or reads it
    # under another heading: not its units, so it embeds them itself.
    assert unpack(blob, embedder.model_id, texts[:-1]) is None
    assert unpack(blob, embedder.model_id, unit_texts(TABLE[0], "Storage limits", TABLE[2])) is None


def test_damaged_or_foreign_blobs_are_ignored() -> None:
    embedder = FakeEmbedder()
    (blob,) = embed_chunks(embedder, [TABLE])
    texts = unit_texts(*TABLE)
    assert unpack(b"", embedder.model_id, texts) is None
    assert unpack(blob[:-2], embedder.model_id, texts) is None  # truncated body
    assert unpack(b"XXX" + blob[3:], embedder.model_id, texts) is None  # not this format
    assert unpack(b"\x00" * 4, embedder.model_id, texts) is None  # shorter than the header


def test_pack_checks_its_arguments() -> None:
    assert pack("m", [], np.zeros((0, 8), dtype=np.float32)) == b""
    vectors = np.ones((2, 8), dtype=np.float32)
    with pytest.raises(ValueError, match="1 unit texts but 2 vectors"):
        pack("m", ["one"], vectors)
    assert digest("m", ["a", "b"]) != digest("m", ["ab"])  # texts are delimited
