"""``ragway eval rerank-bench``: the rerank stage before and after its speed-ups, in one run.

Every variant scores the same fused heads (a QA set's questions, depths 5, 10
and 20), interleaved item by item so that the load of a shared machine falls
on all of them alike; the ratios are against the fp32 baseline measured in the
same loop. The baseline is the stage as it first ran: the fp32 network, all
pairs in one batch padded to the longest, every passage tokenised whole.

Quality is measured against that baseline (does the variant rank the head as
fp32 does: top-1 agreement, Kendall's tau, nDCG of its order with fp32's order
as the gains) and against the QA set's gold pages (hit@1, MRR@10 after
reranking the head, the tail in fused order). Where the time goes is split into
tokenisation and session runs, with the share of padded tokens.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ragway.stats import percentile
from ragway_tools.evaluation.qa_retrieval import ItemResult, scores
from ragway_tools.training.qa_curve import reranked_documents

DEPTHS = (5, 10, 20)


@dataclass(frozen=True)
class Variant:
    name: str
    int8: bool
    batch_size: int  # 0: one batch padded to the longest pair
    clip: bool
    threads: int = 1


BASELINE = Variant("fp32, one padded batch", int8=False, batch_size=0, clip=False)
VARIANTS = (
    BASELINE,
    Variant("int8, one padded batch", int8=True, batch_size=0, clip=False),
    Variant("int8, length batches of 8", int8=True, batch_size=8, clip=False),
    Variant("int8, length batches of 2", int8=True, batch_size=2, clip=False),
    Variant("int8, length batches of 1", int8=True, batch_size=1, clip=False),
    Variant("int8, batches of 1, clipped", int8=True, batch_size=1, clip=True),
    Variant(
        "int8, batches of 1, clipped, 2 threads", int8=True, batch_size=1, clip=True, threads=2
    ),
)


@dataclass
class Point:
    variant: str
    depth: int
    p50_ms: float
    p95_ms: float
    p50_ratio: float = 1.0  # against the baseline at the same depth
    p95_ratio: float = 1.0
    top1_agreement: float = 1.0
    kendall_tau: float = 1.0
    ndcg_vs_fp32: float = 1.0
    hit1: float = 0.0
    mrr10: float = 0.0
    tokenise_ms: float = 0.0  # p50 of the tokenisation alone
    run_ms: float = 0.0  # p50 of the session runs alone
    padded_share: float = 0.0  # padded tokens over all tokens fed
    latencies: list[float] = field(default_factory=list, repr=False)


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-a of two score lists over the same items (1.0: the same order)."""
    n = len(a)
    if n < 2:
        return 1.0
    concordant = 0
    for i in range(n):
        for j in range(i + 1, n):
            concordant += 1 if (a[i] - a[j]) * (b[i] - b[j]) > 0 else -1
    return concordant / (n * (n - 1) / 2)


def ndcg_against(reference: Sequence[float], candidate: Sequence[float], k: int = 5) -> float:
    """nDCG@k of ``candidate``'s order, each item's gain its rank from the bottom in ``reference``.

    1.0 when the candidate puts the reference's top k in the reference's order.
    """
    n = len(reference)
    by_reference = sorted(range(n), key=lambda i: -reference[i])
    gain = {i: float(n - r) for r, i in enumerate(by_reference)}
    by_candidate = sorted(range(n), key=lambda i: -candidate[i])

    def dcg(order: Sequence[int]) -> float:
        return sum(gain[i] / math.log2(r + 2) for r, i in enumerate(order[:k]))

    best = dcg(by_reference)
    return dcg(by_candidate) / best if best else 1.0


def measure(
    items: Sequence[ItemResult],
    artifacts: Mapping[str, Path],
    *,
    variants: Sequence[Variant] = VARIANTS,
    depths: Sequence[int] = DEPTHS,
    on_item: Callable[[], None] | None = None,
) -> list[Point]:
    """Every (variant, depth) point over the items whose tenant has an artifact."""
    from services.retriever.rerank import OnnxCrossEncoderReranker

    items = [r for r in items if r.tenant in artifacts and r.candidates]
    models = {
        (v.name, t): OnnxCrossEncoderReranker(
            a, int8=v.int8, batch_size=v.batch_size, clip=v.clip, threads=v.threads
        )
        for v in variants
        for t, a in artifacts.items()
    }
    for m in models.values():
        m.score("warm-up", ["warm-up"])
    timed: dict[tuple[str, int], list[float]] = {(v.name, d): [] for v in variants for d in depths}
    split: dict[tuple[str, int], list[tuple[float, float, int, int]]] = {
        k: [] for k in timed
    }  # (tokenise ms, run ms, padded tokens, fed tokens) per call
    got: dict[tuple[str, int], list[list[float]]] = {k: [] for k in timed}
    for n, item in enumerate(items):
        for depth in depths:
            passages = [p for _, p in item.candidates[:depth]]
            # Rotate who goes first, so no variant always meets a cold cache.
            for v in [*variants[n % len(variants) :], *variants[: n % len(variants)]]:
                model = models[(v.name, item.tenant)]
                t0 = time.perf_counter()
                got[(v.name, depth)].append(model.score(item.query, passages))
                timed[(v.name, depth)].append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                batches = model.batches(item.query, passages)
                t1 = time.perf_counter()
                for _, arrays in batches:
                    model.run(arrays)
                t2 = time.perf_counter()
                mask = [a["attention_mask"] for _, a in batches]
                fed = sum(int(m.size) for m in mask)
                split[(v.name, depth)].append(
                    ((t1 - t0) * 1000, (t2 - t1) * 1000, fed - sum(int(m.sum()) for m in mask), fed)
                )
        if on_item is not None:
            on_item()
    points = []
    for depth in depths:
        base = timed[(BASELINE.name, depth)]
        base_p50, base_p95 = percentile(base, 50), percentile(base, 95)
        for v in variants:
            key = (v.name, depth)
            lat, parts, ref = timed[key], split[key], got[(BASELINE.name, depth)]
            quality = scores(
                [(reranked_documents(r.candidates, s, depth), r.sources)
                 for r, s in zip(items, got[key], strict=True)]
            )  # fmt: skip
            pairs = list(zip(got[key], ref, strict=True))
            points.append(
                Point(
                    variant=v.name,
                    depth=depth,
                    p50_ms=percentile(lat, 50),
                    p95_ms=percentile(lat, 95),
                    p50_ratio=percentile(lat, 50) / base_p50,
                    p95_ratio=percentile(lat, 95) / base_p95,
                    top1_agreement=statistics.fmean(_top(s) == _top(r) for s, r in pairs),
                    kendall_tau=statistics.fmean(kendall_tau(r, s) for s, r in pairs),
                    ndcg_vs_fp32=statistics.fmean(ndcg_against(r, s) for s, r in pairs),
                    hit1=quality["hit@1"],
                    mrr10=quality["mrr@10"],
                    tokenise_ms=percentile([p[0] for p in parts], 50),
                    run_ms=percentile([p[1] for p in parts], 50),
                    padded_share=sum(p[2] for p in parts) / max(1, sum(p[3] for p in parts)),
                    latencies=lat,
                )
            )
    return points


def _top(values: Sequence[float]) -> int:
    return max(range(len(values)), key=values.__getitem__)


def render(points: Sequence[Point], meta: Mapping[str, Any]) -> str:
    lines = [
        "# ragway eval rerank-bench",
        "",
        f"QA set {meta['qa']}, {meta['items']} questions, artifacts: "
        + ", ".join(f"{t}={a}" for t, a in meta["artifacts"].items())
        + f"; {meta['cpus']} CPUs, load average {meta['load']} at the start. The variants run "
        "interleaved on the same heads; ratios are against the fp32 baseline of the same run.",
        "",
        "| variant | depth | p50 ms | p95 ms | p50 ratio | p95 ratio | top-1 = fp32 | Kendall tau "
        "| nDCG@5 vs fp32 | hit@1 | MRR@10 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p in points:
        lines.append(
            f"| {p.variant} | {p.depth} | {p.p50_ms:.1f} | {p.p95_ms:.1f} | {p.p50_ratio:.2f} "
            f"| {p.p95_ratio:.2f} | {p.top1_agreement:.3f} | {p.kendall_tau:.3f} "
            f"| {p.ndcg_vs_fp32:.3f} | {p.hit1:.3f} | {p.mrr10:.3f} |"
        )
    lines += [
        "",
        "Where the time goes (p50 of each part, measured apart from the timed call):",
        "",
        "| variant | depth | tokenise ms | session runs ms | padded tokens |",
        "|---|---:|---:|---:|---:|",
    ]
    for p in points:
        lines.append(
            f"| {p.variant} | {p.depth} | {p.tokenise_ms:.1f} | {p.run_ms:.1f} "
            f"| {p.padded_share:.0%} |"
        )
    return "\n".join(lines) + "\n"


def as_json(points: Sequence[Point]) -> list[dict[str, Any]]:
    return [asdict(p) for p in points]
