"""Which unit answers a part of the question: a learned order over the units' features.

The extractive backend's *support* (services/generator/backends/extractive.py) is
a hand-weighted sum: meaning (cosine), the share of the question's rare terms,
and nudges for the asked kind of value, a named row, a stated limit. It decides
*whether* the evidence answers (with the answerability model). Which unit to
quote is a different question, and the same signals weigh differently there: a
unit of the passage the retriever trusted most, or a sentence whose own words
(not its heading's) carry the question's terms, is more often the one with the
asked fact.

So the units of each part are ordered by a linear score over ``UNIT_FEATURES``,
learned with a listwise (softmax) loss on the tuning parts of ragway's own QA
sets: for every answerable question, the units that carry its expected fact are
the positives, every other retrieved unit a negative (``ragway train
unit-ranker``). The held-out parts never inform it. The support, and with it
every refusal, is unchanged by the ranker: it only chooses among units the
evidence already answers with.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_RANKER = Path(__file__).resolve().parent / "unit_ranker.json"

# The order of ScoredUnit.features (extractive.py builds them in this order).
UNIT_FEATURES: tuple[str, ...] = (
    "support",  # the hand-weighted support
    "cosine",  # meaning: part vs heading + context + unit
    "coverage",  # rarity-weighted share of the part's terms (with heading and context)
    "own_coverage",  # the same, in the words the answer would quote
    "cosine_gap",  # cosine minus the part's best cosine
    "coverage_gap",  # coverage minus the part's best coverage
    "holds_kind",  # +1 holds the asked kind of value, -1 lacks it, 0 nothing asked
    "row_key",  # a table row the question names
    "other_row",  # a table row while the question names another entity
    "bound",  # states a limit the question asks for
    "step",  # the list item the question asks for by its number
    "passage_rank",  # 1 / the passage's number (the packing order)
    "row",
    "item",
    "code",
    "has_context",  # read with a lead-in, header line or question
    "log_words",  # length of what the answer would quote
    "first_in_passage",
    "passage_cosine_gap",  # the unit's passage's best cosine minus the part's best
    "retrieval_score",  # the passage's retrieval score relative to the top passage
    "asked_coverage",  # the share of the part's terms in the page's own question (FAQ)
)


def unit_features(**values: float) -> tuple[float, ...]:
    """A unit's features by name, in ``UNIT_FEATURES`` order (every one, no other)."""
    if values.keys() != set(UNIT_FEATURES):
        wrong = sorted(set(values) ^ set(UNIT_FEATURES))
        raise ValueError(f"unit features must be exactly UNIT_FEATURES; differ: {wrong}")
    return tuple(values[name] for name in UNIT_FEATURES)


class UnitRankerError(ValueError):
    """A unit ranker file that cannot be used."""


@dataclass(frozen=True, slots=True)
class UnitRanker:
    weights: tuple[float, ...]
    # Standardisation, as trained: each feature's mean and scale.
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    features: tuple[str, ...] = UNIT_FEATURES
    version: str = ""
    trained_on: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        n = len(self.features)
        if not len(self.weights) == len(self.mean) == len(self.scale) == n:
            raise UnitRankerError(
                f"{len(self.weights)} weights, {len(self.mean)} means and "
                f"{len(self.scale)} scales for {n} features"
            )
        if self.features != UNIT_FEATURES:
            raise UnitRankerError(
                f"features {list(self.features)} are not this version's {list(UNIT_FEATURES)}; "
                "retrain with `ragway train unit-ranker`"
            )
        if any(s <= 0.0 for s in self.scale):
            raise UnitRankerError("every feature scale must be positive")

    @classmethod
    def load(cls, path: Path = DEFAULT_RANKER) -> UnitRanker:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                weights=tuple(float(w) for w in data["weights"]),
                mean=tuple(float(m) for m in data["mean"]),
                scale=tuple(float(s) for s in data["scale"]),
                features=tuple(str(f) for f in data["features"]),
                version=str(data["version"]),
                trained_on=data.get("trained_on"),
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UnitRankerError(f"cannot read unit ranker {path}: {exc}") from exc

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": self.version,
                "features": list(self.features),
                "weights": [round(w, 6) for w in self.weights],
                "mean": [round(m, 6) for m in self.mean],
                "scale": [round(s, 6) for s in self.scale],
                "trained_on": self.trained_on or {},
            },
            indent=2,
        )

    def score(self, features: Sequence[float]) -> float:
        """The unit's score for its part: higher answers it more likely."""
        if len(features) != len(self.weights):
            raise UnitRankerError(f"{len(features)} features for {len(self.weights)} weights")
        return sum(
            w * (x - m) / s
            for w, x, m, s in zip(self.weights, features, self.mean, self.scale, strict=True)
        )
