from __future__ import annotations

from dataclasses import replace

import pytest

from services.retriever.fusion import reciprocal_rank_fusion
from services.retriever.model import OPEN_END, Candidate, ChunkRecord, Status


def chunk(cid: str) -> ChunkRecord:
    return ChunkRecord(cid, "d", "t", ("g",), Status.CURRENT, 0, OPEN_END, "1", "", "T", "", "text")


def ranked(*ids: str) -> list[Candidate]:
    return [Candidate(chunk(i), score=10.0 - r, rank=r) for r, i in enumerate(ids, start=1)]


def test_when_a_chunk_is_in_both_lists_then_its_score_is_the_sum_of_reciprocal_ranks() -> None:
    fused = reciprocal_rank_fusion({"sparse": ranked("a", "b"), "dense": ranked("b", "c")}, k=60)
    by_id = {f.chunk.chunk_id: f for f in fused}
    assert by_id["b"].fused == pytest.approx(1 / 62 + 1 / 61)
    assert by_id["a"].fused == pytest.approx(1 / 61)
    assert by_id["c"].fused == pytest.approx(1 / 62)
    assert [f.chunk.chunk_id for f in fused] == ["b", "a", "c"]
    assert by_id["b"].by_retriever == {"sparse": (2, 8.0), "dense": (1, 9.0)}


def test_when_scores_tie_then_the_best_single_rank_then_the_id_decide() -> None:
    # a and x both sit at rank 1 of one list: equal fused score, equal best rank.
    fused = reciprocal_rank_fusion({"sparse": ranked("x"), "dense": ranked("a")})
    assert [f.chunk.chunk_id for f in fused] == ["a", "x"]


def test_when_k_is_not_positive_then_fusion_refuses() -> None:
    with pytest.raises(ValueError, match="k must be >= 1"):
        reciprocal_rank_fusion({}, k=0)


def test_when_lists_are_empty_then_nothing_is_fused() -> None:
    assert reciprocal_rank_fusion({"sparse": [], "dense": []}) == []


def test_a_chunk_found_by_both_keeps_the_record_that_carries_its_unit_vectors() -> None:
    # The sparse indexes store no unit vectors (ragway/unit_vectors.py); the dense
    # engine's record of the same chunk does, and the generator needs them.
    with_vectors = [Candidate(replace(chunk("b"), unit_vectors=b"RU1..."), 9.0, 1)]
    fused = reciprocal_rank_fusion({"sparse": ranked("b", "a"), "dense": with_vectors})
    assert {f.chunk.chunk_id: f.chunk.unit_vectors for f in fused} == {"b": b"RU1...", "a": b""}
