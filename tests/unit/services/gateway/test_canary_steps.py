"""Stepped canaries (steps.py), feedback in the report and the canary metrics: pure parts."""

from __future__ import annotations

import pytest

from ragway.metrics import REGISTRY
from services.gateway.metrics import observe_canary
from services.gateway.paths.control import same_span
from services.gateway.paths.errors import InvalidSteps
from services.gateway.paths.models import CanaryMode, CanaryState, Gates
from services.gateway.paths.report import build_report
from services.gateway.paths.steps import current, decide, end_running_step, first_step
from services.gateway.paths.steps import validate_steps as steps_of
from services.gateway.runs.models import RunRecord
from tests.unit.services.gateway.test_paths import record

STEPPED = first_step(
    CanaryState(
        mode=CanaryMode.CANARY, experiment="exp_1", candidate="candidate", steps=[5, 25, 50]
    ),
    now_ms=1_000,
)


@pytest.mark.parametrize(
    ("steps", "percent", "message"),
    [
        ([], None, "at least one step"),
        ([5, 25, 25], None, "rise strictly"),
        ([25, 5], None, "rise strictly"),
        ([0, 50], None, "outside (0, 100]"),
        ([5, 101], None, "outside (0, 100]"),
        ([float("nan")], None, "outside (0, 100]"),
        (list(range(1, 13)), None, "at most 10"),
        ([5, 25], 10, "differs from the first step"),
    ],
)
def test_bad_steps_are_refused_with_what_is_wrong(
    steps: list[float], percent: float | None, message: str
) -> None:
    with pytest.raises(InvalidSteps, match=message.replace("(", r"\(").replace("]", r"\]")):
        steps_of(steps, percent)


def test_good_steps_are_kept_and_the_canary_starts_at_the_first() -> None:
    assert steps_of([5, 25, 50], None) == [5, 25, 50]
    assert steps_of([5, 25, 100], 5) == [5, 25, 100]
    assert STEPPED.percent == 5 and STEPPED.step == 0
    running = current(STEPPED)
    assert running is not None and (running.percent, running.started_at_ms) == (5, 1_000)


def test_an_inconclusive_step_stays_where_it_is() -> None:
    decision = decide(STEPPED, "inconclusive", 40, 3, now_ms=2_000)
    assert decision.action == "stay" and decision.state == STEPPED


def test_a_passed_step_moves_to_the_next_percentage_and_records_the_step() -> None:
    decision = decide(STEPPED, "pass", 400, 21, now_ms=2_000)
    assert decision.action == "step"
    moved = decision.state
    assert (moved.step, moved.percent) == (1, 25)
    done, running = moved.step_history
    assert (done.verdict, done.ended_at_ms, done.baseline_runs, done.candidate_runs) == (
        "pass", 2_000, 400, 21,
    )  # fmt: skip
    assert (running.percent, running.started_at_ms, running.verdict) == (25, 2_000, "running")


def test_the_last_step_passed_promotes_and_a_breach_at_any_step_rolls_back() -> None:
    state = STEPPED
    for at in (2_000, 3_000):
        state = decide(state, "pass", 100, 100, now_ms=at).state
    assert state.percent == 50
    last = decide(state, "pass", 100, 100, now_ms=4_000)
    assert last.action == "promote"
    assert [s.verdict for s in last.state.step_history] == ["pass", "pass", "pass"]
    assert current(last.state) is None

    breach = decide(state, "breach", 30, 30, now_ms=4_000)
    assert breach.action == "rollback"
    assert [s.verdict for s in breach.state.step_history] == ["pass", "pass", "breach"]
    assert breach.state.step_history[-1].ended_at_ms == 4_000


def test_a_canary_without_steps_is_never_moved_by_a_decision() -> None:
    plain = CanaryState(mode=CanaryMode.CANARY, experiment="e", percent=10)
    assert decide(plain, "pass", 500, 500, now_ms=1).action == "stay"
    assert end_running_step(plain, 1) == plain
    stopped = end_running_step(STEPPED, 5_000)
    assert stopped.step_history[-1].verdict == "stopped"


GATES = Gates(min_samples=10)


def test_feedback_is_reported_per_path_and_inconclusive_below_the_minimum_sample() -> None:
    base = [record("baseline", n) for n in range(40)]
    cand = [record("candidate", n) for n in range(40)]
    few = {"run_baseline_0": "down", "run_candidate_0": "up"}
    report = build_report("e", "canary", base, cand, GATES, candidate_name="c", ratings=few)
    assert report.feedback is not None
    assert report.feedback.status == "inconclusive" and not report.feedback.gated
    assert (report.feedback.baseline.rated, report.feedback.baseline.not_helpful) == (1, 1)
    # Not gated: feedback alone never holds a canary back, nor passes it.
    assert "not_helpful_rate" not in [g.metric for g in report.gates]

    none = build_report("e", "canary", base, cand, GATES, candidate_name="c")
    assert none.feedback is not None and none.feedback.status == "inconclusive"
    assert none.feedback.candidate.not_helpful_share is None  # missing: never "good"

    many = {f"run_baseline_{n}": "down" if n % 10 == 0 else "up" for n in range(40)}
    many |= {f"run_candidate_{n}": "down" if n % 10 == 0 else "up" for n in range(40)}
    measured = build_report("e", "canary", base, cand, GATES, candidate_name="c", ratings=many)
    assert measured.feedback is not None and measured.feedback.status == "measured"
    side = measured.feedback.candidate
    assert side.not_helpful_share == 0.1 and side.lower is not None and side.upper is not None
    assert side.lower < 0.1 < side.upper


def test_a_gated_feedback_share_breaches_when_users_find_the_candidate_worse() -> None:
    gates = Gates(min_samples=10, max_not_helpful_increase=0.1)
    base = [record("baseline", n) for n in range(80)]
    cand = [record("candidate", n) for n in range(80)]
    ratings = {f"run_baseline_{n}": "up" for n in range(80)}
    ratings |= {f"run_candidate_{n}": "down" for n in range(80)}
    report = build_report("e", "canary", base, cand, gates, candidate_name="c", ratings=ratings)
    assert "not_helpful_rate" in report.breaches and report.verdict == "breach"
    assert report.gates[-1].alpha == gates.alpha / 5  # the fifth gate shares the alpha

    unrated = build_report("e", "canary", base, cand, gates, candidate_name="c")
    (fb,) = [g for g in unrated.gates if g.metric == "not_helpful_rate"]
    assert fb.verdict == "inconclusive" and unrated.verdict != "pass"


def test_the_canary_gauges_follow_the_state() -> None:
    observe_canary("canary", 25, False)
    assert REGISTRY.get_sample_value("ragway_canary_percent") == 25
    assert REGISTRY.get_sample_value("ragway_canary_state", {"state": "canary"}) == 1
    observe_canary("canary", 25, True)
    assert REGISTRY.get_sample_value("ragway_canary_percent") == 0
    assert REGISTRY.get_sample_value("ragway_canary_state", {"state": "paused"}) == 1
    assert REGISTRY.get_sample_value("ragway_canary_state", {"state": "canary"}) == 0
    observe_canary("off", 25, False)
    assert REGISTRY.get_sample_value("ragway_canary_state", {"state": "off"}) == 1


def test_both_sides_are_read_over_the_same_span_once_one_fills_its_window() -> None:
    def at(path: str, times: range) -> list[RunRecord]:
        return [record(path, t).model_copy(update={"updated_at_ms": t}) for t in times]

    base, cand = at("baseline", range(0, 100)), at("candidate", range(0, 1000, 10))
    # Neither side full: everything read is kept.
    assert same_span(base, cand[:5], 1000) == (base, cand[:5])
    # The baseline filled its window by t=99: the candidate's later runs wait.
    kept_base, kept_cand = same_span(base, cand, 100)
    assert kept_base == base and [r.updated_at_ms for r in kept_cand] == list(range(0, 100, 10))
