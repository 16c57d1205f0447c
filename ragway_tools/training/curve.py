"""The reranker's depth / input length / layers / quality / latency curve.

On two CPU cores the cross-encoder's cost is set by how many candidates it
reads (depth), how much of each it reads (max input length) and how deep the
network is (encoder layers: one artifact per layer count, each trained with
``ragway train reranker --layers N``). This measures the three levers on real
queries: quality is nDCG@10 after reranking the top ``depth`` fused
candidates (the tail keeps the fused order, as in the retriever); latency is
the wall time of one ``score`` call over those ``depth`` passages, with the
retriever's batching and thread count (one thread, pairs one at a time, unless
told otherwise).
"""

from __future__ import annotations

import json
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
    layers: int
    max_length: int
    depth: int
    ndcg10: float
    recall10: float
    p50_ms: float
    p95_ms: float
    artifact: str = ""


def artifact_layers(artifact: Path) -> int:
    """The encoder layers an artifact was trained with (its ``train_config``)."""
    meta = json.loads((artifact / "artifact.json").read_text())
    return int(meta["train_config"]["layers"])


# The quality measure is nDCG@10, so every query needs at least ten fused
# candidates whatever depths are reranked: below the reranked head, the fused tail
# fills the first page, as the retriever's top_k does. (With candidates only as
# deep as the deepest point, a curve of depths 3 and 5 scored 5 documents a query,
# so its nDCG@10 was not the one the retriever's results would get.)
QUALITY_CUTOFF = 10


def candidate_depth(depths: Sequence[int]) -> int:
    """How many fused candidates a curve over these rerank depths needs per query."""
    return max(*depths, QUALITY_CUTOFF)


def rerank_run(
    order: Sequence[tuple[str, float]], scores: Sequence[float], depth: int
) -> dict[str, float]:
    """A run (doc -> score) with the head reranked and the fused tail below it."""
    head = sorted(zip(order[:depth], scores[:depth], strict=True), key=lambda x: -x[1])
    ranked = [doc for (doc, _), _ in head] + [doc for doc, _ in order[depth:]]
    return {doc: float(len(ranked) - i) for i, doc in enumerate(ranked)}


def measure(
    artifacts: Sequence[Path],
    dataset: Dataset,
    candidates: dict[str, list[tuple[str, float]]],
    *,
    depths: Sequence[int],
    lengths: Sequence[int],
    runtimes: Sequence[str] = ("onnx-int8",),
    latency_queries: int = 40,
    threads: int = 1,
    batch_size: int = 1,
    on_step: Callable[[int], None] | None = None,
) -> list[CurvePoint]:
    """Every (artifact, runtime, length, depth) point; candidates come from the real retriever.

    ``threads`` and ``batch_size`` are the retriever's ``RAGWAY_RERANK_THREADS``
    and ``RAGWAY_RERANK_BATCH_SIZE``; the defaults are its own. The timed calls
    of all the points run interleaved query by query, so the load of a shared
    machine falls on every point alike (the quality pass runs first, apart).
    """
    from services.retriever.rerank import OnnxCrossEncoderReranker

    qrels = {q: dataset.qrels[q] for q in candidates}
    deepest = max(depths)
    configs = [(a, r, n) for a in artifacts for r in runtimes for n in lengths]
    rerankers = {}
    # depth -> query -> scores of its top ``depth``. With pairs one at a time a
    # pair's score does not depend on the others, so the deepest call serves
    # every depth; batched pairs share an int8 activation scale, so then each
    # depth is scored as the retriever would score it.
    scores: dict[tuple[Path, str, int], dict[int, dict[str, list[float]]]] = {}
    for config in configs:
        artifact, runtime, length = config
        reranker = OnnxCrossEncoderReranker(
            artifact,
            max_length=length,
            threads=threads,
            batch_size=batch_size,
            int8=runtime.startswith("onnx-int8"),
            window="best" if runtime.endswith("+best") else "head",
        )
        reranker.score("warm-up", ["warm-up"])
        rerankers[config] = reranker
        by_depth: dict[int, dict[str, list[float]]] = {d: {} for d in depths}
        for qid, order in candidates.items():
            query = dataset.queries[qid]
            if batch_size == 1:
                texts = [_text(dataset, doc) for doc, _ in order[:deepest]]
                got = reranker.score(query, texts)
                for depth in depths:
                    by_depth[depth][qid] = got[:depth]
            else:
                for depth in depths:
                    texts = [_text(dataset, doc) for doc, _ in order[:depth]]
                    by_depth[depth][qid] = reranker.score(query, texts)
            if on_step is not None:
                on_step(1)
        scores[config] = by_depth
    latencies: dict[tuple[Path, str, int, int], list[float]] = {
        (*c, d): [] for c in configs for d in depths
    }
    for i, qid in enumerate(list(candidates)[:latency_queries]):
        for depth in depths:
            texts = [_text(dataset, doc) for doc, _ in candidates[qid][:depth]]
            # Rotate who goes first, so no point always meets a cold cache.
            for config in [*configs[i % len(configs) :], *configs[: i % len(configs)]]:
                t0 = time.perf_counter()
                rerankers[config].score(dataset.queries[qid], texts)
                latencies[(*config, depth)].append((time.perf_counter() - t0) * 1000)
    points = []
    for config in configs:
        artifact, runtime, length = config
        layers = artifact_layers(artifact)
        for depth in depths:
            run = {
                q: rerank_run(candidates[q], scores[config][depth][q], depth) for q in candidates
            }
            means, _ = evaluate(qrels, run, (10,))
            timed = latencies[(*config, depth)]
            points.append(
                CurvePoint(
                    runtime,
                    layers,
                    length,
                    depth,
                    means["ndcg@10"],
                    means["recall@10"],
                    percentile(timed, 50),
                    percentile(timed, 95),
                    artifact.name,
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
        f"Rerank stage budget: {budget_ms:.0f} ms p95.",
        "",
        "| runtime | layers | max length | depth | nDCG@10 | R@10 | rerank p50 ms "
        "| rerank p95 ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p in points:
        mark = " **(default)**" if p == best else ""
        lines.append(
            f"| {p.runtime}{mark} | {p.layers} | {p.max_length} | {p.depth} | {p.ndcg10:.3f} | "
            f"{p.recall10:.3f} | {p.p50_ms:.1f} | {p.p95_ms:.1f} |"
        )
    return "\n".join(lines) + "\n"


def _text(dataset: Dataset, doc_id: str) -> str:
    doc = dataset.corpus[doc_id]
    return passage_text(doc.title, doc.text)
