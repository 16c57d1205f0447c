"""Ranking metrics with trec_eval's conventions, so numbers compare with published ones.

- A run ranks documents by score, descending; equal scores are ordered by
  document id, descending (trec_eval's tie rule).
- A document is relevant when its qrel grade is > 0; nDCG uses the grade as a
  linear gain and log2(rank + 1) as the discount (trec_eval's ndcg_cut, as BEIR).
- A query without any relevant document scores 0 on every metric. A query in the
  qrels that the run does not mention counts as retrieving nothing (0), where
  trec_eval would drop it from the mean; dropping it would flatter the system.

``tests/unit/test_metrics.py`` checks every metric against pytrec_eval to 1e-9.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from statistics import fmean

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]

DEFAULT_KS = (1, 3, 5, 10, 100)


def ranked(scores: Mapping[str, float]) -> list[str]:
    """Document ids best first: score descending, then id descending (trec_eval)."""
    return [doc for doc, _ in sorted(scores.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


def query_metrics(
    rels: Mapping[str, int], scores: Mapping[str, float], ks: Iterable[int] = DEFAULT_KS
) -> dict[str, float]:
    order = ranked(scores)
    relevant = {doc for doc, grade in rels.items() if grade > 0}
    first_hit = next((i for i, doc in enumerate(order, start=1) if doc in relevant), None)
    out: dict[str, float] = {}
    for k in ks:
        top = order[:k]
        found = sum(1 for doc in top if doc in relevant)
        out[f"recall@{k}"] = found / len(relevant) if relevant else 0.0
        out[f"hit@{k}"] = 1.0 if found else 0.0
    out["mrr@10"] = 1.0 / first_hit if first_hit is not None and first_hit <= 10 else 0.0
    out["mrr"] = 1.0 / first_hit if first_hit is not None else 0.0
    out["ndcg@10"] = ndcg(rels, order, 10)
    return out


def ndcg(rels: Mapping[str, int], order: list[str], k: int) -> float:
    dcg = sum(
        rels.get(doc, 0) / math.log2(i + 1)
        for i, doc in enumerate(order[:k], start=1)
        if rels.get(doc, 0) > 0
    )
    ideal = sorted((g for g in rels.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, start=1))
    return dcg / idcg if idcg else 0.0


def evaluate(
    qrels: Qrels, run: Run, ks: Iterable[int] = DEFAULT_KS
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """(mean over the qrels' queries, per-query metrics)."""
    ks = tuple(ks)
    per_query = {q: query_metrics(rels, run.get(q, {}), ks) for q, rels in qrels.items()}
    if not per_query:
        return {}, {}
    names = next(iter(per_query.values())).keys()
    means = {name: fmean(m[name] for m in per_query.values()) for name in names}
    return means, per_query
