"""Routing and the canary report: pure functions of their inputs."""

from __future__ import annotations

import pytest

from services.gateway.paths.models import CanaryMode, CanaryState, Gates
from services.gateway.paths.report import build_report, percentile
from services.gateway.paths.routing import bucket, route
from services.gateway.runs.models import Citation, ErrorInfo, RunRecord, RunStatus, Source

CANARY = CanaryState(
    mode=CanaryMode.CANARY, experiment="exp_1", candidate="candidate", candidate_version=3,
    baseline_version=1, percent=50,
)  # fmt: skip


def users_on_each_side(state: CanaryState) -> tuple[str, str]:
    inside = outside = None
    for n in range(1000):
        b = bucket("demo", "k1", f"u{n}")
        if b < state.percent * 100 and inside is None:
            inside = f"u{n}"
        if b >= state.percent * 100 and outside is None:
            outside = f"u{n}"
    assert inside and outside
    return inside, outside


def test_when_a_canary_runs_then_a_user_stays_on_the_same_path_every_time() -> None:
    inside, outside = users_on_each_side(CANARY)
    for _ in range(3):
        assert route(CANARY, 1, "demo", "k1", inside).path == "candidate"
        assert route(CANARY, 1, "demo", "k1", outside).path == "baseline"
    chosen = route(CANARY, 1, "demo", "k1", inside)
    assert (chosen.version, chosen.experiment, chosen.shadow) == (3, "exp_1", False)


def test_when_the_percentage_widens_then_users_already_in_stay_in() -> None:
    wider = CANARY.model_copy(update={"percent": 80})
    for n in range(200):
        if route(CANARY, 1, "demo", "k1", f"u{n}").path == "candidate":
            assert route(wider, 1, "demo", "k1", f"u{n}").path == "candidate"


def test_when_no_experiment_runs_then_the_latest_baseline_serves_and_nothing_is_counted() -> None:
    chosen = route(CanaryState(), 4, "demo", "k1", "u1")
    assert (chosen.path, chosen.version, chosen.experiment, chosen.shadow) == (
        "baseline", 4, None, False,
    )  # fmt: skip


def test_when_shadowing_then_the_baseline_serves_and_the_run_is_marked_for_a_shadow() -> None:
    state = CANARY.model_copy(update={"mode": CanaryMode.SHADOW, "percent": 100})
    chosen = route(state, 1, "demo", "k1", "u1")
    assert (chosen.path, chosen.shadow) == ("baseline", True)
    assert not route(state.model_copy(update={"percent": 0}), 1, "demo", "k1", "u1").shadow


def test_a_bucket_depends_on_tenant_key_and_user() -> None:
    assert bucket("demo", "k1", None) == bucket("demo", "k1", None)
    assert len({bucket("demo", "k1", f"u{n}") for n in range(50)}) > 40
    assert bucket("demo", "k1", "u1") != bucket("acme", "k1", "u1")


def record(
    path: str, n: int, *, failed: bool = False, refused: bool = False, ms: float = 100.0,
    sources: tuple[str, ...] = ("c1", "c2"), shadow_of: str | None = None,
) -> RunRecord:  # fmt: skip
    srcs = [
        Source(number=i + 1, source_id=s, document_id=s, title="t", section="", url="",
               version="1", score=1.0)
        for i, s in enumerate(sources)
    ]  # fmt: skip
    cites = [] if refused or failed else [Citation.model_validate(srcs[0].model_dump())]
    return RunRecord(
        id=f"run_{path}_{n}", status=RunStatus.FAILED if failed else RunStatus.SUCCEEDED,
        tenant="demo", key_id="k1", question="q", top_k=6, mode="hybrid", created_at_ms=0,
        updated_at_ms=0, refused=None if failed else refused, sources=srcs, citations=cites,
        timings_ms={} if failed else {"total": ms}, path=path, path_version=1,
        error=ErrorInfo(code="x", message="y") if failed else None, shadow_of=shadow_of,
    )  # fmt: skip


GATES = Gates(min_samples=10)


def test_when_the_candidate_errors_more_than_allowed_then_the_report_is_a_breach() -> None:
    base = [record("baseline", n) for n in range(20)]
    cand = [record("candidate", n, failed=n < 5) for n in range(20)]
    report = build_report("e", "canary", base, cand, GATES, candidate_name="candidate")
    assert report.verdict == "breach"
    assert report.breaches == ["error_rate"]
    assert report.candidate.error_rate == 0.25 and report.baseline.error_rate == 0.0


def test_when_the_candidate_refuses_more_then_the_refusal_gate_breaches() -> None:
    base = [record("baseline", n) for n in range(20)]
    cand = [record("candidate", n, refused=n % 2 == 0) for n in range(20)]
    report = build_report("e", "canary", base, cand, GATES, candidate_name="candidate")
    assert "refusal_rate" in report.breaches
    assert report.candidate.refusal_rate == 0.5


def test_when_the_candidate_is_as_good_then_every_gate_passes() -> None:
    base = [record("baseline", n, ms=100 + n) for n in range(20)]
    cand = [record("candidate", n, ms=101 + n) for n in range(20)]
    report = build_report("e", "canary", base, cand, GATES, candidate_name="candidate")
    assert report.verdict == "pass"
    assert {g.verdict for g in report.gates} == {"pass"}
    assert report.candidate.latency_p50_ms == 110.0 and report.candidate.latency_p95_ms == 119.0


def test_when_the_sample_is_too_small_then_the_verdict_is_inconclusive_never_a_pass() -> None:
    base = [record("baseline", n) for n in range(5)]
    cand = [record("candidate", n, failed=True) for n in range(5)]
    report = build_report("e", "canary", base, cand, GATES, candidate_name="candidate")
    assert report.verdict == "inconclusive"
    assert report.breaches == []
    empty = build_report("e", "canary", [], [], GATES, candidate_name="candidate")
    assert empty.verdict == "inconclusive" and empty.candidate.error_rate is None


def test_shadow_pairs_compare_the_sources_of_the_same_question() -> None:
    base = [record("baseline", n, sources=("a", "b")) for n in range(12)]
    cand = [
        record("candidate", n, sources=("a", "c"), shadow_of=f"run_baseline_{n}") for n in range(12)
    ]
    report = build_report(
        "e", "shadow", base, cand, GATES.model_copy(update={"min_top_k_overlap": 0.6}),
        candidate_name="candidate", dropped=2,
    )  # fmt: skip
    assert report.shadow is not None
    assert (report.shadow.pairs, report.shadow.top_k_overlap, report.shadow.dropped) == (12, 0.5, 2)
    assert report.shadow.refusal_agreement == 1.0 and report.shadow.cited_agreement == 1.0
    assert report.breaches == ["top_k_overlap"]


@pytest.mark.parametrize(("q", "expected"), [(50, 3.0), (95, 5.0), (1, 1.0)])
def test_percentiles_are_nearest_rank(q: float, expected: float) -> None:
    assert percentile([5.0, 1.0, 4.0, 2.0, 3.0], q) == expected


def test_a_retrieval_only_shadow_is_judged_on_failures_and_sources_alone() -> None:
    base = [record("baseline", n) for n in range(12)]
    cand = [
        record("candidate", n, shadow_of=f"run_baseline_{n}").model_copy(
            update={"answer": None, "refused": None, "citations": []}
        )
        for n in range(12)
    ]
    report = build_report(
        "e", "shadow", base, cand, GATES, candidate_name="candidate", retrieval_only=True
    )
    assert [g.metric for g in report.gates] == ["error_rate", "top_k_overlap"]
    assert report.verdict == "pass" and report.retrieval_only
    assert report.candidate.refusal_rate is None and report.candidate.citation_validity is None
    assert report.shadow is not None and report.shadow.cited_agreement is None


def test_when_paused_then_everyone_is_on_the_baseline_and_no_run_counts() -> None:
    inside, _ = users_on_each_side(CANARY)
    chosen = route(CANARY.model_copy(update={"paused": True}), 1, "demo", "k1", inside)
    assert (chosen.path, chosen.version, chosen.experiment) == ("baseline", 1, None)
