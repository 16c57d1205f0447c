"""Routing and the canary report: pure functions of their inputs."""

from __future__ import annotations

from typing import Any

import pytest

from services.gateway.paths.models import CanaryMode, CanaryState, Gates
from services.gateway.paths.report import GateResult, Report, build_report, percentile
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
    answer: str = "Resume with Last-Event-ID within 24 hours [1].",
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
        answer=None if failed or refused else answer,
    )  # fmt: skip


GATES = Gates(min_samples=10)


def canary(base: list[RunRecord], cand: list[RunRecord], gates: Gates = GATES) -> Report:
    return build_report("e", "canary", base, cand, gates, candidate_name="candidate")


def shadow(base: list[RunRecord], cand: list[RunRecord], gates: Gates = GATES) -> Report:
    return build_report("e", "shadow", base, cand, gates, candidate_name="candidate")


def gate(report: Report, metric: str) -> GateResult:
    (found,) = [g for g in report.gates if g.metric == metric]
    return found


def test_when_the_candidate_errors_more_than_allowed_then_the_report_is_a_breach() -> None:
    base = [record("baseline", n) for n in range(60)]
    cand = [record("candidate", n, failed=n % 2 == 0) for n in range(60)]
    report = canary(base, cand)
    assert report.verdict == "breach"
    assert report.breaches == ["error_rate"]
    assert report.candidate.error_rate == 0.5 and report.baseline.error_rate == 0.0
    errors = gate(report, "error_rate")
    # The whole interval of candidate - baseline lies above the limit: that is the breach.
    assert errors.lower is not None and errors.lower > GATES.max_error_rate_increase
    assert errors.alpha == GATES.alpha / 4  # four gates share the verdict's alpha


def test_when_the_candidate_refuses_more_then_the_refusal_gate_breaches() -> None:
    base = [record("baseline", n) for n in range(60)]
    cand = [record("candidate", n, refused=n % 2 == 0) for n in range(60)]
    report = canary(base, cand)
    assert "refusal_rate" in report.breaches
    assert report.candidate.refusal_rate == 0.5


def test_when_the_candidate_is_three_times_slower_then_the_latency_gate_breaches() -> None:
    base = [record("baseline", n, ms=100 + n % 20) for n in range(60)]
    cand = [record("candidate", n, ms=3 * (100 + n % 20)) for n in range(60)]
    report = canary(base, cand)
    assert report.breaches == ["latency_exceedance"]
    slow = gate(report, "latency_exceedance")
    assert (slow.baseline, slow.candidate) == (0.0, 1.0)
    assert "slower than 218.0 ms" in slow.limit  # 2 x p95 of the first 10 baseline runs


def test_when_the_candidate_is_as_good_then_every_gate_passes_once_the_evidence_suffices() -> None:
    base = [record("baseline", n, ms=100 + n % 20) for n in range(300)]
    cand = [record("candidate", n, ms=101 + n % 20) for n in range(300)]
    early = canary(base[:20], cand[:20])
    # 20 clean runs a side cannot rule out a 5-point rise in errors: not yet a pass.
    assert early.verdict == "inconclusive" and early.breaches == []
    report = canary(base, cand)
    assert report.verdict == "pass"
    assert {g.verdict for g in report.gates} == {"pass"}
    assert report.candidate.latency_p50_ms == 110.0 and report.candidate.latency_p95_ms == 119.0
    for g in report.gates:
        assert g.lower is not None and g.upper is not None and g.lower <= g.upper


def test_when_the_sample_is_too_small_then_the_verdict_is_inconclusive_never_a_pass() -> None:
    base = [record("baseline", n) for n in range(5)]
    cand = [record("candidate", n, failed=True) for n in range(5)]
    report = canary(base, cand)
    assert report.verdict == "inconclusive"
    assert report.breaches == []
    empty = canary([], [])
    assert empty.verdict == "inconclusive" and empty.candidate.error_rate is None


def shadows(n: int, **kwargs: Any) -> list[RunRecord]:
    return [record("candidate", i, shadow_of=f"run_baseline_{i}", **kwargs) for i in range(n)]


def test_shadow_pairs_compare_the_sources_of_the_same_question() -> None:
    base = [record("baseline", n, sources=("a", "b")) for n in range(80)]
    cand = shadows(80, sources=("a", "c"))
    report = build_report(
        "e", "shadow", base, cand, GATES.model_copy(update={"min_top_k_overlap": 0.6}),
        candidate_name="candidate", dropped=2,
    )  # fmt: skip
    assert report.shadow is not None
    assert (report.shadow.pairs, report.shadow.top_k_overlap, report.shadow.dropped) == (80, 0.5, 2)
    assert report.shadow.refusal_agreement == 1.0 and report.shadow.cited_agreement == 1.0
    assert report.shadow.answer_agreement == 1.0 and report.shadow.flagged == []
    assert report.breaches == ["top_k_overlap"]
    overlap = gate(report, "top_k_overlap")
    assert overlap.upper is not None and overlap.upper < 0.6


@pytest.mark.parametrize(
    ("changed", "reason"),
    [
        ({"answer": "Resume with Last-Event-ID within 48 hours [1]."}, "numbers_changed"),
        ({"answer": "Do not resume with Last-Event-ID within 24 hours [2]."}, "negation_changed"),
        ({"answer": "Restart the gateway and clear the Redis cache (24) [1]."}, "answer_changed"),
        ({"sources": ("c2", "c1")}, "cited_documents_changed"),
        ({"refused": True}, "refusal_changed"),
    ],
)
def test_a_changed_answer_is_flagged_even_when_the_sources_are_the_same(
    changed: dict[str, Any], reason: str
) -> None:
    base = [record("baseline", n) for n in range(12)]
    report = shadow(base, shadows(12, **changed))
    assert report.shadow is not None and report.shadow.answer_agreement == 0.0
    assert [f.reason for f in report.shadow.flagged] == [reason] * 12
    assert report.shadow.flagged[0].served == "run_baseline_0"


def test_a_reworded_answer_with_the_same_facts_and_citations_agrees() -> None:
    base = [record("baseline", n) for n in range(12)]
    same = "Within 24 hours, resume with Last-Event-ID [2]."
    report = shadow(base, shadows(12, answer=same))
    assert report.shadow is not None and report.shadow.answer_agreement == 1.0


def test_a_wrong_answer_from_the_same_sources_fails_the_shadow_gate() -> None:
    base = [record("baseline", n) for n in range(60)]
    report = shadow(base, shadows(60, answer="Resume within 12 hours [1]."))
    assert report.shadow is not None and report.shadow.top_k_overlap == 1.0  # same sources
    assert gate(report, "top_k_overlap").verdict == "pass"
    assert report.breaches == ["answer_agreement"]
    assert report.verdict == "breach"


@pytest.mark.parametrize(("q", "expected"), [(50, 3.0), (95, 5.0), (1, 1.0)])
def test_percentiles_are_nearest_rank(q: float, expected: float) -> None:
    assert percentile([5.0, 1.0, 4.0, 2.0, 3.0], q) == expected


def test_a_retrieval_only_shadow_is_judged_on_failures_and_sources_alone() -> None:
    base = [record("baseline", n) for n in range(300)]
    cand = [
        c.model_copy(update={"answer": None, "refused": None, "citations": []})
        for c in shadows(300)
    ]
    report = build_report(
        "e", "shadow", base, cand, GATES, candidate_name="candidate", retrieval_only=True
    )
    assert [g.metric for g in report.gates] == ["error_rate", "top_k_overlap"]
    assert {g.alpha for g in report.gates} == {GATES.alpha / 2}
    assert report.verdict == "pass" and report.retrieval_only
    assert report.candidate.refusal_rate is None and report.candidate.citation_validity is None
    assert report.shadow is not None and report.shadow.cited_agreement is None


def test_when_paused_then_everyone_is_on_the_baseline_and_no_run_counts() -> None:
    inside, _ = users_on_each_side(CANARY)
    chosen = route(CANARY.model_copy(update={"paused": True}), 1, "demo", "k1", inside)
    assert (chosen.path, chosen.version, chosen.experiment) == ("baseline", 1, None)


def test_a_path_cannot_name_a_reranker_and_turn_reranking_off() -> None:
    from pydantic import ValidationError

    from services.gateway.paths.models import PathOptions

    assert PathOptions(reranker="reranker-lumen-20261203-1", rerank="on").reranker
    with pytest.raises(ValidationError, match="named with rerank off"):
        PathOptions(reranker="reranker-lumen-20261203-1", rerank="off")
    with pytest.raises(ValidationError, match="pattern"):
        PathOptions(reranker="../models/reranker")  # a version, never a filesystem path


ARTIFACT = "reranker-lumen-20261203-040040-60d2655d"
ADMIN = {"Authorization": "Bearer key-demo-admin"}


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"rerank_weight": 1.5}, "less than or equal to 1"),
        ({"rerank_weight": -0.1}, "greater than or equal to 0"),
        ({"rerank_weight": float("nan")}, "less than or equal to 1"),  # NaN fails every bound
        ({"rerank_weight": "0.3"}, "valid number"),  # strict: no strings read as numbers
        ({"rerank_weight": True}, "valid number"),  # nor booleans
        ({"rerank_skip_margin": 1.01}, "less than or equal to 1"),
        ({"rerank_skip_margin": -1.5}, "greater than or equal to -1"),
        ({"rerank_skip_margin": float("inf")}, "less than or equal to 1"),
        ({"rerank_skip_margin": "0.008"}, "valid number"),
        ({"rerank_skip_margin": False}, "valid number"),
        ({"rerank_weight": 0.3, "rerank": "off"}, "rerank_weight set with rerank off"),
        ({"rerank_skip_margin": 0.0, "rerank": "off"}, "rerank_skip_margin set with rerank off"),
    ],
)
def test_a_paths_blend_is_a_number_in_range_and_needs_the_rerank(
    fields: dict[str, Any], says: str
) -> None:
    from pydantic import ValidationError

    from services.gateway.paths.models import PathOptions

    with pytest.raises(ValidationError, match=says):
        PathOptions.model_validate(fields)


def test_a_paths_blend_takes_the_ends_of_its_ranges_and_integers() -> None:
    from services.gateway.paths.models import PathOptions

    ends = PathOptions.model_validate({"rerank_weight": 0, "rerank_skip_margin": -1})
    assert (ends.rerank_weight, ends.rerank_skip_margin) == (0.0, -1.0)
    top = PathOptions.model_validate(
        {"rerank_weight": 1.0, "rerank_skip_margin": 1, "rerank": "on"}
    )
    assert (top.rerank_weight, top.rerank_skip_margin) == (1.0, 1.0)
    assert (PathOptions().rerank_weight, PathOptions().rerank_skip_margin) == (None, None)


class MemoryPathStore:
    """PathStore's put and get, each version kept as the JSON Redis would hold."""

    def __init__(self) -> None:
        self.saved: dict[tuple[str, int], str] = {}

    async def put(self, config: Any) -> Any:
        version = 1 + sum(1 for name, _ in self.saved if name == config.name)
        stored = config.model_copy(update={"version": version})
        self.saved[(config.name, version)] = stored.model_dump_json()
        return stored

    async def get(self, name: str, version: int | None = None) -> Any:
        from services.gateway.paths.models import PathConfig

        version = version or sum(1 for n, _ in self.saved if n == name)
        raw = self.saved.get((name, version))
        return None if raw is None else PathConfig.model_validate_json(raw)


def test_a_paths_blend_is_stored_and_echoed_and_a_bad_one_is_a_422() -> None:
    from fastapi.testclient import TestClient

    from services.gateway.main import create_app
    from services.gateway.paths.control import PathControl
    from services.gateway.paths.models import RerankerOffer
    from services.gateway.settings import GatewaySettings
    from tests.conftest import FIXTURES

    async def describe(build: str) -> str:
        return build

    async def offered() -> list[RerankerOffer]:
        return [
            RerankerOffer(version=ARTIFACT, model_id=ARTIFACT, tenant="lumen", role="offered",
                          max_length=64, created="2026-12-03T04:00:40Z")
        ]  # fmt: skip

    store = MemoryPathStore()
    app = create_app(GatewaySettings(api_keys_file=FIXTURES / "api-keys.yaml"), with_executor=False)
    with TestClient(app) as http:
        app.state.paths = PathControl(
            store,  # type: ignore[arg-type]
            describe, record_ttl_s=60, list_rerankers=offered,
        )  # fmt: skip
        body = {"reranker": ARTIFACT, "rerank_weight": 0.3, "rerank_skip_margin": 0.008}
        put = http.put("/v1/admin/paths/candidate", json=body, headers=ADMIN)
        assert put.status_code == 200, put.text
        shown = http.get("/v1/admin/paths/candidate", headers=ADMIN)
        for echoed in (put.json(), shown.json()):
            assert (echoed["version"], echoed["reranker"]) == (1, ARTIFACT)
            assert (echoed["rerank_weight"], echoed["rerank_skip_margin"]) == (0.3, 0.008)
        for bad, says in (
            ({"rerank_weight": 2}, "rerank_weight: Input should be less than or equal to 1"),
            ({"rerank_skip_margin": "0.008"}, "rerank_skip_margin: Input should be a valid number"),
            ({"rerank_weight": 0.3, "rerank": "off"}, "rerank_weight set with rerank off"),
        ):
            refused = http.put("/v1/admin/paths/candidate", json=bad, headers=ADMIN)
            assert refused.status_code == 422
            assert refused.json()["error"]["code"] == "invalid_request"
            assert says in refused.json()["error"]["message"]
        assert list(store.saved) == [("candidate", 1)]  # nothing refused was stored
