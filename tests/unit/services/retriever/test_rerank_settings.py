"""The reranker's speed settings: which network runs and how pairs are batched."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from ragway.embedding import cpu_flags, int8_pays
from services.retriever.rerank import resolve_precision
from services.retriever.settings import RetrieverSettings


def test_the_network_is_chosen_for_the_cpu_and_batches_are_unpadded_by_default() -> None:
    settings = RetrieverSettings()
    assert settings.rerank_precision == "auto"
    assert settings.rerank_batch_size == 1


def test_auto_runs_int8_only_on_a_cpu_with_an_8_bit_dot_product(tmp_path: Path) -> None:
    epyc_avx2 = "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n"
    xeon_vnni = "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 avx512f avx512_vnni\n"
    graviton = "processor\t: 0\nFeatures\t: fp asimd asimddp\n"
    for text, pays in ((epyc_avx2, False), (xeon_vnni, True), (graviton, True)):
        (tmp_path / "cpuinfo").write_text(text)
        flags = cpu_flags(tmp_path / "cpuinfo")
        assert flags is not None and int8_pays(flags) is pays, text
        assert resolve_precision("auto", flags) == ("int8" if pays else "fp32")
        assert (
            resolve_precision("fp32", flags) == "fp32"
            and resolve_precision("int8", flags) == "int8"
        )
    # No /proc/cpuinfo (not Linux): int8, as before.
    assert cpu_flags(tmp_path / "missing") is None
    assert int8_pays(None) and resolve_precision("auto", None) == "int8"


def test_the_precision_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGWAY_RERANK_PRECISION", "fp32")
    assert RetrieverSettings().rerank_precision == "fp32"
    monkeypatch.setenv("RAGWAY_RERANK_PRECISION", "int4")
    with pytest.raises(ValidationError, match="rerank_precision"):
        RetrieverSettings()
