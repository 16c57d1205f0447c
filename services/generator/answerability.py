"""Whether the evidence answers the question: a small calibrated model, not one number.

The best unit's support alone mixes up two cases. A paraphrased question can
meet its answer with modest support, and an on-topic question the pages never
cover ("How much does the API Plus add-on cost?") can meet a loosely related
unit with more. What tells them apart is how the evidence is shaped:

- ``support``: the best unit's support (services/generator/backends/extractive.py);
- ``margin``: how far that unit stands above the best unit of any *other*
  passage. An answer stands out; loosely related units from several passages
  sit close together;
- ``missing``: how much of the question's meaning rests on its other terms that
  no passage contains, even misspelt: each absent term weighs its rarity among the
  retrieved passages times its salience (how far the question's embedding moves
  without it), so "worst case" in a paraphrase weighs little and the absent
  subject ("whiteboards") much. Rarity alone refused paraphrases nearly as readily
  as undocumented subjects (cross-validated abstention 0.859 -> 0.897 at 4 % false
  refusals on the tuning sets);
- ``names``: how many of the names the question gives (capitalised words,
  identifiers; up to two) the evidence is not about: no passage knows the name,
  even misspelt, or no retrieved table has the row it names ("the Team plan").
- ``words``: how far the question runs past ten words, in twenties of words,
  counted up to 40 words (so at most 1.5). Every extra word of a question told as
  a story ("My husband lost his job and we've just gone onto Universal Credit.
  Have you got anything cheaper…") dilutes its cosine and term coverage, so the
  same support means more in a long question than in a short one. A question of
  ten words or fewer reads as none: a first, linear form (policy 9) also counted
  a short question's shortness against it and refused keyword questions it had
  answered ("restocking fee maximum", "Which binary serves port 6390?"). Leave-
  one-set-out on the tuning sets (the same passages), the hinge at ten words
  refused 14 of 351 answerable questions against 16 for the linear form, at 47 of
  63 must-refuse questions refused either way.
  The cap keeps a padded question from talking its way past the decision.

The names have a feature of their own because the rarity weighting gives every
absent word the top weight: a paraphrase's own words ("sit", "gone for good")
weigh as much as a product nobody documented. Apart, the two signals refuse
fewer paraphrases (cross-validated abstention 0.847 -> 0.859 on the tuning sets,
false refusals 0.049 -> 0.040).

A logistic model over these gives the probability that the question is
answerable. Its weights and decision threshold live in a versioned JSON file
(``answerability.json`` beside this module). It is trained only on the tuning
part of the help-centre QA set, with the threshold chosen by cross-validation so
that false refusals stay at most 5 %; the held-out part never informs it
(``ragway train answerability``, docs/generation.md).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

DEFAULT_MODEL = Path(__file__).resolve().parent / "answerability.json"
FEATURES: tuple[str, ...] = ("support", "margin", "missing", "names", "words", "unsaid")
# A question longer than this counts as this long (the ``words`` feature).
MAX_QUESTION_WORDS = 40
# A question this short or shorter has no length to speak of (the ``words`` feature).
PLAIN_QUESTION_WORDS = 10


def question_length(question: str) -> float:
    """The ``words`` feature: the question's words past ten, in twenties, at most 1.5."""
    return max(0, min(len(question.split()), MAX_QUESTION_WORDS) - PLAIN_QUESTION_WORDS) / 20


class AnswerabilityError(ValueError):
    """An answerability model file that cannot be used."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the scored units say about the question as a whole."""

    support: float
    margin: float
    missing: float
    # The question's own words that no passage contains (for the refusal reason).
    missing_words: tuple[str, ...] = ()
    # How many of the names the question gives (up to two) the evidence is not
    # about, and those names as the question wrote them.
    names: float = 0.0
    missing_names: tuple[str, ...] = ()
    # How long the question is (``question_length``).
    words: float = 0.0
    # The share of the question's meaning that rests on terms the best unit's own
    # passage lacks, from 0 to 1; None where it was not measured (``settled``).
    unsaid: float | None = None

    def vector(self, features: tuple[str, ...] = FEATURES) -> list[float]:
        values = {
            "support": self.support,
            "margin": self.margin,
            "missing": self.missing,
            "names": self.names,
            "words": self.words,
            "unsaid": self.unsaid,
        }
        measured = {name: value for name, value in values.items() if value is not None}
        unmeasured = [name for name in features if name not in measured]
        if unmeasured:
            raise AnswerabilityError(f"evidence without {unmeasured}")
        return [measured[name] for name in features]


@dataclass(frozen=True, slots=True)
class AnswerabilityModel:
    weights: tuple[float, ...]
    bias: float
    threshold: float  # answer when the probability reaches it
    features: tuple[str, ...] = FEATURES
    version: str = ""
    # Provenance and the cross-validated numbers it was chosen with, as trained.
    trained_on: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if len(self.weights) != len(self.features):
            raise AnswerabilityError(
                f"{len(self.weights)} weights for {len(self.features)} features"
            )
        unknown = [f for f in self.features if f not in FEATURES]
        if unknown:
            raise AnswerabilityError(f"unknown features {unknown}; known: {list(FEATURES)}")
        if not 0.0 < self.threshold < 1.0:
            raise AnswerabilityError(f"threshold must be in (0, 1), got {self.threshold}")

    @classmethod
    def load(cls, path: Path = DEFAULT_MODEL) -> AnswerabilityModel:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                weights=tuple(float(w) for w in data["weights"]),
                bias=float(data["bias"]),
                threshold=float(data["threshold"]),
                features=tuple(str(f) for f in data["features"]),
                version=str(data["version"]),
                trained_on=data.get("trained_on"),
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise AnswerabilityError(f"cannot read answerability model {path}: {exc}") from exc

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": self.version,
                "features": list(self.features),
                "weights": [round(w, 6) for w in self.weights],
                "bias": round(self.bias, 6),
                "threshold": round(self.threshold, 6),
                "trained_on": self.trained_on or {},
            },
            indent=2,
        )

    def probability(self, evidence: Evidence) -> float:
        z = self.bias + sum(
            w * x for w, x in zip(self.weights, evidence.vector(self.features), strict=True)
        )
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def answerable(self, evidence: Evidence) -> bool:
        return self.probability(evidence) >= self.threshold

    def settled(self, evidence: Evidence) -> bool | None:
        """The decision whatever the unmeasured ``unsaid`` is, or None when it hinges
        on it.

        Measuring ``unsaid`` costs an embedding of the question once per term
        (the salience); the probability is monotone in it and it lies in [0, 1], so
        where both ends decide alike its value changes nothing. On the tuning sets
        that spares the measure for six questions in ten.
        """
        if evidence.unsaid is not None:
            return self.answerable(evidence)
        ends = {self.answerable(replace(evidence, unsaid=value)) for value in (0.0, 1.0)}
        return ends.pop() if len(ends) == 1 else None

    def reason(self, evidence: Evidence) -> str:
        """One sentence a person can read: why the evidence does not answer."""
        if evidence.missing_names:
            asked = ", ".join(f"“{w}”" for w in evidence.missing_names[:3])
            return f"The knowledge base does not cover {asked}, so it cannot answer this."
        named = [w for w in evidence.missing_words if len(w) > 3 and not w.isdigit()]
        if named and evidence.missing >= 0.3:
            asked = ", ".join(f"“{w}”" for w in named[:3])
            return f"No passage in the knowledge base mentions {asked}, so it cannot answer this."
        if evidence.margin < 0.1:
            return (
                "Several passages touch on this question, but none of them answers it "
                f"(best support {evidence.support:.3f}, only {evidence.margin:.3f} above "
                "the next passage)."
            )
        return (
            "The closest passage does not answer this question clearly enough "
            f"(best support {evidence.support:.3f})."
        )
