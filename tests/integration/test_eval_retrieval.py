"""``ragway eval retrieval`` end to end on a tiny BEIR set, through a real retriever process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragway_tools.evaluation.beir import DatasetError, load, split_queries
from ragway_tools.evaluation.retrieval import evaluate_dataset
from tests.conftest import FIXTURES

TINY = FIXTURES / "beir-tiny"


def test_every_mode_is_scored_and_written(tmp_path: Path) -> None:
    data = load(TINY)
    ids = sorted(data.qrels)
    table = evaluate_dataset(data, ids, "all", ["sparse", "dense", "hybrid"], tmp_path)
    report = json.loads((tmp_path / "report.json").read_text())
    assert set(report["modes"]) == {"sparse", "dense", "hybrid"}
    for mode, result in report["modes"].items():
        metrics = result["metrics"]
        assert all(0.0 <= v <= 1.0 for v in metrics.values()), mode
        # Ten documents, top 100: dense lists them all; BM25 only those sharing a word.
        if mode != "sparse":
            assert metrics["recall@100"] == 1.0, mode
        assert set(result["segments"]) == {"exact", "keyword", "paraphrase"}
        assert result["latency_ms"]["client"]["p50"] > 0
    # The exact and keyword questions are easy for BM25: found first.
    assert report["modes"]["sparse"]["segments"]["keyword"]["hit@1"] == 1.0
    # The paraphrases share few words with their documents; dense search finds them.
    assert report["modes"]["dense"]["segments"]["paraphrase"]["recall@3"] == 1.0
    assert report["modes"]["sparse"]["segments"]["paraphrase"]["recall@100"] < 1.0
    run_lines = (tmp_path / "run.hybrid.trec").read_text().splitlines()
    qid, q0, doc, rank, score, tag = run_lines[0].split()
    assert (q0, rank, tag) == ("Q0", "1", "ragway-hybrid")
    assert qid in ids and doc.startswith("d") and float(score) > 0
    assert "| hybrid |" in table and "ndcg@10" in table


def test_a_rerun_reuses_the_index(tmp_path: Path) -> None:
    data = load(TINY)
    evaluate_dataset(data, ["q1"], "all", ["sparse"], tmp_path)
    builds = list((tmp_path / "retriever/index-units/builds").iterdir())
    evaluate_dataset(data, ["q1"], "all", ["sparse"], tmp_path)
    assert list((tmp_path / "retriever/index-units/builds").iterdir()) == builds


def test_unknown_modes_and_bad_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown mode"):
        evaluate_dataset(load(TINY), ["q1"], "all", ["magic"], tmp_path)
    bad = tmp_path / "bad"
    (bad / "qrels").mkdir(parents=True)
    (bad / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\nnot json\n')
    (bad / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    (bad / "qrels/test.tsv").write_text("q1\td1\t1\n")
    with pytest.raises(DatasetError, match=r"corpus.jsonl:2: invalid JSON"):
        load(bad)


def test_the_split_is_fixed_and_disjoint() -> None:
    ids = [f"q{i}" for i in range(100)]
    first = split_queries(ids, seed=7)
    assert split_queries(list(reversed(ids)), seed=7) == first
    assert len(first["train"]) == 80
    assert not set(first["train"]) & set(first["validation"])
    assert split_queries(ids, seed=8) != first
