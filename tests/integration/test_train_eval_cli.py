"""The evaluation loop as a user runs it: train a reranker, serve it, measure, gate.

Each step is the real ``ragway`` command in a fresh working folder; the
retriever that mines negatives and the one that serves the trained artifact are
real processes on free ports.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

# Training and two retriever starts: minutes on a busy 2-core machine.
pytestmark = [pytest.mark.models, pytest.mark.timeout(900)]
RAGWAY = str(Path(sys.executable).parent / "ragway")
TINY = str(FIXTURES / "beir-tiny")


def ragway(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # A wide console: rich must not wrap the messages the tests look for.
    env = os.environ | {"COLUMNS": "200"}
    return subprocess.run(
        [RAGWAY, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    work = tmp_path_factory.mktemp("train")
    done = ragway(
        work, "train", "reranker", "--dataset", TINY, "--epochs", "2", "--max-length", "64",
        "--group-size", "4", "--negatives-depth", "6", "--output", "models",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (artifact,) = (work / "models").iterdir()
    return work, artifact


def test_training_mines_negatives_with_the_retriever_and_writes_an_artifact(
    trained: tuple[Path, Path],
) -> None:
    work, artifact = trained
    (negatives,) = work.glob("var/eval/beir-tiny-*/negatives-train-*.json")
    mined = json.loads(negatives.read_text())
    assert mined and all(isinstance(ids, list) for ids in mined.values())
    meta = json.loads((artifact / "artifact.json").read_text())
    assert meta["train_config"]["max_length"] == 64
    assert meta["data"]["train_queries"] == len(mined)


@pytest.fixture(scope="module")
def evaluated(trained: tuple[Path, Path]) -> Path:
    work, artifact = trained
    done = ragway(
        work, "eval", "retrieval", "--dataset", TINY, "--split", "all",
        "--reranker", str(artifact), "--output", "report",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return work / "report" / "report.json"


def test_the_retriever_serves_the_trained_reranker(
    trained: tuple[Path, Path], evaluated: Path
) -> None:
    _, artifact = trained
    report = json.loads(evaluated.read_text())
    assert report["reranker"] == str(artifact)
    reranked = report["modes"]["hybrid+rerank"]
    assert reranked["degraded_queries"] == 0  # a missing model would degrade every query
    assert reranked["latency_ms"]["rerank"]["p50"] > 0
    assert set(report["modes"]) == {"sparse", "dense", "hybrid", "hybrid+rerank"}


def test_the_gate_passes_and_blocks(
    trained: tuple[Path, Path], evaluated: Path, tmp_path: Path
) -> None:
    work, _ = trained
    report = evaluated
    gates = tmp_path / "gates.yaml"
    gates.write_text(
        f"reports: {{r: {report}}}\n"
        "checks:\n  - {metric: r.modes.hybrid.metrics.recall@100, min: 0.9}\n"
    )
    assert ragway(work, "eval", "gate", "--config", str(gates)).returncode == 0
    gates.write_text(
        gates.read_text() + "  - {metric: r.modes.hybrid.metrics.ndcg@10, min: 1.01}\n"
    )
    blocked = ragway(work, "eval", "gate", "--config", str(gates))
    assert blocked.returncode == 1
    assert "BREACH" in blocked.stdout and "below the floor 1.01" in blocked.stdout
