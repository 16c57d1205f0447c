"""The sequential tests on simulated streams: watched after every observation, they
keep their false-alarm rate under alpha, and still catch a real regression fast."""

from __future__ import annotations

import math
import random

import pytest

from ragway.sequential import difference_cs, mean_cs, mean_test, proportion_cs

STREAMS = 200
# The report's setting: alpha 0.05 over four rate gates.
GATE_ALPHA = 0.05 / 4


def wald_covers(hits: int, n: int, p: float) -> bool:
    """The fixed-sample 95 % interval that a naive dashboard would re-check every run."""
    rate = hits / n
    half = 1.96 * math.sqrt(max(rate * (1 - rate), 1e-12) / n)
    return rate - half <= p <= rate + half


def test_a_rate_stays_inside_its_confidence_sequence_at_every_step() -> None:
    rng = random.Random(7)
    p, alpha, steps = 0.2, 0.05, 400
    missed = naive_missed = 0
    for _ in range(STREAMS):
        hits, ever_out, naive_out = 0, False, False
        for n in range(1, steps + 1):
            hits += rng.random() < p
            lo, hi = proportion_cs(hits, n, alpha)
            ever_out = ever_out or not lo <= p <= hi
            naive_out = naive_out or (n >= 10 and not wald_covers(hits, n, p))
        missed += ever_out
        naive_missed += naive_out
    # Time-uniform: the truth left the sequence in at most alpha of the streams...
    assert missed / STREAMS <= alpha
    # ...where the fixed-sample interval, looked at as often, is wrong far more often.
    assert naive_missed / STREAMS > 3 * alpha


@pytest.mark.parametrize(("base_rate", "limit"), [(0.02, 0.05), (0.10, 0.10)])
def test_no_false_rollback_when_the_candidate_is_exactly_at_its_limit(
    base_rate: float, limit: float
) -> None:
    # The hardest null: the candidate is as much worse as the gate allows, and no more.
    rng = random.Random(11)
    false_alarms = 0
    for _ in range(STREAMS):
        hits_b = hits_c = 0
        for n in range(1, 501):  # the report's window: 500 runs a side
            hits_b += rng.random() < base_rate
            hits_c += rng.random() < base_rate + limit
            lo, _ = difference_cs(hits_c, n, hits_b, n, GATE_ALPHA)
            if lo > limit:
                false_alarms += 1
                break
    assert false_alarms / STREAMS <= GATE_ALPHA


def steps_to_breach(rng: random.Random, base_rate: float, cand_rate: float, limit: float) -> int:
    hits_b = hits_c = 0
    for n in range(1, 1001):
        hits_b += rng.random() < base_rate
        hits_c += rng.random() < cand_rate
        if difference_cs(hits_c, n, hits_b, n, GATE_ALPHA)[0] > limit:
            return n
    return 1000


def test_a_failing_candidate_is_caught_within_200_requests() -> None:
    # A candidate build missing its documents: half its runs fail, the baseline's 2 %.
    rng = random.Random(3)
    runs = sorted(steps_to_breach(rng, 0.02, 0.5, 0.05) for _ in range(STREAMS))
    # Requests of both sides together: a 50 % canary sends them half and half.
    assert 2 * runs[-1] <= 200
    assert 2 * runs[len(runs) // 2] <= 100


def test_a_smaller_regression_is_caught_too_only_later() -> None:
    # 5 % -> 30 % refusals against a 10-point limit: 15 points beyond it, not 45.
    rng = random.Random(5)
    runs = sorted(steps_to_breach(rng, 0.05, 0.30, 0.10) for _ in range(50))
    assert runs[len(runs) // 2] <= 400  # runs a side
    assert sum(r <= 500 for r in runs) >= 40  # mostly inside the report's 500-run window
    assert runs[-1] < 1000


def test_the_interval_of_no_data_is_everything_and_it_narrows() -> None:
    assert proportion_cs(0, 0, 0.05) == (0.0, 1.0)
    widths = [proportion_cs(n // 2, n, 0.05) for n in (10, 100, 1000)]
    assert [round(hi - lo, 2) for lo, hi in widths] == sorted(
        [round(hi - lo, 2) for lo, hi in widths], reverse=True
    )
    lo, hi = proportion_cs(0, 30, 0.05)
    assert lo == 0.0 and 0 < hi < 0.3
    with pytest.raises(ValueError, match="outside"):
        proportion_cs(5, 3, 0.05)


def test_the_mean_test_keeps_its_level_when_the_mean_sits_on_the_threshold() -> None:
    rng = random.Random(13)
    threshold, alpha, wrong = 0.5, 0.05, 0
    for _ in range(100):
        values: list[float] = []
        for _ in range(300):
            values.append(rng.random())  # uniform: mean exactly 0.5
            if len(values) % 5 == 0 and mean_test(values, threshold, alpha) != "undecided":
                wrong += 1
                break
    assert wrong / 100 <= alpha


def test_the_mean_test_finds_a_drop_in_overlap_fast() -> None:
    rng = random.Random(17)
    found = []
    for _ in range(50):
        values: list[float] = []
        while len(values) < 300:
            values.append(min(1.0, max(0.0, rng.gauss(0.3, 0.15))))
            if mean_test(values, 0.5, 0.05) == "below":
                break
        found.append(len(values))
    assert max(found) <= 60
    lo, hi = mean_cs([0.3] * 100, 0.05)
    assert lo <= 0.3 <= hi and hi < 0.5
