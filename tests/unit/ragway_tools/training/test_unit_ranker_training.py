"""Fitting the unit ranker: it learns which units carry the fact, chosen by left-out sets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragway_tools.training.unit_ranker import (
    Group,
    first_correct,
    fit,
    leave_one_set_out,
    train,
)
from services.generator.unit_ranker import UNIT_FEATURES

N = len(UNIT_FEATURES)
SUPPORT = UNIT_FEATURES.index("support")
OWN = UNIT_FEATURES.index("own_coverage")


def _groups(qa_set: str, n: int, seed: int) -> list[Group]:
    """Parts where support is noisy and the answer's own words tell the answer apart:
    the positive has the most own coverage, not always the most support."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        rows = rng.uniform(0.0, 1.0, size=(8, N))
        answer = int(rng.integers(8))
        rows[:, OWN] = rng.uniform(0.0, 0.5, size=8)
        rows[answer, OWN] = 0.9
        rows[answer, SUPPORT] = max(0.0, rows[:, SUPPORT].max() - rng.uniform(0.0, 0.2))
        positive = np.zeros(8, dtype=bool)
        positive[answer] = True
        out.append(Group(qa_set, f"{qa_set}-{i}", rows, positive))
    return out


def test_fit_learns_the_feature_that_marks_the_answer() -> None:
    train_groups = _groups("a", 60, seed=1)
    held = _groups("b", 40, seed=2)
    ranker = fit(train_groups, l2=1.0)
    assert ranker.weights[OWN] > 0
    learned, parts = first_correct(ranker, held)
    by_support, _ = first_correct(None, held)
    assert parts == 40
    assert learned > by_support
    assert learned >= 36


def _fit_part_by_part(groups: list[Group], l2: float, iterations: int, rate: float) -> np.ndarray:
    """The listwise softmax fit as first written: one part at a time."""
    useful = [g for g in groups if g.positive.any() and not g.positive.all()]
    stacked = np.vstack([g.rows for g in useful])
    mean, scale = stacked.mean(axis=0), stacked.std(axis=0)
    scale[scale < 1e-9] = 1.0
    w = np.zeros(stacked.shape[1])
    for _ in range(iterations):
        gradient = l2 * w
        for g in useful:
            rows = (g.rows - mean) / scale
            z = rows @ w
            p = np.exp(z - z.max())
            gradient += rows.T @ (p / p.sum() - g.positive / g.positive.sum())
        w -= rate * gradient / len(useful)
    return w


def test_the_fit_over_all_parts_at_once_is_the_fit_part_by_part() -> None:
    # Parts of different sizes, some with two positives and one that teaches nothing.
    rng = np.random.default_rng(7)
    found = []
    for i, size in enumerate((3, 8, 5, 1, 12, 4)):
        positive = np.zeros(size, dtype=bool)
        positive[rng.choice(size, size=min(2, size), replace=False)] = True
        found.append(Group("a", f"p{i}", rng.normal(size=(size, N)), positive))
    ranker = fit(found, l2=3.0, iterations=40, rate=0.5)
    expected = _fit_part_by_part(found, l2=3.0, iterations=40, rate=0.5)
    assert np.allclose(ranker.weights, expected, atol=1e-9)


def test_parts_that_teach_no_order_are_left_out() -> None:
    rows = np.ones((3, N))
    uniform = [
        Group("a", "x", rows, np.ones(3, dtype=bool)),
        Group("a", "y", rows, np.zeros(3, dtype=bool)),
    ]
    with pytest.raises(ValueError, match="both kinds"):
        fit(uniform, l2=1.0)


def test_the_ridge_is_chosen_on_sets_left_out(tmp_path: Path) -> None:
    found = _groups("a", 30, seed=3) + _groups("b", 30, seed=4) + _groups("c", 30, seed=5)
    with pytest.raises(ValueError, match="two QA sets"):
        leave_one_set_out(_groups("a", 10, seed=6), 1.0)
    measured = leave_one_set_out(found, 1.0)
    assert measured.parts == 90
    assert measured.first_correct > measured.support_first_correct
    qa = tmp_path / "qa-tuning.yaml"
    qa.write_text("items: []\n")
    model, best = train(found, qa_paths=[qa])
    assert model.version.startswith("unit-ranker-")
    assert model.trained_on is not None
    assert model.trained_on["l2"] == best.l2
    assert model.trained_on["leave_one_set_out_first_correct"] == best.first_correct
    assert str(qa) in model.trained_on["qa_sha256"]


def test_the_command_refuses_a_held_out_part() -> None:
    from typer.testing import CliRunner

    from ragway_tools.cli import app

    result = CliRunner().invoke(
        app, ["train", "unit-ranker", "--qa", "eval/helpcentre/qa-heldout.yaml"]
    )
    assert result.exit_code != 0
    assert "held-out part" in result.output
