"""Anytime-valid statistics: confidence sequences and sequential tests.

A canary is watched continuously: its report is re-judged after every finished
run. A fixed-sample test re-run that often raises a false alarm far more often
than its nominal level; the bounds here hold *simultaneously over all sample
sizes* (Ville's inequality on a nonnegative supermartingale), so looking after
every observation and stopping at the first decisive one keeps the error rate
at ``alpha``.

Two tools, both exact for independent observations with a common mean:

- ``proportion_cs``: a confidence sequence for a Bernoulli rate, from the
  beta-binomial mixture of likelihood ratios (Robbins 1970; Howard et al. 2021,
  "Time-uniform, nonparametric, nonasymptotic confidence sequences"). Tight at
  the extremes (0 errors, every run failing), where the canary lives.
- ``mean_test``: a one-sample test of a mean in [0, 1] against a threshold, by
  testing by betting (Waudby-Smith & Ramdas 2023) with a predictable bet
  (aGRAPA), for averages that are not 0/1 (top-k overlap).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Literal

# The mixing prior of the beta-binomial mixture: Jeffreys' Beta(1/2, 1/2), which
# favours the extremes a little and so decides fastest for 0 % and 100 % rates.
_PRIOR_A = 0.5
_PRIOR_B = 0.5
_BISECT_STEPS = 40  # to 1e-12 of a rate
# The largest share of its capital a bet may risk: half, so that one bad
# observation can never wipe the capital out (the usual safe choice).
_MAX_BET = 0.5


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _log_mixture(successes: int, n: int, p: float) -> float:
    """log of the mixture martingale at rate ``p``: how much the data discredit ``p``."""
    failures = n - successes
    log_marginal = _log_beta(_PRIOR_A + successes, _PRIOR_B + failures) - _log_beta(
        _PRIOR_A, _PRIOR_B
    )
    log_likelihood = 0.0
    if successes:
        log_likelihood += successes * math.log(p) if p > 0 else -math.inf
    if failures:
        log_likelihood += failures * math.log1p(-p) if p < 1 else -math.inf
    return log_marginal - log_likelihood


# Cached: a report re-judged after every run asks for the same counts again and again.
@functools.lru_cache(maxsize=65_536)
def proportion_cs(successes: int, n: int, alpha: float) -> tuple[float, float]:
    """A (1 - alpha) confidence sequence for a Bernoulli rate after ``successes`` of ``n``.

    With probability at least 1 - alpha the true rate lies inside the interval at
    every ``n`` at once. The interval is the set of rates whose mixture
    martingale stays under 1/alpha; that set is an interval around the observed
    rate (the log-likelihood is concave in the rate), found by bisection.
    """
    if not 0 <= successes <= n:
        raise ValueError(f"successes {successes} outside 0..{n}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha {alpha} outside (0, 1)")
    if n == 0:
        return 0.0, 1.0
    threshold = math.log(1 / alpha)
    rate = successes / n

    def inside(p: float) -> bool:
        return _log_mixture(successes, n, p) < threshold

    def edge(outer: float, inner: float) -> float:
        # ``inner`` is inside, ``outer`` is the end of [0, 1] on this side.
        if inside(outer):
            return outer
        for _ in range(_BISECT_STEPS):
            mid = (outer + inner) / 2
            if inside(mid):
                inner = mid
            else:
                outer = mid
        return inner

    return edge(0.0, rate), edge(1.0, rate)


def difference_cs(
    successes_a: int, n_a: int, successes_b: int, n_b: int, alpha: float
) -> tuple[float, float]:
    """A (1 - alpha) confidence sequence for rate(a) - rate(b), two independent streams.

    Each side gets alpha / 2 (a union bound), so the two sides may arrive at any
    pace and in any order.
    """
    lo_a, hi_a = proportion_cs(successes_a, n_a, alpha / 2)
    lo_b, hi_b = proportion_cs(successes_b, n_b, alpha / 2)
    return lo_a - hi_b, hi_a - lo_b


MeanVerdict = Literal["above", "below", "undecided"]


def _capital(values: Sequence[float], threshold: float, sign: float) -> float:
    """log capital of betting that the mean is on the ``sign`` side of ``threshold``.

    ``sign`` = -1 bets the mean is below the threshold (so tests "mean >= threshold"),
    +1 bets it is above. Each bet is chosen from the observations before it only
    (predictable), so the capital is a nonnegative supermartingale under the null.
    """
    room = threshold if sign > 0 else 1 - threshold  # the most one observation can lose
    if room <= 0:
        return 0.0  # the null holds for every mean in [0, 1]: never rejected
    log_capital = 0.0
    total, squares = 0.5, 0.25  # one prior pseudo-observation at the middle
    count = 1
    for x in values:
        mean = total / count
        variance = max(squares / count - mean * mean, 1e-6)
        edge = sign * (mean - threshold)
        bet = min(max(edge / (variance + edge * edge), 0.0), _MAX_BET / room)
        log_capital += math.log1p(bet * sign * (x - threshold))
        total += x
        squares += x * x
        count += 1
    return log_capital


def mean_test(values: Sequence[float], threshold: float, alpha: float) -> MeanVerdict:
    """Is the mean of ``values`` (each in [0, 1]) above or below ``threshold``?

    ``below`` is wrong with probability at most alpha / 2 when the true mean is
    at least the threshold, ``above`` likewise when it is at most the threshold,
    whenever the question is asked; else ``undecided``.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha {alpha} outside (0, 1)")
    if any(not 0 <= x <= 1 for x in values):
        raise ValueError("values must lie in [0, 1]")
    bar = math.log(2 / alpha)
    if _capital(values, threshold, -1.0) >= bar:
        return "below"
    if _capital(values, threshold, +1.0) >= bar:
        return "above"
    return "undecided"


def mean_cs(values: Sequence[float], alpha: float, *, steps: int = 40) -> tuple[float, float]:
    """The thresholds ``mean_test`` cannot yet place the mean on one side of (a grid).

    A (1 - alpha) confidence sequence for the mean, to show beside the verdict;
    resolution 1/``steps``.
    """
    if not values:
        return 0.0, 1.0
    # Interior points only: at 0 and 1 one side of the test has nothing to bet on.
    undecided = [
        t / steps for t in range(1, steps) if mean_test(values, t / steps, alpha) == "undecided"
    ]
    if not undecided:
        mean = sum(values) / len(values)
        return mean, mean
    lo = 0.0 if undecided[0] == 1 / steps else undecided[0]
    hi = 1.0 if undecided[-1] == (steps - 1) / steps else undecided[-1]
    return lo, hi
