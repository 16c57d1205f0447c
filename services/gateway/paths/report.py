"""The comparison of a candidate with the baseline of the same experiment, and its gates.

Pure functions of run records: the same records give the same report, so the
admin endpoint, the automatic rollback and the tests all agree. A metric with
fewer than ``Gates.min_samples`` runs on either side is ``inconclusive`` (never
a pass): missing data never counts as good.

Every gate is a sequential test, because the report is re-judged after every
finished run: a rate gate holds a confidence sequence for candidate - baseline
(ragway.sequential.difference_cs), breaches when all of it lies beyond the
limit and passes when all of it lies within; a shadow gate tests the mean of
its pairs against its limit the same way. ``Gates.alpha`` is split evenly over
the gates judged, so the verdict as a whole is wrongly ``breach`` (or wrongly
``pass``) with probability at most alpha over the whole experiment.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from ragway.sequential import difference_cs, mean_cs, mean_test, proportion_cs
from services.gateway.paths.agreement import compare
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


MAX_FLAGGED = 20


class FlaggedPair(BaseModel):
    served: str = Field(description="The served run's id.")
    shadow: str = Field(description="The shadow run's id.")
    reason: str = Field(
        description="refusal_changed, cited_documents_changed, numbers_changed, "
        "negation_changed or answer_changed."
    )
    overlap: float | None = Field(description="Term F1 of the two answers.")


class ShadowPairs(BaseModel):
    pairs: int
    top_k_overlap: float | None = Field(description="Mean |A&B| / max(|A|,|B|) of source ids.")
    refusal_agreement: float | None
    cited_agreement: float | None = Field(description="Mean Jaccard of cited source ids.")
    answer_agreement: float | None = Field(
        default=None,
        description="Share of pairs whose answers agree: same refusal, cited documents, "
        "numbers and negations, and term overlap >= the gate's min_answer_overlap.",
    )
    latency_delta_p50_ms: float | None = Field(description="Median of candidate - baseline.")
    dropped: int = Field(description="Shadows not run: the shadow queue was full.")
    flagged: list[FlaggedPair] = Field(
        default_factory=list,
        description=f"Pairs whose answers disagree, oldest first (at most {MAX_FLAGGED}).",
    )


class FeedbackSide(BaseModel):
    rated: int = Field(description="Served runs with feedback (a rating per run: the latest).")
    not_helpful: int = Field(description="Of those, rated `down`.")
    not_helpful_share: float | None = Field(description="not_helpful / rated; null: none rated.")
    lower: float | None = Field(
        description="Confidence sequence of the share (the report's alpha), valid under "
        "continuous monitoring."
    )
    upper: float | None


class FeedbackComparison(BaseModel):
    """Users' "not helpful" share per side. Missing feedback never counts as good: a side
    with fewer than min_samples ratings is ``inconclusive``, and so is one with none."""

    baseline: FeedbackSide
    candidate: FeedbackSide
    status: Literal["measured", "inconclusive"] = Field(
        description="inconclusive while either side has fewer than min_samples ratings."
    )
    gated: bool = Field(
        description="Gates.max_not_helpful_increase is set: the `not_helpful_rate` gate "
        "judges it; else it is reported only."
    )


class GateResult(BaseModel):
    metric: str
    verdict: Verdict
    baseline: float | None
    candidate: float | None
    limit: str
    samples: int = Field(description="The smaller side's sample.")
    lower: float | None = Field(
        default=None,
        description="Confidence sequence of the tested quantity (candidate - baseline for a "
        "rate, the pairs' mean for a shadow gate), valid under continuous monitoring.",
    )
    upper: float | None = None
    alpha: float | None = Field(default=None, description="This gate's share of the alpha.")


class Report(BaseModel):
    experiment: str | None
    mode: str
    retrieval_only: bool = Field(
        default=False, description="Shadows ran retrieval only: answer gates do not apply."
    )
    verdict: Verdict
    alpha: float = Field(default=0.05, description="The verdict's error rate (all gates).")
    baseline: PathMetrics
    candidate: PathMetrics
    shadow: ShadowPairs | None
    feedback: FeedbackComparison | None = Field(
        default=None, description="User feedback on the served runs (a canary only)."
    )
    gates: list[GateResult]
    breaches: list[str]
    since_ms: int = Field(
        default=0,
        description="Only runs finished since then: a stepped canary's report is its "
        "current step's, from the step's start.",
    )
    step: int | None = Field(
        default=None, description="A stepped canary: the index of the step judged."
    )


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


def _pairs(
    baseline: Sequence[RunRecord], shadows: Sequence[RunRecord]
) -> list[tuple[RunRecord, RunRecord]]:
    served = {r.id: r for r in baseline if r.status is RunStatus.SUCCEEDED}
    return [
        (served[s.shadow_of], s)
        for s in shadows
        if s.status is RunStatus.SUCCEEDED and s.shadow_of in served
    ]


def _overlaps(pairs: Sequence[tuple[RunRecord, RunRecord]]) -> list[float]:
    return [
        _overlap({x.source_id for x in b.sources}, {x.source_id for x in c.sources})
        for b, c in pairs
    ]


def shadow_pairs(
    baseline: Sequence[RunRecord],
    shadows: Sequence[RunRecord],
    dropped: int,
    *,
    retrieval_only: bool = False,
    min_answer_overlap: float = Gates().min_answer_overlap,
) -> ShadowPairs:
    pairs = _pairs(baseline, shadows)
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
    overlap = sum(_overlaps(pairs))
    if retrieval_only:
        return ShadowPairs(
            pairs=n,
            top_k_overlap=round(overlap / n, 4),
            refusal_agreement=None,
            cited_agreement=None,
            latency_delta_p50_ms=None,
            dropped=dropped,
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
    verdicts = [(b, c, compare(b, c, min_answer_overlap)) for b, c in pairs]
    flagged = [
        FlaggedPair(served=b.id, shadow=c.id, reason=v.reason, overlap=v.overlap)
        for b, c, v in verdicts
        if not v.agrees
    ]
    return ShadowPairs(
        pairs=n,
        top_k_overlap=round(overlap / n, 4),
        refusal_agreement=round(sum(bool(b.refused) == bool(c.refused) for b, c in pairs) / n, 4),
        cited_agreement=round(cited / n, 4),
        answer_agreement=round(sum(v.agrees for _, _, v in verdicts) / n, 4),
        latency_delta_p50_ms=percentile(deltas, 50),
        dropped=dropped,
        flagged=flagged[:MAX_FLAGGED],
    )


class _Side:
    """The counts a side's rate gates test, from its records in the order they finished."""

    def __init__(
        self, records: Sequence[RunRecord], ratings: Mapping[str, str] | None = None
    ) -> None:
        finished = [r for r in records if r.status in (RunStatus.SUCCEEDED, RunStatus.FAILED)]
        ok = [r for r in finished if r.status is RunStatus.SUCCEEDED]
        generated = [r for r in ok if r.refused is not None]
        answered = [r for r in generated if not r.refused]
        self.runs = len(finished)
        self.errors = self.runs - len(ok)
        self.generated = len(generated)
        self.refused = self.generated - len(answered)
        self.answered = len(answered)
        self.invalid = sum(not _valid_citations(r) for r in answered)
        self.latencies = [r.timings_ms["total"] for r in ok if "total" in r.timings_ms]
        rated = [ratings[r.id] for r in finished if ratings and r.id in ratings]
        self.rated = len(rated)
        self.not_helpful = sum(rating == "down" for rating in rated)


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _verdict_of(samples: int, gates: Gates, breached: bool, passed: bool) -> Verdict:
    if samples < gates.min_samples:
        return "inconclusive"
    return "breach" if breached else "pass" if passed else "inconclusive"


def _increase_gate(
    metric: str,
    cand: tuple[int, int],
    base: tuple[int, int],
    limit: float,
    gates: Gates,
    alpha: float,
    *,
    shown: tuple[float | None, float | None] | None = None,
    flip: bool = False,
    label: str,
) -> GateResult:
    """rate(candidate) - rate(baseline) <= limit, as a sequential test.

    ``flip``: the metric shown is 1 - the tested rate (citation validity is
    shown, its failures are tested), so the interval is shown negated.
    """
    (c_hits, c_n), (b_hits, b_n) = cand, base
    samples = min(c_n, b_n)
    lo, hi = difference_cs(c_hits, c_n, b_hits, b_n, alpha)
    verdict = _verdict_of(samples, gates, breached=lo > limit, passed=hi <= limit)
    b_value, c_value = shown if shown is not None else (_rate(b_hits, b_n), _rate(c_hits, c_n))
    if b_n == 0 or c_n == 0:
        verdict = "inconclusive"
    shown_lo, shown_hi = (-hi, -lo) if flip else (lo, hi)
    return GateResult(
        metric=metric,
        verdict=verdict,
        baseline=b_value,
        candidate=c_value,
        limit=label,
        samples=samples,
        lower=round(shown_lo, 4),
        upper=round(shown_hi, 4),
        alpha=round(alpha, 6),
    )


def _slow_threshold(base: _Side, gates: Gates) -> float | None:
    """ratio x the p95 of the baseline's first min_samples runs, fixed from then on.

    Fixed once known, so later runs are judged against one threshold and the
    sequential test keeps its error rate.
    """
    if len(base.latencies) < gates.min_samples:
        return None
    p95 = percentile(base.latencies[: gates.min_samples], 95)
    return None if p95 is None else round(p95 * gates.max_p95_latency_ratio, 3)


def _feedback_side(side: _Side, alpha: float) -> FeedbackSide:
    lo, hi = proportion_cs(side.not_helpful, side.rated, alpha)
    return FeedbackSide(
        rated=side.rated,
        not_helpful=side.not_helpful,
        not_helpful_share=_rate(side.not_helpful, side.rated),
        lower=round(lo, 4) if side.rated else None,
        upper=round(hi, 4) if side.rated else None,
    )


def feedback_comparison(
    baseline: Sequence[RunRecord],
    candidate: Sequence[RunRecord],
    ratings: Mapping[str, str],
    gates: Gates,
) -> FeedbackComparison:
    base, cand = _Side(baseline, ratings), _Side(candidate, ratings)
    enough = min(base.rated, cand.rated) >= gates.min_samples
    return FeedbackComparison(
        baseline=_feedback_side(base, gates.alpha),
        candidate=_feedback_side(cand, gates.alpha),
        status="measured" if enough else "inconclusive",
        gated=gates.max_not_helpful_increase is not None,
    )


def _feedback_gate(base: _Side, cand: _Side, gates: Gates, alpha: float) -> GateResult:
    limit = gates.max_not_helpful_increase
    assert limit is not None
    return _increase_gate(
        "not_helpful_rate", (cand.not_helpful, cand.rated), (base.not_helpful, base.rated),
        limit, gates, alpha, label=f"candidate <= baseline + {limit}",
    )  # fmt: skip


def _rate_gates(base: _Side, cand: _Side, gates: Gates, alpha: float) -> list[GateResult]:
    results = [
        _increase_gate(
            "error_rate", (cand.errors, cand.runs), (base.errors, base.runs),
            gates.max_error_rate_increase, gates, alpha,
            label=f"candidate <= baseline + {gates.max_error_rate_increase}",
        ),
        _increase_gate(
            "refusal_rate", (cand.refused, cand.generated), (base.refused, base.generated),
            gates.max_refusal_rate_increase, gates, alpha,
            label=f"candidate <= baseline + {gates.max_refusal_rate_increase}",
        ),
        _increase_gate(
            "citation_validity", (cand.invalid, cand.answered), (base.invalid, base.answered),
            gates.max_citation_validity_drop, gates, alpha,
            shown=(
                _rate(base.answered - base.invalid, base.answered),
                _rate(cand.answered - cand.invalid, cand.answered),
            ),
            flip=True,
            label=f"candidate >= baseline - {gates.max_citation_validity_drop}",
        ),
    ]  # fmt: skip
    slow = _slow_threshold(base, gates)
    if slow is None:
        results.append(
            GateResult(
                metric="latency_exceedance", verdict="inconclusive", baseline=None,
                candidate=None, samples=min(len(base.latencies), len(cand.latencies)),
                limit=f"share slower than {gates.max_p95_latency_ratio} x baseline p95 "
                f"<= baseline + {gates.max_latency_exceedance_increase}",
                alpha=round(alpha, 6),
            )
        )  # fmt: skip
    else:
        results.append(
            _increase_gate(
                "latency_exceedance",
                (sum(x > slow for x in cand.latencies), len(cand.latencies)),
                (sum(x > slow for x in base.latencies), len(base.latencies)),
                gates.max_latency_exceedance_increase, gates, alpha,
                label=f"share slower than {slow} ms "
                f"<= baseline + {gates.max_latency_exceedance_increase}",
            )
        )  # fmt: skip
    return results


def _shadow_gates(
    pairs: Sequence[tuple[RunRecord, RunRecord]],
    gates: Gates,
    alpha: float,
    *,
    retrieval_only: bool,
) -> list[GateResult]:
    overlaps = _overlaps(pairs)
    test = mean_test(overlaps, gates.min_top_k_overlap, alpha) if overlaps else "undecided"
    lo, hi = mean_cs(overlaps, alpha)
    results = [
        GateResult(
            metric="top_k_overlap",
            verdict=_verdict_of(len(pairs), gates, test == "below", test == "above"),
            baseline=1.0,
            candidate=round(sum(overlaps) / len(overlaps), 4) if overlaps else None,
            limit=f"mean overlap >= {gates.min_top_k_overlap}",
            samples=len(pairs),
            lower=round(lo, 4),
            upper=round(hi, 4),
            alpha=round(alpha, 6),
        )
    ]
    if not retrieval_only:
        agree = sum(compare(b, c, gates.min_answer_overlap).agrees for b, c in pairs)
        lo, hi = proportion_cs(agree, len(pairs), alpha)
        results.append(
            GateResult(
                metric="answer_agreement",
                verdict=_verdict_of(
                    len(pairs), gates, hi < gates.min_answer_agreement,
                    lo >= gates.min_answer_agreement,
                ),
                baseline=1.0,
                candidate=_rate(agree, len(pairs)),
                limit=f"share of agreeing answers >= {gates.min_answer_agreement}",
                samples=len(pairs),
                lower=round(lo, 4),
                upper=round(hi, 4),
                alpha=round(alpha, 6),
            )
        )  # fmt: skip
    return results


def judge(
    baseline: Sequence[RunRecord],
    candidate: Sequence[RunRecord],
    gates: Gates,
    *,
    shadow: bool,
    retrieval_only: bool = False,
    ratings: Mapping[str, str] | None = None,
) -> list[GateResult]:
    """Every gate, each at its share of ``gates.alpha`` (oldest records first)."""
    # Retrieval-only shadows generated no answer: only failures and sources compare.
    rate_gates = 1 if retrieval_only else 4
    # Feedback is on served runs: a canary's candidate only (a shadow is never seen).
    feedback_gate = not shadow and gates.max_not_helpful_increase is not None
    count = rate_gates + (0 if not shadow else 1 if retrieval_only else 2) + feedback_gate
    alpha = gates.alpha / count
    base, cand = _Side(baseline, ratings), _Side(candidate, ratings)
    results = _rate_gates(base, cand, gates, alpha)[:rate_gates]
    if feedback_gate:
        results.append(_feedback_gate(base, cand, gates, alpha))
    if shadow:
        pairs = _pairs(baseline, candidate)
        results += _shadow_gates(pairs, gates, alpha, retrieval_only=retrieval_only)
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
    ratings: Mapping[str, str] | None = None,
    since_ms: int = 0,
    step: int | None = None,
) -> Report:
    """Baseline runs against candidate runs (served ones in a canary, shadows in a shadow).

    Records oldest first: the sequential tests read them in the order they finished.
    """
    is_shadow = mode == "shadow"
    shadow = (
        shadow_pairs(
            baseline, candidate, dropped, retrieval_only=retrieval_only,
            min_answer_overlap=gates.min_answer_overlap,
        )
        if is_shadow
        else None
    )  # fmt: skip
    results = judge(
        baseline, candidate, gates, shadow=is_shadow, retrieval_only=retrieval_only,
        ratings=ratings,
    )  # fmt: skip
    return Report(
        experiment=experiment,
        mode=mode,
        retrieval_only=retrieval_only,
        verdict=overall(results),
        alpha=gates.alpha,
        baseline=metrics("baseline", baseline),
        candidate=metrics(candidate_name, candidate),
        shadow=shadow,
        feedback=None
        if is_shadow
        else feedback_comparison(baseline, candidate, ratings or {}, gates),
        gates=results,
        breaches=[g.metric for g in results if g.verdict == "breach"],
        since_ms=since_ms,
        step=step,
    )
