"""QA-set retrieval scores and the fit of the rerank skip rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragway_tools.evaluation import qa_retrieval as qr
from ragway_tools.evaluation.qa import load_qa

ROOT = Path(__file__).resolve().parents[4]


def result(
    item: str, fused: tuple[str, ...], reranked: tuple[str, ...], margin: float
) -> qr.ItemResult:
    return qr.ItemResult(item, "s", ("gold",), fused, reranked, margin, 5.0, "m")


# Wide margins: fusion is right. Narrow margins: only the reranker is right,
# except one narrow case the reranker gets wrong.
RESULTS = [
    result("a", ("gold", "x"), ("gold", "x"), 0.010),
    result("b", ("gold", "x"), ("x", "gold"), 0.008),  # the reranker breaks a confident one
    result("c", ("x", "gold"), ("gold", "x"), 0.001),
    result("d", ("x", "gold"), ("gold", "x"), 0.0005),
    result("e", ("gold", "x"), ("gold", "x"), 0.0002),
]


def test_scores_are_per_document_in_first_appearance_order() -> None:
    s = qr.scores([(("x", "gold"), ("gold",)), (("gold",), ("gold",)), (("y",), ("gold",))])
    assert s["hit@1"] == pytest.approx(1 / 3)
    assert s["hit@5"] == pytest.approx(2 / 3)
    assert s["mrr@10"] == pytest.approx((0.5 + 1) / 3)


def test_the_skip_rule_keeps_reranked_quality_with_the_most_skips() -> None:
    always = qr.summarize(RESULTS, "reranked")
    assert always["hit@1"] == pytest.approx(4 / 5)
    margin, trial = qr.fit_skip_margin(RESULTS)
    # Skipping at >= 0.001 loses "c" but keeps "b" fused (right): as good as
    # always reranking, with three of five reranks saved.
    assert margin == pytest.approx(0.001)
    assert trial["hit@1"] == always["hit@1"] and trial["skipped"] == pytest.approx(3 / 5)
    # One step lower would also skip "d" and lose it.
    assert qr.summarize(RESULTS, "skip", 0.0005)["hit@1"] < always["hit@1"]


def test_no_threshold_when_every_skip_loses() -> None:
    only_reranker_right = [result(str(i), ("x", "gold"), ("gold",), 0.01 * i) for i in range(1, 4)]
    margin, trial = qr.fit_skip_margin(only_reranker_right)
    assert margin is None and trial["skipped"] == 0.0


def test_callers_map_to_tenants_through_the_key_file() -> None:
    qa = load_qa(ROOT / "eval/helpcentre/qa-tuning.yaml")
    scopes = qr.callers(qa)
    assert scopes["northwind"] == qr.Caller("northwind", ("public",))
    assert scopes["lumen-staff"] == qr.Caller("lumen", ("public", "staff"))


def test_the_rerank_weight_is_fit_to_the_best_hit_at_1() -> None:
    # Fusion is right on "a", the reranker on "b"; a blend gets both right:
    # the reranker only overrules fusion where it is much surer.
    a = qr.ItemResult(
        "a", "s", ("gold",), ("gold", "x"), ("x", "gold"), 0.01, 5.0, "m",
        head=(("x#1", "x", 1.2), ("gold#1", "gold", 1.0), ("y#1", "y", 0.0)),
        fused_chunks=("gold#1", "x#1", "y#1"),
    )  # fmt: skip
    b = qr.ItemResult(
        "b", "s", ("gold",), ("x", "gold"), ("gold", "x"), 0.0, 5.0, "m",
        head=(("gold#1", "gold", 9.0), ("y#1", "y", 1.0), ("x#1", "x", 0.0)),
        fused_chunks=("x#1", "gold#1", "y#1"),
    )  # fmt: skip
    assert qr.summarize([a, b], "reranked")["hit@1"] == 0.5
    assert qr.summarize([a, b], "fused")["hit@1"] == 0.5
    assert qr.summarize([a, b], "reranked", weight=0.0)["hit@1"] == 0.5  # fusion's order
    weight, best = qr.fit_weight([a, b])
    assert 0.0 < weight < 1.0 and best["hit@1"] == 1.0


def test_the_curve_reranks_the_head_and_keeps_the_fused_tail() -> None:
    from ragway_tools.training.qa_curve import reranked_documents

    candidates = [("a", "pa"), ("b", "pb"), ("a", "pa2"), ("c", "pc")]
    # Depth 2: b is scored above a; the tail (a again, c) keeps its fused place.
    assert reranked_documents(candidates, [0.1, 0.9], 2) == ("b", "a", "c")
    assert reranked_documents(candidates, [0.1, 0.9, 0.5], 0) == ("a", "b", "c")
