"""Retrieval quality on a QA set: does each question find its gold page first?

A QA set (``ragway_tools/evaluation/qa.py``) names each answerable question's
gold documents and its caller; the caller's API key maps to a tenant and access
groups through the set's key file. Every answerable question is searched twice
on a retriever holding the set's knowledge base, in the caller's scope: fused
order (rerank off) and reranked (rerank on). Scores are per document, in the
order documents first appear in the hits: hit@1, hit@5, MRR@10.

The same two searches give the data the rerank *skip rule* is fit on: the fused
margin (first minus second fused score) of each question, and whether skipping
the rerank at that margin would have lost anything. Fit it on a tuning set only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from ragway.reranker_artifact import passage_text
from ragway.stats import percentile
from ragway.v1 import retriever_pb2, retriever_pb2_grpc
from ragway_tools.evaluation.qa import QAFileError, QASet
from services.retriever.search import blend


@dataclass(frozen=True)
class Caller:
    tenant: str
    groups: tuple[str, ...]


def callers(qa: QASet) -> dict[str, Caller]:
    """Each caller's tenant and groups, from the set's key file (keys match by sha256)."""
    if qa.api_keys is None:
        raise QAFileError(f"{qa.name}: names no api_keys file to map callers to tenants")
    raw = yaml.safe_load(qa.api_keys.read_text(encoding="utf-8")) or {}
    by_hash = {
        str(k["sha256"]): Caller(str(k["tenant"]), tuple(str(g) for g in k["groups"]))
        for k in raw.get("keys", [])
    }
    out = {}
    for name, key in qa.callers.items():
        found = by_hash.get(hashlib.sha256(key.encode()).hexdigest())
        if found is None:
            raise QAFileError(f"{qa.name}: caller {name!r}: its key is not in {qa.api_keys}")
        out[name] = found
    return out


@dataclass(frozen=True)
class ItemResult:
    item_id: str
    segment: str
    sources: tuple[str, ...]
    fused: tuple[str, ...]  # document ids in first-appearance order, rerank off
    reranked: tuple[str, ...]  # the same, rerank on
    margin: float  # fused first minus second score (what the skip rule reads)
    rerank_ms: float
    reranker: str
    tenant: str = ""
    query: str = ""
    # The fused hits as (document id, the passage the reranker reads): the curve's input.
    candidates: tuple[tuple[str, str], ...] = ()
    # The reranked response as (chunk id, document id, rerank score or None), and
    # the fused order of the chunk ids (rerank off): what a blend is computed from.
    head: tuple[tuple[str, str, float | None], ...] = ()
    fused_chunks: tuple[str, ...] = ()


def documents(hits: Sequence[retriever_pb2.SearchHit]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(h.document_id for h in hits))


def run(
    stub: retriever_pb2_grpc.RetrieverStub,
    qa: QASet,
    *,
    top_k: int = 10,
    on_item: Callable[[], None] | None = None,
) -> list[ItemResult]:
    scopes = callers(qa)
    out = []
    for item in qa.items:
        if not item.answerable or not item.sources:
            continue
        scope = scopes[item.caller]

        def search(rerank: int, scope: Caller = scope, query: str = item.question) -> Any:
            return stub.Search(
                retriever_pb2.SearchRequest(
                    query=query,
                    tenant=scope.tenant,
                    access_groups=list(scope.groups),
                    top_k=top_k,
                    mode=retriever_pb2.SEARCH_MODE_HYBRID,
                    rerank=rerank,  # type: ignore[arg-type]
                    budget_ms=60_000,
                ),
                timeout=120,
            )

        off = search(retriever_pb2.RERANK_MODE_OFF)
        on = search(retriever_pb2.RERANK_MODE_ON)
        hits = list(off.hits)
        margin = hits[0].scores.fused - hits[1].scores.fused if len(hits) > 1 else float("inf")
        timings = {t.stage: t.ms for t in on.timings}
        out.append(
            ItemResult(
                item.id,
                item.segment,
                item.sources,
                documents(off.hits),
                documents(on.hits),
                margin,
                timings.get("rerank", 0.0),
                on.reranker_model,
                scope.tenant,
                item.question,
                tuple((h.document_id, passage_text(h.title, h.text, h.section)) for h in off.hits),
                tuple(
                    (h.chunk_id, h.document_id, h.scores.rerank if h.scores.reranked else None)
                    for h in on.hits
                ),
                tuple(h.chunk_id for h in off.hits),
            )
        )
        if on_item is not None:
            on_item()
    return out


def reciprocal_rank(docs: Sequence[str], sources: Sequence[str], k: int = 10) -> float:
    for rank, d in enumerate(docs[:k], start=1):
        if d in sources:
            return 1 / rank
    return 0.0


def scores(ranked: Sequence[tuple[Sequence[str], Sequence[str]]]) -> dict[str, float]:
    """hit@1, hit@5, MRR@10 of (documents, gold sources) pairs."""
    n = max(1, len(ranked))
    return {
        "questions": len(ranked),
        "hit@1": sum(1 for d, s in ranked if d[:1] and d[0] in s) / n,
        "hit@5": sum(1 for d, s in ranked if set(d[:5]) & set(s)) / n,
        "mrr@10": sum(reciprocal_rank(d, s) for d, s in ranked) / n,
    }


def order(
    result: ItemResult, policy: str, margin: float | None = None, weight: float = 1.0
) -> tuple[str, ...]:
    """The documents the retriever would return under a policy.

    ``fused``, ``reranked`` (blended at ``weight``, as ``RAGWAY_RERANK_WEIGHT``),
    or ``skip`` (the fused order when its margin reaches ``margin``).
    """
    if policy == "fused":
        return result.fused
    if policy == "skip" and margin is not None and result.margin >= margin:
        return result.fused
    if weight >= 1.0 or not result.head:
        return result.reranked
    position = {c: i for i, c in enumerate(result.fused_chunks)}
    head = sorted((h for h in result.head if h[2] is not None), key=lambda h: position.get(h[0], 0))
    tail = [h[1] for h in result.head if h[2] is None]
    final = blend([-float(i) for i in range(len(head))], [h[2] or 0.0 for h in head], weight)
    ranked = [h[1] for h, _ in sorted(zip(head, final, strict=True), key=lambda x: -x[1])]
    return tuple(dict.fromkeys(ranked + tail))


def summarize(
    results: Sequence[ItemResult], policy: str, margin: float | None = None, weight: float = 1.0
) -> dict[str, float]:
    out = scores([(order(r, policy, margin, weight), r.sources) for r in results])
    if policy == "skip" and margin is not None:
        out["skipped"] = sum(1 for r in results if r.margin >= margin) / max(1, len(results))
    return out


def by_segment(
    results: Sequence[ItemResult], policy: str, margin: float | None = None
) -> dict[str, dict[str, float]]:
    segments = sorted({r.segment for r in results})
    return {s: summarize([r for r in results if r.segment == s], policy, margin) for s in segments}


def fit_skip_margin(
    results: Sequence[ItemResult], *, mrr_tolerance: float = 0.005, weight: float = 1.0
) -> tuple[float | None, dict[str, float]]:
    """The smallest margin (most skips) that keeps hit@1 and MRR at the always-rerank level.

    Candidate thresholds are the observed margins; ``None`` when no threshold
    skips anything without a loss (always rerank).
    """
    always = summarize(results, "reranked", weight=weight)
    best: tuple[float | None, dict[str, float]] = (None, always | {"skipped": 0.0})
    for margin in sorted({r.margin for r in results if r.margin != float("inf")}, reverse=True):
        trial = summarize(results, "skip", margin, weight)
        if (
            trial["hit@1"] >= always["hit@1"]
            and trial["mrr@10"] >= always["mrr@10"] - mrr_tolerance
        ):
            best = (margin, trial)
    return best


def fit_weight(
    results: Sequence[ItemResult], *, step: float = 0.05
) -> tuple[float, dict[str, float]]:
    """The rerank weight with the best hit@1 (then MRR, then the higher weight) on this set."""
    grid = [round(i * step, 4) for i in range(round(1 / step) + 1)]
    scored = [(w, summarize(results, "reranked", weight=w)) for w in grid]
    return max(scored, key=lambda ws: (ws[1]["hit@1"], ws[1]["mrr@10"], ws[0]))


def latency(results: Sequence[ItemResult]) -> dict[str, float]:
    values = sorted(r.rerank_ms for r in results if r.rerank_ms > 0)
    if not values:
        return {"p50": 0.0, "p95": 0.0}
    return {"p50": round(percentile(values, 50), 2), "p95": round(percentile(values, 95), 2)}


def render(
    name: str,
    results: Sequence[ItemResult],
    margin: float | None,
    meta: dict[str, Any],
    weight: float = 1.0,
) -> str:
    rows = [("hybrid (fused order)", summarize(results, "fused"))]
    if any(r.reranker for r in results):
        rows.append(("hybrid + rerank", summarize(results, "reranked")))
        if weight < 1.0:
            rows.append(
                (
                    f"hybrid + rerank, weight {weight:.2f}",
                    summarize(results, "reranked", weight=weight),
                )
            )
        if margin is not None:
            label = f"hybrid + rerank, weight {weight:.2f}, skip ≥ {margin:.5f}"
            rows.append((label, summarize(results, "skip", margin, weight)))
    lines = [
        f"# Retrieval on {name}",
        "",
        "| mode | questions | hit@1 | hit@5 | MRR@10 | skipped |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, s in rows:
        skipped = f"{s['skipped']:.0%}" if "skipped" in s else ""
        lines.append(
            f"| {label} | {s['questions']:.0f} | {s['hit@1']:.3f} | {s['hit@5']:.3f} "
            f"| {s['mrr@10']:.3f} | {skipped} |"
        )
    lat = latency(results)
    lines += [
        "",
        f"Rerank stage: p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms. "
        + ", ".join(f"{k}: {v}" for k, v in meta.items()),
        "",
    ]
    return "\n".join(lines)
