"""Fitting the answerability model: exact logistic regression, a threshold within the cap."""

from __future__ import annotations

import numpy as np
import pytest

from ragway_tools.training.answerability import (
    Sample,
    choose_threshold,
    cross_validated,
    fit,
    repeated_choice,
)
from services.generator.answerability import Evidence


def _samples(n: int = 120, seed: int = 1) -> list[Sample]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        answerable = i % 5 != 0  # one in five unanswerable, as in the QA sets
        support = rng.normal(0.7 if answerable else 0.4, 0.12)
        margin = abs(rng.normal(0.25 if answerable else 0.05, 0.08))
        out.append(
            Sample(f"q{i}", "s", answerable,
                   Evidence(support, margin, rng.uniform(0, 0.3), unsaid=rng.uniform(0, 0.5)),
                   support_floor_refused=support < 0.3)
        )  # fmt: skip
    return out


def test_fit_recovers_the_direction_that_separates_the_classes() -> None:
    samples = _samples()
    rows = np.asarray([s.evidence.vector() for s in samples])
    labels = np.asarray([float(s.answerable) for s in samples])
    weights, bias = fit(rows, labels)
    assert weights[0] > 0 and weights[1] > 0  # support and margin argue for answering
    predicted = (rows @ np.asarray(weights) + bias) > 0
    assert (predicted == labels.astype(bool)).mean() > 0.85


def test_the_threshold_keeps_cross_validated_false_refusals_within_the_cap() -> None:
    samples = _samples()
    probabilities = cross_validated(samples)
    for cap in (0.02, 0.05, 0.1):
        chosen = choose_threshold(samples, probabilities, cap)
        assert chosen.false_refusals <= cap
    # A looser cap never abstains less.
    assert (
        choose_threshold(samples, probabilities, 0.1).abstention
        >= choose_threshold(samples, probabilities, 0.02).abstention
    )


def test_a_set_with_one_class_cannot_be_fitted() -> None:
    samples = [s for s in _samples() if s.answerable]
    with pytest.raises(ValueError, match="both labels"):
        cross_validated(samples)


def test_the_threshold_is_the_median_over_differently_seeded_splits() -> None:
    samples = _samples(seed=3)
    per_split = [
        choose_threshold(samples, cross_validated(samples, seed=seed), 0.05).threshold
        for seed in range(5)
    ]
    chosen = repeated_choice(samples, 0.05, repeats=5)
    assert chosen.threshold == float(np.median(per_split))
    assert min(per_split) <= chosen.threshold <= max(per_split)
