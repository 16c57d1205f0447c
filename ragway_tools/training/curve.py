"""The reranker's depth / input length / quality / latency curve.

On two CPU cores the cross-encoder's cost is set by how many candidates it
reads (depth) and how much of each it reads (max input length). This measures
both levers on real queries: quality is nDCG@10 after reranking the top
``depth`` fused candidates (the tail keeps the fused order, as in the
retriever); latency is the wall time of one ``score`` call over those
``depth`` passages, one inference thread, as the retriever runs it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragway.reranker_artifact import passage_text
from ragway.stats import percentile
from ragway_tools.evaluation.beir import Dataset
from ragway_tools.evaluation.metrics import evaluate


@dataclass(frozen=True)
class CurvePoint:
    runtime: str
    max_length: int
    depth: int
    ndcg10: float
    recall10: float
    p50_ms: float
    p95_ms: float


def rerank_run(
    order: Sequence[tuple[str, float]], scores: Sequence[float], depth: int
) -> dict[str, float]:
    """A run (doc -> score) with the head reranked and the fused tail below it."""
    head = sorted(zip(order[:depth], scores[:depth], strict=True), key=lambda x: -x[1])
    ranked = [doc for (doc, _), _ in head] + [doc for doc, _ in order[depth:]]
    return {doc: float(len(ranked) - i) for i, doc in enumerate(ranked)}


def measure(
    artifact: Path,
    dataset: Dataset,
    candidates: dict[str, list[tuple[str, float]]],
    *,
    depths: Sequence[int],
    lengths: Sequence[int],
    runtimes: Sequence[str] = ("onnx-int8",),
    latency_queries: int = 40,
    on_step: Callable[[int], None] | None = None,
) -> list[CurvePoint]:
    """Every (runtime, length, depth) point; candidates come from the real retriever."""
    from services.retriever.rerank import OnnxCrossEncoderReranker

    qrels = {q: dataset.qrels[q] for q in candidates}
    deepest = max(depths)
    points = []
    for runtime in runtimes:
        for length in lengths:
            reranker = OnnxCrossEncoderReranker(
                artifact, max_length=length, threads=1, int8=runtime == "onnx-int8"
            )
            reranker.score("warm-up", ["warm-up"])
            scores: dict[str, list[float]] = {}
            for qid, order in candidates.items():
                texts = [_text(dataset, doc) for doc, _ in order[:deepest]]
                scores[qid] = reranker.score(dataset.queries[qid], texts)
                if on_step is not None:
                    on_step(1)
            timed = list(candidates)[:latency_queries]
            for depth in depths:
                run = {q: rerank_run(candidates[q], scores[q], depth) for q in candidates}
                means, _ = evaluate(qrels, run, (10,))
                latencies = []
                for qid in timed:
                    texts = [_text(dataset, doc) for doc, _ in candidates[qid][:depth]]
                    t0 = time.perf_counter()
                    reranker.score(dataset.queries[qid], texts)
                    latencies.append((time.perf_counter() - t0) * 1000)
                points.append(
                    CurvePoint(
                        runtime,
                        length,
                        depth,
                        means["ndcg@10"],
                        means["recall@10"],
                        percentile(latencies, 50),
                        percentile(latencies, 95),
                    )
                )
    return points


def fused_point(dataset: Dataset, candidates: dict[str, list[tuple[str, float]]]) -> float:
    """nDCG@10 of the fused order with no reranking: the curve's baseline."""
    qrels = {q: dataset.qrels[q] for q in candidates}
    run = {q: rerank_run(order, [], 0) for q, order in candidates.items()}
    return evaluate(qrels, run, (10,))[0]["ndcg@10"]


def best_under(points: Sequence[CurvePoint], budget_ms: float) -> CurvePoint | None:
    """The highest-nDCG point whose p95 fits the reranker's share of the budget."""
    fitting = [p for p in points if p.p95_ms <= budget_ms]
    return max(fitting, key=lambda p: (p.ndcg10, -p.p95_ms)) if fitting else None


def render(
    points: Sequence[CurvePoint], baseline: float, budget_ms: float, best: CurvePoint | None
) -> str:
    lines = [
        f"Fused order without reranking: nDCG@10 {baseline:.3f}. "
        f"Reranker share of the retrieval budget: {budget_ms:.0f} ms p95.",
        "",
        "| runtime | max length | depth | nDCG@10 | R@10 | rerank p50 ms | rerank p95 ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for p in points:
        mark = " **(default)**" if p == best else ""
        lines.append(
            f"| {p.runtime}{mark} | {p.max_length} | {p.depth} | {p.ndcg10:.3f} | "
            f"{p.recall10:.3f} | {p.p50_ms:.1f} | {p.p95_ms:.1f} |"
        )
    return "\n".join(lines) + "\n"


def _text(dataset: Dataset, doc_id: str) -> str:
    doc = dataset.corpus[doc_id]
    return passage_text(doc.title, doc.text)
