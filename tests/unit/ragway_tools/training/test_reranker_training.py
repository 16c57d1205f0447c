"""Training the cross-encoder: the loss goes down, the export serves the same network."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from ragway.reranker_artifact import encode, load_tokenizer
from ragway_tools.evaluation.beir import load
from ragway_tools.training.reranker import (
    EarlyStopping,
    TrainConfig,
    build_groups,
    save_artifact,
    train,
)
from services.retriever.rerank import OnnxCrossEncoderReranker, load_reranker
from tests.conftest import FIXTURES

pytestmark = pytest.mark.models
TINY = load(FIXTURES / "beir-tiny")
QUERIES = sorted(TINY.qrels)
# Every non-relevant document is a negative: no retriever needed for this test.
NEGATIVES = {q: [d for d in TINY.corpus if d not in TINY.qrels[q]] for q in QUERIES}


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[float], object]:
    config = TrainConfig(
        epochs=6, queries_per_step=3, group_size=4, max_length=64, learning_rate=3e-4, threads=2
    )
    result = train(build_groups(TINY, QUERIES, NEGATIVES), config)
    folder = save_artifact(
        result, config, tmp_path_factory.mktemp("models"), dataset=TINY, query_ids=QUERIES,
        split_seed=2026,
    )  # fmt: skip
    return folder, result.losses, result.model


def test_groups_pair_each_relevant_document_with_negatives() -> None:
    groups = build_groups(TINY, QUERIES, NEGATIVES)
    assert len(groups) == sum(g > 0 for v in TINY.qrels.values() for g in v.values())
    for g in groups:
        assert g.positive not in g.negatives


def test_the_listwise_loss_goes_down(artifact: tuple[Path, list[float], object]) -> None:
    _, losses, _ = artifact
    per_epoch = len(losses) // 6
    first, last = losses[:per_epoch], losses[-per_epoch:]
    assert statistics.fmean(last) < statistics.fmean(first) * 0.8, losses


def test_the_artifact_records_what_it_was_trained_on(
    artifact: tuple[Path, list[float], object],
) -> None:
    import json

    folder, _, _ = artifact
    meta = json.loads((folder / "artifact.json").read_text())
    assert meta["format"] == "ragway-reranker/1"
    assert meta["version"] == folder.name
    assert meta["data"]["dataset_checksum"] == TINY.checksum
    assert meta["data"]["train_queries"] == len(QUERIES)
    assert meta["train_config"]["max_length"] == 64
    for name in ("model/model.safetensors", "model/tokenizer.json", "onnx/model.onnx",
                 "onnx/model_int8.onnx"):  # fmt: skip
        assert (folder / name).is_file(), name


def test_onnx_fp32_matches_torch_and_int8_keeps_the_order(
    artifact: tuple[Path, list[float], object],
) -> None:
    folder, _, model = artifact
    query = TINY.queries[QUERIES[0]]
    docs = [f"{d.title}\n{d.text}" for d in TINY.corpus.values()]
    arrays = encode(load_tokenizer(folder / "model", 64), [(query, d) for d in docs])
    with torch.no_grad():
        reference = model(**{k: torch.from_numpy(v) for k, v in arrays.items()})  # type: ignore[operator]
    expected = reference.squeeze(-1).numpy()
    fp32 = OnnxCrossEncoderReranker(folder, int8=False).score(query, docs)
    np.testing.assert_allclose(fp32, expected, atol=1e-4)
    int8 = load_reranker(folder).score(query, docs)
    assert int(np.argmax(int8)) == int(np.argmax(expected))


def test_length_sorted_batches_score_like_one_padded_batch(
    artifact: tuple[Path, list[float], object],
) -> None:
    folder, _, _ = artifact
    query = TINY.queries[QUERIES[0]]
    # Mixed lengths, so sorting reorders them and batches differ in width.
    docs = [f"{d.title}\n{d.text}"[: 20 + 37 * i] for i, d in enumerate(TINY.corpus.values())]
    whole = OnnxCrossEncoderReranker(folder, int8=False, batch_size=0).score(query, docs)
    batched = OnnxCrossEncoderReranker(folder, int8=False, batch_size=2).score(query, docs)
    np.testing.assert_allclose(batched, whole, atol=1e-4)  # same scores, original order


def test_early_stopping_keeps_the_best_evaluated_weights() -> None:
    groups = build_groups(TINY, QUERIES, NEGATIVES)
    config = TrainConfig(epochs=3, queries_per_step=3, group_size=3, max_length=32, layers=1)
    seen: list[float] = []

    def metric(score: Any) -> float:
        # A made-up metric that peaks at the second evaluation, then falls.
        seen.append(float(score([("q", "p")])[0]))
        return [0.2, 0.9, 0.5, 0.4, 0.3][len(seen) - 1]

    result = train(groups, config, stopping=EarlyStopping(metric, every=1, patience=2))
    assert [m for _, m in result.evaluations] == [0.2, 0.9, 0.5, 0.4]  # stopped: 2 without gain
    assert result.best_step == 2 and result.steps == 4
