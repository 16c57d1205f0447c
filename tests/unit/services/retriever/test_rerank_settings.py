"""The reranker's speed settings: which network runs and how pairs are batched."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from services.retriever.settings import RetrieverSettings


def test_the_int8_network_and_unpadded_batches_are_the_defaults() -> None:
    settings = RetrieverSettings()
    assert settings.rerank_precision == "int8"
    assert settings.rerank_batch_size == 1


def test_the_precision_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGWAY_RERANK_PRECISION", "fp32")
    assert RetrieverSettings().rerank_precision == "fp32"
    monkeypatch.setenv("RAGWAY_RERANK_PRECISION", "int4")
    with pytest.raises(ValidationError, match="rerank_precision"):
        RetrieverSettings()
