"""The reranker's depth / length / batching / quality / latency curve on a QA set.

The same levers as ``curve.py`` (depth, max input length), plus how the pairs
are batched, measured on a help-centre QA set with each tenant's own adapted
artifact: quality is hit@1 and MRR@10 of the gold pages after reranking the top
``depth`` fused hits (the tail keeps the fused order, as in the retriever);
latency is the wall time of one ``score`` call over those ``depth`` passages,
one inference thread, as the retriever runs it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragway.stats import percentile
from ragway_tools.evaluation.qa_retrieval import ItemResult, scores


@dataclass(frozen=True)
class QACurvePoint:
    max_length: int
    depth: int
    batch_size: int  # 0: one batch padded to the longest pair
    hit1: float
    mrr10: float
    p50_ms: float
    p95_ms: float


def reranked_documents(
    candidates: Sequence[tuple[str, str]], head_scores: Sequence[float], depth: int
) -> tuple[str, ...]:
    head = sorted(zip(candidates[:depth], head_scores[:depth], strict=True), key=lambda x: -x[1])
    ordered = [doc for (doc, _), _ in head] + [doc for doc, _ in candidates[depth:]]
    return tuple(dict.fromkeys(ordered))


def measure(
    results: Sequence[ItemResult],
    artifacts: Mapping[str, Path],
    *,
    depths: Sequence[int],
    lengths: Sequence[int],
    batch_sizes: Sequence[int] = (0, 8),
    on_step: Callable[[int], None] | None = None,
) -> list[QACurvePoint]:
    """Every (length, depth, batch size) point over the items whose tenant has an artifact."""
    from services.retriever.rerank import OnnxCrossEncoderReranker

    items = [r for r in results if r.tenant in artifacts and r.candidates]
    deepest = max(depths)
    points = []
    for length in lengths:
        for batch in batch_sizes:
            rerankers = {
                t: OnnxCrossEncoderReranker(a, max_length=length, threads=1, batch_size=batch)
                for t, a in artifacts.items()
            }
            for model in rerankers.values():
                model.score("warm-up", ["warm-up"])
            full = {}
            for r in items:
                passages = [p for _, p in r.candidates][:deepest]
                full[r.item_id] = rerankers[r.tenant].score(r.query, passages)
            for depth in depths:
                latencies = []
                for r in items:
                    passages = [p for _, p in r.candidates[:depth]]
                    t0 = time.perf_counter()
                    rerankers[r.tenant].score(r.query, passages)
                    latencies.append((time.perf_counter() - t0) * 1000)
                s = scores(
                    [(reranked_documents(r.candidates, full[r.item_id], depth), r.sources)
                     for r in items]
                )  # fmt: skip
                p50, p95 = percentile(latencies, 50), percentile(latencies, 95)
                points.append(QACurvePoint(length, depth, batch, s["hit@1"], s["mrr@10"], p50, p95))
                if on_step is not None:
                    on_step(1)
    return points


def render(points: Sequence[QACurvePoint], fused: dict[str, float]) -> str:
    lines = [
        f"Fused order without reranking: hit@1 {fused['hit@1']:.3f}, MRR@10 {fused['mrr@10']:.3f}.",
        "",
        "| max length | depth | batching | hit@1 | MRR@10 | rerank p50 ms | rerank p95 ms |",
        "|---:|---:|---|---:|---:|---:|---:|",
    ]
    for p in points:
        batching = "one padded batch" if p.batch_size == 0 else f"sorted, {p.batch_size}"
        lines.append(
            f"| {p.max_length} | {p.depth} | {batching} | {p.hit1:.3f} | {p.mrr10:.3f} "
            f"| {p.p50_ms:.1f} | {p.p95_ms:.1f} |"
        )
    return "\n".join(lines) + "\n"
