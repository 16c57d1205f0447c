"""Train the answerability model (services/generator/answerability.py) on a QA set.

Each question goes the way a run goes: the retriever searches with the caller's
tenant and groups, the gateway's packing picks the passages, the extractive
generator scores their units. The evidence features of every question and
whether the question is answerable for its caller are the training rows.

The weights come from a class-balanced logistic regression. The decision
threshold comes from k-fold cross-validation on the same rows: the threshold
that refuses the most unanswerable questions while the false refusals stay
within the allowed share (5 % by default), each question scored by a model that
never saw it; the median of that threshold over ten differently seeded splits.
Only the tuning part of a QA set may be given here; the held-out part is for
``ragway eval answers`` alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ragway.embedding import OnnxMiniLMEmbedder
from ragway_tools.evaluation.qa import QASet
from ragway_tools.training.qa_passages import Progress, passages_from_stack
from services.generator.answerability import FEATURES, AnswerabilityModel, Evidence
from services.generator.backends.base import GenerationRequest, Passage
from services.generator.backends.extractive import ExtractiveGenerator


@dataclass(frozen=True, slots=True)
class Sample:
    item_id: str
    segment: str
    answerable: bool
    evidence: Evidence
    support_floor_refused: bool  # under the min_support floor: refused whatever the model says


@dataclass(frozen=True, slots=True)
class Chosen:
    threshold: float
    abstention: float  # share of unanswerable questions refused (cross-validated)
    false_refusals: float  # share of answerable questions refused (cross-validated)


def fit(
    rows: npt.NDArray[np.float64], labels: npt.NDArray[np.float64], *, l2: float = 1.0
) -> tuple[list[float], float]:
    """Logistic regression by Newton's method, the two classes weighted equally.

    A handful of features and a few hundred questions need no library, and the
    result is the same on every machine. The small ridge keeps the weights finite
    when the classes separate.
    """
    if rows.ndim != 2 or len(rows) != len(labels) or len(set(labels.tolist())) < 2:
        raise ValueError("fit needs rows of features and both labels")
    n, d = rows.shape
    x = np.hstack([rows, np.ones((n, 1))])
    positives = float(labels.sum())
    sample = np.where(labels == 1, n / (2 * positives), n / (2 * (n - positives)))
    beta = np.zeros(d + 1)
    ridge = np.eye(d + 1) * l2
    ridge[d, d] = 0.0  # the bias is not shrunk
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ beta, -60, 60)))
        gradient = x.T @ (sample * (p - labels)) + ridge @ beta
        hessian = (x * (sample * p * (1 - p))[:, None]).T @ x + ridge
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if float(np.abs(step).max()) < 1e-10:
            break
    return [float(b) for b in beta[:d]], float(beta[d])


def _probabilities(weights: list[float], bias: float, rows: npt.NDArray[np.float64]) -> Any:
    return 1.0 / (1.0 + np.exp(-np.clip(rows @ np.asarray(weights) + bias, -60, 60)))


def cross_validated(
    samples: Sequence[Sample], *, folds: int = 5, seed: int = 0
) -> npt.NDArray[np.float64]:
    """Each sample's probability from a model fitted without its fold (stratified)."""
    rows = np.asarray([s.evidence.vector(FEATURES) for s in samples], dtype=np.float64)
    labels = np.asarray([float(s.answerable) for s in samples])
    rng = np.random.default_rng(seed)
    fold = np.empty(len(samples), dtype=int)
    for label in (0.0, 1.0):
        members = np.flatnonzero(labels == label)
        rng.shuffle(members)
        fold[members] = np.arange(len(members)) % folds
    out = np.empty(len(samples))
    for k in range(folds):
        test = fold == k
        weights, bias = fit(rows[~test], labels[~test])
        out[test] = _probabilities(weights, bias, rows[test])
    return out


def choose_threshold(
    samples: Sequence[Sample], probabilities: npt.NDArray[np.float64], max_false_refusals: float
) -> Chosen:
    """The threshold refusing the most unanswerable questions within the false-refusal cap."""
    answerable = np.asarray([s.answerable for s in samples])
    floor = np.asarray([s.support_floor_refused for s in samples])
    if answerable.all() or not answerable.any():
        raise ValueError("choosing a threshold needs answerable and unanswerable questions")
    best: Chosen | None = None
    for t in np.round(np.arange(0.02, 0.99, 0.01), 2):
        refused = floor | (probabilities < t)
        false = float(refused[answerable].mean())
        abstained = float(refused[~answerable].mean())
        if false <= max_false_refusals and (best is None or abstained > best.abstention):
            best = Chosen(float(t), abstained, false)
    if best is None:
        raise ValueError(
            f"no threshold keeps false refusals within {max_false_refusals:.0%}: the support "
            "floor alone refuses more; lower RAGWAY_MIN_SUPPORT"
        )
    return best


def repeated_choice(
    samples: Sequence[Sample], max_false_refusals: float, *, repeats: int = 10
) -> Chosen:
    """The median of the thresholds chosen over ``repeats`` differently seeded k-fold
    splits, with the cross-validated rates averaged at it.

    One split's threshold moves by a question or two with the fold assignment; the
    median over several splits does not depend on one lucky or unlucky split.
    """
    answerable = np.asarray([s.answerable for s in samples])
    floor = np.asarray([s.support_floor_refused for s in samples])
    runs = [cross_validated(samples, seed=seed) for seed in range(repeats)]
    threshold = float(
        np.median([choose_threshold(samples, p, max_false_refusals).threshold for p in runs])
    )
    refused = [floor | (p < threshold) for p in runs]
    return Chosen(
        threshold,
        float(np.mean([r[~answerable].mean() for r in refused])),
        float(np.mean([r[answerable].mean() for r in refused])),
    )


def train(
    samples: Sequence[Sample],
    *,
    qa_paths: Sequence[Path],
    max_false_refusals: float,
    min_support: float,
) -> tuple[AnswerabilityModel, Chosen]:
    chosen = repeated_choice(samples, max_false_refusals)
    rows = np.asarray([s.evidence.vector(FEATURES) for s in samples], dtype=np.float64)
    labels = np.asarray([float(s.answerable) for s in samples])
    weights, bias = fit(rows, labels)
    digests = {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in qa_paths}
    version = hashlib.sha256("".join(sorted(digests.values())).encode()).hexdigest()[:8]
    model = AnswerabilityModel(
        weights=tuple(weights),
        bias=bias,
        threshold=chosen.threshold,
        features=FEATURES,
        version=f"answerability-{version}",
        trained_on={
            "qa_sha256": digests,
            "questions": len(samples),
            "unanswerable": sum(not s.answerable for s in samples),
            "min_support": min_support,
            "max_false_refusals": max_false_refusals,
            "cv_abstention": round(chosen.abstention, 4),
            "cv_false_refusals": round(chosen.false_refusals, 4),
            "trained_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
    )
    return model, chosen


def collect(
    qa: QASet, generator: ExtractiveGenerator, passages: Mapping[str, Sequence[Passage]]
) -> Iterator[Sample]:
    """One sample per item, from each item's packed passages (by item id)."""
    for item in qa.items:
        found = list(passages[item.id])
        scored = generator.score(item.question, found) if found else []
        floor = generator.refusal(GenerationRequest(item.question, found), scored) is not None
        yield Sample(
            item_id=item.id,
            segment=item.segment,
            answerable=item.answerable,
            evidence=generator.evidence(item.question, found, scored),
            support_floor_refused=floor,
        )


def samples_from_stack(qa: QASet, progress: Progress | None = None) -> list[Sample]:
    """Start a private stack on the QA set's knowledge base and collect its samples."""
    # The floor alone decides which passages would be refused anyway: no model here.
    generator = ExtractiveGenerator(OnnxMiniLMEmbedder())
    return list(collect(qa, generator, passages_from_stack(qa, progress)))
