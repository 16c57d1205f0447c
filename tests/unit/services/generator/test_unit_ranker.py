"""The unit ranker: its file, its score, and that it orders units without changing refusals."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ragway.embedding import OnnxMiniLMEmbedder
from services.generator.answerability import AnswerabilityModel
from services.generator.backends.base import Final, GenerationRequest, Passage, Verdict
from services.generator.backends.extractive import ExtractiveGenerator
from services.generator.unit_ranker import (
    DEFAULT_RANKER,
    UNIT_FEATURES,
    UnitRanker,
    UnitRankerError,
    unit_features,
)

N = len(UNIT_FEATURES)


def _ranker(**weights: float) -> UnitRanker:
    return UnitRanker(
        weights=tuple(weights.get(f, 0.0) for f in UNIT_FEATURES),
        mean=(0.0,) * N,
        scale=(1.0,) * N,
        version="test",
    )


def test_the_packaged_ranker_loads_and_reads_this_versions_features() -> None:
    ranker = UnitRanker.load()
    assert ranker.features == UNIT_FEATURES
    assert ranker.version.startswith("unit-ranker-")
    # Trained on the tuning parts only, and says so.
    trained = ranker.trained_on or {}
    assert trained["qa_sha256"] and not any("heldout" in p for p in trained["qa_sha256"])
    # Support weighs for a unit: a ranker that learned the opposite would be broken.
    assert ranker.weights[UNIT_FEATURES.index("support")] > 0


def test_a_ranker_file_round_trips(tmp_path: Path) -> None:
    ranker = UnitRanker(
        weights=tuple(float(i) for i in range(N)),
        mean=(0.5,) * N,
        scale=(2.0,) * N,
        version="unit-ranker-x",
        trained_on={"parts": 3},
    )
    path = tmp_path / "r.json"
    path.write_text(ranker.to_json())
    assert UnitRanker.load(path) == ranker


def test_the_score_is_linear_in_the_standardised_features() -> None:
    ranker = UnitRanker(
        weights=(2.0,) + (0.0,) * (N - 1), mean=(1.0,) * N, scale=(4.0,) * N, version="t"
    )
    assert ranker.score((9.0,) + (0.0,) * (N - 1)) == pytest.approx(2.0 * (9.0 - 1.0) / 4.0)
    with pytest.raises(UnitRankerError, match="3 features"):
        ranker.score((1.0, 2.0, 3.0))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"features": ["support", "cosine"]}, "weights"),
        ({"scale": [0.0] * N}, "positive"),
        ({"weights": "x"}, "cannot read"),
    ],
)
def test_a_ranker_file_that_cannot_be_used_is_refused_with_the_reason(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    data = json.loads(DEFAULT_RANKER.read_text())
    data.update(change)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UnitRankerError, match=message):
        UnitRanker.load(path)


def test_a_ranker_of_another_feature_list_must_be_retrained(tmp_path: Path) -> None:
    data = json.loads(DEFAULT_RANKER.read_text())
    data["features"] = list(reversed(data["features"]))
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UnitRankerError, match="retrain"):
        UnitRanker.load(path)


EMBEDDER = OnnxMiniLMEmbedder()
PAGE = Passage(
    1,
    "exports#limits",
    "exports",
    "Data exports",
    "Export limits",
    "Exports of the workspace run overnight and include every project, comment and file. "
    "Each export link stays valid for 72 hours. "
    "Large workspaces may take several hours to export.",
)
QUESTION = "How long does an export link stay valid?"


def _answer(generator: ExtractiveGenerator) -> Final:
    async def collect() -> Final:
        events = [e async for e in generator.generate(GenerationRequest(QUESTION, [PAGE]))]
        final = events[-1]
        assert isinstance(final, Final)
        return final

    return asyncio.run(collect())


def test_the_ranker_chooses_the_quoted_unit_and_leaves_the_refusal_decision_alone() -> None:
    model = AnswerabilityModel.load()
    plain = ExtractiveGenerator(EMBEDDER, answerability=model)
    # A ranker that prefers the first unit of a passage whatever it says.
    first = ExtractiveGenerator(
        EMBEDDER, answerability=model, ranker=_ranker(first_in_passage=10.0)
    )
    by_support = _answer(plain)
    by_rank = _answer(first)
    assert "72 hours" in by_support.answer
    assert by_rank.answer.startswith("Exports of the workspace run overnight")
    # Whether the evidence answers, and how strongly, does not depend on the order.
    assert by_support.verdict == by_rank.verdict == Verdict.GROUNDED
    assert by_support.evidence_score == by_rank.evidence_score
    scored_plain = plain.score(QUESTION, [PAGE])
    scored_ranked = first.score(QUESTION, [PAGE])
    assert plain.evidence(QUESTION, [PAGE], scored_plain) == first.evidence(
        QUESTION, [PAGE], scored_ranked
    )
    assert [s.rank for s in scored_ranked] == sorted((s.rank for s in scored_ranked), reverse=True)


def test_without_a_ranker_units_are_ordered_by_support() -> None:
    scored = ExtractiveGenerator(EMBEDDER).score(QUESTION, [PAGE])
    assert [s.support for s in scored] == sorted((s.support for s in scored), reverse=True)
    assert all(len(s.features) == N for s in scored)


def test_features_are_given_by_name_and_come_out_in_the_rankers_order() -> None:
    values = {name: float(i) for i, name in enumerate(UNIT_FEATURES)}
    assert unit_features(**values) == tuple(float(i) for i in range(N))
    with pytest.raises(ValueError, match="support"):
        unit_features(**{k: v for k, v in values.items() if k != "support"})
    with pytest.raises(ValueError, match="extra"):
        unit_features(**values, extra=1.0)
