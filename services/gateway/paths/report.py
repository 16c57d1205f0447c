"""The comparison of a candidate with the baseline of the same experiment, and its gates.

Pure functions of run records: the same records give the same report, so the
admin endpoint, the automatic rollback and the tests all agree. A metric with
fewer than ``Gates.min_samples`` runs on either side is ``inconclusive`` (never
a pass): missing data never counts as good.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from services.gateway.paths.models import Gates
from services.gateway.runs.models import RunRecord, RunStatus

Verdict = Literal["pass", "breach", "inconclusive"]


class PathMetrics(BaseModel):
    path: str
    versions: list[int] = Field(description="The path versions these runs were served by.")
    runs: int = Field(description="Finished runs (succeeded or failed; cancelled left out).")
    errors: int
    error_rate: float | None
    answered: int = Field(description="Succeeded runs that were not refused.")
    refusal_rate: float | None
    citation_validity: float | None = Field(
        description="Answered runs whose citations are all known passages, and at least one."
    )
    latency_p50_ms: float | None
    latency_p95_ms: float | None


class ShadowPairs(BaseModel):
    pairs: int
    top_k_overlap: float | None = Field(description="Mean |A&B| / max(|A|,|B|) of source ids.")
    refusal_agreement: float | None
    cited_agreement: float | None = Field(description="Mean Jaccard of cited source ids.")
    latency_delta_p50_ms: float | None = Field(description="Median of candidate - baseline.")
    dropped: int = Field(description="Shadows not run: the shadow queue was full.")


class GateResult(BaseModel):
    metric: str
    verdict: Verdict
    baseline: float | None
    candidate: float | None
    limit: str
    samples: int = Field(description="The smaller side's sample.")


class Report(BaseModel):
    experiment: str | None
    mode: str
    retrieval_only: bool = Field(
        default=False, description="Shadows ran retrieval only: answer gates do not apply."
    )
    verdict: Verdict
    baseline: PathMetrics
    candidate: PathMetrics
    shadow: ShadowPairs | None
    gates: list[GateResult]
    breaches: list[str]


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (deterministic, no interpolation)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return round(ordered[rank - 1], 3)


def _valid_citations(record: RunRecord) -> bool:
    known = {s.source_id for s in record.sources}
    return bool(record.citations) and all(c.source_id in known for c in record.citations)


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def metrics(path: str, records: Sequence[RunRecord]) -> PathMetrics:
    finished = [r for r in records if r.status in (RunStatus.SUCCEEDED, RunStatus.FAILED)]
    ok = [r for r in finished if r.status is RunStatus.SUCCEEDED]
    generated = [r for r in ok if r.refused is not None]  # not retrieval-only shadows
    answered = [r for r in generated if not r.refused]
    latencies = [r.timings_ms["total"] for r in ok if "total" in r.timings_ms]
    return PathMetrics(
        path=path,
        versions=sorted({r.path_version for r in records}),
        runs=len(finished),
        errors=len(finished) - len(ok),
        error_rate=_ratio(len(finished) - len(ok), len(finished)),
        answered=len(answered),
        refusal_rate=_ratio(len(generated) - len(answered), len(generated)),
        citation_validity=_ratio(sum(_valid_citations(r) for r in answered), len(answered)),
        latency_p50_ms=percentile(latencies, 50),
        latency_p95_ms=percentile(latencies, 95),
    )


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / max(len(a), len(b)) if a or b else 1.0


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def shadow_pairs(
    baseline: Sequence[RunRecord],
    shadows: Sequence[RunRecord],
    dropped: int,
    *,
    retrieval_only: bool = False,
) -> ShadowPairs:
    served = {r.id: r for r in baseline if r.status is RunStatus.SUCCEEDED}
    pairs = [
        (served[s.shadow_of], s)
        for s in shadows
        if s.status is RunStatus.SUCCEEDED and s.shadow_of in served
    ]
    if not pairs:
        return ShadowPairs(
            pairs=0,
            top_k_overlap=None,
            refusal_agreement=None,
            cited_agreement=None,
            latency_delta_p50_ms=None,
            dropped=dropped,
        )
    n = len(pairs)
    overlap = sum(
        _overlap({x.source_id for x in b.sources}, {x.source_id for x in c.sources})
        for b, c in pairs
    )
    cited = sum(
        _jaccard({x.source_id for x in b.citations}, {x.source_id for x in c.citations})
        for b, c in pairs
    )
    deltas = [
        c.timings_ms["total"] - b.timings_ms["total"]
        for b, c in pairs
        if "total" in b.timings_ms and "total" in c.timings_ms
    ]
    return ShadowPairs(
        pairs=n,
        top_k_overlap=round(overlap / n, 4),
        refusal_agreement=None
        if retrieval_only
        else round(sum(bool(b.refused) == bool(c.refused) for b, c in pairs) / n, 4),
        cited_agreement=None if retrieval_only else round(cited / n, 4),
        latency_delta_p50_ms=None if retrieval_only else percentile(deltas, 50),
        dropped=dropped,
    )


def _gate(
    metric: str,
    base: float | None,
    cand: float | None,
    samples: int,
    gates: Gates,
    breached: bool,
    limit: str,
) -> GateResult:
    if samples < gates.min_samples or base is None or cand is None:
        verdict: Verdict = "inconclusive"
    else:
        verdict = "breach" if breached else "pass"
    return GateResult(
        metric=metric, verdict=verdict, baseline=base, candidate=cand, limit=limit, samples=samples
    )


def judge(
    base: PathMetrics,
    cand: PathMetrics,
    shadow: ShadowPairs | None,
    gates: Gates,
    *,
    retrieval_only: bool = False,
) -> list[GateResult]:
    def diff(a: float | None, b: float | None) -> float:
        return (a or 0.0) - (b or 0.0)

    ok_b, ok_c = base.runs - base.errors, cand.runs - cand.errors
    results = [
        _gate(
            "error_rate",
            base.error_rate,
            cand.error_rate,
            min(base.runs, cand.runs),
            gates,
            diff(cand.error_rate, base.error_rate) > gates.max_error_rate_increase,
            f"candidate <= baseline + {gates.max_error_rate_increase}",
        ),
        _gate(
            "refusal_rate",
            base.refusal_rate,
            cand.refusal_rate,
            min(ok_b, ok_c),
            gates,
            diff(cand.refusal_rate, base.refusal_rate) > gates.max_refusal_rate_increase,
            f"candidate <= baseline + {gates.max_refusal_rate_increase}",
        ),
        _gate(
            "citation_validity",
            base.citation_validity,
            cand.citation_validity,
            min(base.answered, cand.answered),
            gates,
            diff(base.citation_validity, cand.citation_validity) > gates.max_citation_validity_drop,
            f"candidate >= baseline - {gates.max_citation_validity_drop}",
        ),
        _gate(
            "latency_p95_ms",
            base.latency_p95_ms,
            cand.latency_p95_ms,
            min(ok_b, ok_c),
            gates,
            (cand.latency_p95_ms or 0.0)
            > (base.latency_p95_ms or 0.0) * gates.max_p95_latency_ratio,
            f"candidate <= baseline x {gates.max_p95_latency_ratio}",
        ),
    ]
    if retrieval_only:
        # No answer was generated: only failures and the ranked sources compare.
        results = results[:1]
    if shadow is not None:
        results.append(
            _gate(
                "top_k_overlap",
                1.0,
                shadow.top_k_overlap,
                shadow.pairs,
                gates,
                (shadow.top_k_overlap or 0.0) < gates.min_top_k_overlap,
                f"mean overlap >= {gates.min_top_k_overlap}",
            )
        )
    return results


def overall(results: Sequence[GateResult]) -> Verdict:
    if any(g.verdict == "breach" for g in results):
        return "breach"
    if results and all(g.verdict == "pass" for g in results):
        return "pass"
    return "inconclusive"


def build_report(
    experiment: str | None,
    mode: str,
    baseline: Sequence[RunRecord],
    candidate: Sequence[RunRecord],
    gates: Gates,
    *,
    candidate_name: str,
    dropped: int = 0,
    retrieval_only: bool = False,
) -> Report:
    """Baseline runs against candidate runs (served ones in a canary, shadows in a shadow)."""
    base = metrics("baseline", baseline)
    cand = metrics(candidate_name, candidate)
    shadow = (
        shadow_pairs(baseline, candidate, dropped, retrieval_only=retrieval_only)
        if mode == "shadow"
        else None
    )
    results = judge(base, cand, shadow, gates, retrieval_only=retrieval_only)
    return Report(
        experiment=experiment,
        mode=mode,
        retrieval_only=retrieval_only,
        verdict=overall(results),
        baseline=base,
        candidate=cand,
        shadow=shadow,
        gates=results,
        breaches=[g.metric for g in results if g.verdict == "breach"],
    )
