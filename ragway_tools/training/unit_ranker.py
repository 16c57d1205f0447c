"""Train the unit ranker (services/generator/unit_ranker.py) on the tuning QA sets.

Each question goes the way a run goes (``answerability.passages_per_item``: the
retriever with the caller's scope, the gateway's packing). For every answerable
question and every part of it, the extractive generator scores the retrieved
units; the units whose quoted text carries the part's expected fact (the eval's
own matching, ragway_tools/evaluation/answers.py) are that part's positives.

The model is linear over the standardised features, fitted with a listwise
softmax loss (each part: the probability mass on its positives) and a ridge.
Its regularisation is chosen by leave-one-set-out: trained on all QA sets but
one, measured on the one left out (how often the first unit carries the fact),
so the choice rewards what carries over to another knowledge base. Only the
tuning parts of QA sets may be given here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ragway.embedding import OnnxMiniLMEmbedder
from ragway_tools.evaluation.answers import fact_matches
from ragway_tools.evaluation.qa import QASet
from ragway_tools.training.qa_passages import Progress, passages_from_stack
from services.generator.backends.base import Passage
from services.generator.backends.extractive import ExtractiveGenerator
from services.generator.unit_ranker import UNIT_FEATURES, UnitRanker

L2_CHOICES = (0.3, 1.0, 3.0, 10.0, 30.0)


@dataclass(frozen=True, slots=True)
class Group:
    """One part of one answerable question: its units' features and which carry the fact."""

    qa_set: str
    item_id: str
    rows: npt.NDArray[np.float64]
    positive: npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Measured:
    l2: float
    first_correct: int  # parts whose first unit carries the fact, left-out sets summed
    support_first_correct: int  # the same, ordered by support alone
    parts: int  # parts with a positive anywhere among their units


def groups(
    qa: QASet,
    name: str,
    generator: ExtractiveGenerator,
    passages: Mapping[str, Sequence[Passage]],
) -> Iterator[Group]:
    """The parts of the set's answerable questions, from each item's packed passages."""
    for item in qa.items:
        if not item.answerable:
            continue
        found = list(passages[item.id])
        scored = generator.score(item.question, found) if found else []
        if not scored:
            continue
        n_parts = max(s.part for s in scored) + 1
        for k, facts in enumerate(item.parts or (item.facts,)):
            # A question split into fewer parts than its facts: the last part answers the rest.
            mine = [s for s in scored if s.part == min(k, n_parts - 1)]
            yield Group(
                qa_set=name,
                item_id=item.id,
                rows=np.asarray([s.features for s in mine], dtype=np.float64),
                positive=np.asarray([any(fact_matches(f, s.text) for f in facts) for s in mine]),
            )


def fit(
    train: Sequence[Group], *, l2: float, iterations: int = 300, rate: float = 0.5
) -> UnitRanker:
    """Listwise softmax regression by gradient descent on standardised features.

    Parts where every unit or no unit carries the fact teach nothing about the
    order and are left out. Deterministic: no sampling, no random start.
    """
    useful = [g for g in train if g.positive.any() and not g.positive.all()]
    if not useful:
        raise ValueError("training the unit ranker needs parts with both kinds of unit")
    stacked = np.vstack([g.rows for g in useful])
    mean = stacked.mean(axis=0)
    scale = stacked.std(axis=0)
    scale[scale < 1e-9] = 1.0  # a constant feature: left as it is
    rows = (stacked - mean) / scale
    # Every part's units in one matrix, each part a run of rows: the softmax of a part
    # is taken over its run (``reduceat`` at the runs' starts), so one step is a few
    # matrix operations however many parts there are. Twenty-five QA sets' parts
    # stepped one by one took minutes per fit, and leave-one-set-out fits 125 times.
    sizes = np.asarray([len(g.rows) for g in useful])
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    owner = np.repeat(np.arange(len(useful)), sizes)
    target = np.concatenate([g.positive / g.positive.sum() for g in useful])
    w = np.zeros(stacked.shape[1])
    for _ in range(iterations):
        z = rows @ w
        e = np.exp(z - np.maximum.reduceat(z, starts)[owner])
        p = e / np.add.reduceat(e, starts)[owner]
        w -= rate * (l2 * w + rows.T @ (p - target)) / len(useful)
    return UnitRanker(
        weights=tuple(float(x) for x in w),
        mean=tuple(float(x) for x in mean),
        scale=tuple(float(x) for x in scale),
    )


def first_correct(ranker: UnitRanker | None, held: Sequence[Group]) -> tuple[int, int]:
    """How many parts (with a positive) the first unit answers, and how many parts."""
    correct = parts = 0
    for g in held:
        if not g.positive.any():
            continue
        parts += 1
        if ranker is None:
            order = g.rows[:, UNIT_FEATURES.index("support")]
        else:
            # ``ranker.score`` of every row at once: the same linear score.
            mean, scale = np.asarray(ranker.mean), np.asarray(ranker.scale)
            order = ((g.rows - mean) / scale) @ np.asarray(ranker.weights)
        correct += bool(g.positive[int(np.argmax(order))])
    return correct, parts


def leave_one_set_out(found: Sequence[Group], l2: float) -> Measured:
    sets = sorted({g.qa_set for g in found})
    if len(sets) < 2:
        raise ValueError("choosing the regularisation needs at least two QA sets")
    ranked = support = parts = 0
    for held_name in sets:
        held = [g for g in found if g.qa_set == held_name]
        model = fit([g for g in found if g.qa_set != held_name], l2=l2)
        ranked += first_correct(model, held)[0]
        got, n = first_correct(None, held)
        support += got
        parts += n
    return Measured(l2, ranked, support, parts)


def train(found: Sequence[Group], *, qa_paths: Sequence[Path]) -> tuple[UnitRanker, Measured]:
    measured = [leave_one_set_out(found, l2) for l2 in L2_CHOICES]
    # The most first-unit answers; on a tie the stronger ridge (the simpler model).
    best = max(measured, key=lambda m: (m.first_correct, m.l2))
    model = fit(found, l2=best.l2)
    digests = {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in qa_paths}
    version = hashlib.sha256("".join(sorted(digests.values())).encode()).hexdigest()[:8]
    trained = UnitRanker(
        weights=model.weights,
        mean=model.mean,
        scale=model.scale,
        version=f"unit-ranker-{version}",
        trained_on={
            "qa_sha256": digests,
            "parts": best.parts,
            "l2": best.l2,
            "leave_one_set_out_first_correct": best.first_correct,
            "leave_one_set_out_support_first_correct": best.support_first_correct,
            "trained_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
    )
    return trained, best


def groups_from_stack(qa: QASet, name: str, progress: Progress | None = None) -> list[Group]:
    """Start a private stack on the QA set's knowledge base and collect its parts."""
    generator = ExtractiveGenerator(OnnxMiniLMEmbedder())
    return list(groups(qa, name, generator, passages_from_stack(qa, progress)))
