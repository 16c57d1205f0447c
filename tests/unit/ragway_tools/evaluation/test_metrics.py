"""Every metric against pytrec_eval (trec_eval) to 1e-9, ties and empty queries included."""

from __future__ import annotations

import random

import pytest
import pytrec_eval

from ragway_tools.evaluation.metrics import evaluate, ranked

REFERENCE = {
    "ndcg@10": "ndcg_cut_10",
    "recall@1": "recall_1",
    "recall@3": "recall_3",
    "recall@5": "recall_5",
    "recall@10": "recall_10",
    "recall@100": "recall_100",
    "hit@1": "success_1",
    "hit@5": "success_5",
    "hit@10": "success_10",
    "mrr": "recip_rank",
}


def fixture(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = random.Random(seed)
    docs = [f"d{i:03d}" for i in range(150)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(40):
        qid = f"q{q}"
        judged = rng.sample(docs, rng.randint(1, 8))
        # Graded relevance, some judged non-relevant, some queries with none relevant.
        qrels[qid] = {d: rng.choice([0, 1, 1, 2, 3]) for d in judged}
        if q % 7 == 0:
            qrels[qid] = {d: 0 for d in judged}
        retrieved = rng.sample(docs, rng.randint(5, 120))
        # Scores rounded to one decimal: many ties, which trec_eval breaks by doc id.
        run[qid] = {d: round(rng.random(), 1) for d in retrieved}
    return qrels, run


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_metrics_equal_trec_eval(seed: int) -> None:
    qrels, run = fixture(seed)
    measures = {"ndcg_cut.10", "recall.1,3,5,10,100", "success.1,5,10", "recip_rank"}
    reference = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    _, ours = evaluate(qrels, run)
    assert set(reference) == set(ours)
    for qid, ref in reference.items():
        for name, ref_name in REFERENCE.items():
            assert ours[qid][name] == pytest.approx(ref[ref_name], abs=1e-9), (qid, name)


def test_mrr_at_10_is_recip_rank_of_the_top_10() -> None:
    qrels, run = fixture(4)
    top10 = {
        q: {d: s for d, s in scores.items() if d in ranked(scores)[:10]}
        for q, scores in run.items()
    }
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(top10)
    _, ours = evaluate(qrels, run)
    for qid, ref in reference.items():
        assert ours[qid]["mrr@10"] == pytest.approx(ref["recip_rank"], abs=1e-9)


def test_ties_break_by_document_id_descending() -> None:
    assert ranked({"a": 0.5, "c": 0.5, "b": 0.5, "z": 0.9}) == ["z", "c", "b", "a"]


def test_a_query_the_run_misses_counts_as_zero_in_the_mean() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    means, per_query = evaluate(qrels, {"q1": {"a": 1.0}})
    assert per_query["q2"]["ndcg@10"] == 0.0
    assert means["ndcg@10"] == pytest.approx(0.5)
