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
    Group,
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


def test_the_precision_setting_picks_the_network(
    artifact: tuple[Path, list[float], object],
) -> None:
    folder, _, _ = artifact
    query = TINY.queries[QUERIES[0]]
    docs = [f"{d.title}\n{d.text}" for d in TINY.corpus.values()]
    fp32 = load_reranker(folder, precision="fp32")
    assert fp32.model_id == folder.name + "-fp32"
    expected = OnnxCrossEncoderReranker(folder, int8=False).score(query, docs)
    np.testing.assert_allclose(fp32.score(query, docs), expected, atol=1e-6)
    assert load_reranker(folder).model_id == folder.name  # int8 unless asked


def test_batches_of_one_carry_no_padding_and_score_alike(
    artifact: tuple[Path, list[float], object],
) -> None:
    folder, _, _ = artifact
    query = TINY.queries[QUERIES[0]]
    docs = [f"{d.title}\n{d.text}"[: 20 + 37 * i] for i, d in enumerate(TINY.corpus.values())]
    single = OnnxCrossEncoderReranker(folder, int8=False, batch_size=1)
    batches = single.batches(query, docs)
    assert sorted(i for idx, _ in batches for i in idx) == list(range(len(docs)))
    assert all(int(a["attention_mask"].min()) == 1 for _, a in batches)
    whole = OnnxCrossEncoderReranker(folder, int8=False, batch_size=0).score(query, docs)
    np.testing.assert_allclose(single.score(query, docs), whole, atol=1e-4)


def test_clipping_long_passages_leaves_the_scores(
    artifact: tuple[Path, list[float], object],
) -> None:
    folder, _, _ = artifact
    query = TINY.queries[QUERIES[0]]
    # Far past the artifact's 64 tokens, so the tokenizer truncates either way.
    docs = [" ".join([f"{d.title}\n{d.text}"] * 20) for d in TINY.corpus.values()]
    clipped = OnnxCrossEncoderReranker(folder, int8=False, clip=True)
    whole = OnnxCrossEncoderReranker(folder, int8=False, clip=False)
    assert all(
        (a["input_ids"] == b["input_ids"]).all()
        for (_, a), (_, b) in zip(
            clipped.batches(query, docs), whole.batches(query, docs), strict=True
        )
    )
    np.testing.assert_allclose(clipped.score(query, docs), whole.score(query, docs), atol=1e-6)


def test_the_best_window_reads_another_span_of_a_long_passage_only(
    artifact: tuple[Path, list[float], object],
) -> None:
    folder, _, _ = artifact
    query = TINY.queries[QUERIES[0]]
    filler = "Unrelated words fill the opening of this passage. " * 12
    docs = [f"{d.title}\n{d.text}" for d in TINY.corpus.values()]
    long_docs = [filler + d for d in docs]
    head = load_reranker(folder, precision="fp32")
    best = load_reranker(folder, precision="fp32", window="best")
    assert isinstance(head, OnnxCrossEncoderReranker) and head.encoder.window == "head"
    assert isinstance(best, OnnxCrossEncoderReranker) and best.encoder.window == "best"
    # Short passages fit whole: the same scores either way.
    np.testing.assert_allclose(best.score(query, docs), head.score(query, docs), atol=1e-6)
    # Past the 64 tokens, the best window skips the filler where the query's words are.
    changed = [
        (a["input_ids"] != b["input_ids"]).any()
        for (_, a), (_, b) in zip(
            best.batches(query, long_docs), head.batches(query, long_docs), strict=True
        )
    ]
    assert any(changed)
    assert len(best.score(query, long_docs)) == len(long_docs)


def test_the_rerank_bench_measures_every_variant_against_fp32(
    artifact: tuple[Path, list[float], object],
) -> None:
    from ragway_tools.evaluation.qa_retrieval import ItemResult
    from ragway_tools.training.rerank_bench import BASELINE, Variant, measure, render

    folder, _, _ = artifact
    ids = list(TINY.corpus)

    def item(q: str) -> ItemResult:
        passages = tuple((d, f"{TINY.corpus[d].title}\n{TINY.corpus[d].text}") for d in ids)
        return ItemResult(
            q, "", tuple(TINY.qrels[q]), (), (), 0.0, 0.0, "", tenant="acme",
            query=TINY.queries[q], candidates=passages,
        )  # fmt: skip

    items = [item(q) for q in QUERIES[:3]]
    fast = Variant("int8, batches of 1, clipped", int8=True, batch_size=1, clip=True)
    points = measure(items, {"acme": folder}, variants=[BASELINE, fast], depths=(2, 4))
    assert [(p.variant, p.depth) for p in points] == [
        (BASELINE.name, 2), (fast.name, 2), (BASELINE.name, 4), (fast.name, 4),
    ]  # fmt: skip
    for p in points:
        assert len(p.latencies) == len(items) and p.p95_ms >= p.p50_ms > 0
        assert 0.0 <= p.hit1 <= 1.0 and 0.0 <= p.padded_share < 1.0
    base = [p for p in points if p.variant == BASELINE.name]
    assert all(p.p50_ratio == 1.0 and p.top1_agreement == 1.0 for p in base)
    assert all(p.kendall_tau == 1.0 and p.ndcg_vs_fp32 == 1.0 for p in base)
    assert [p.padded_share for p in points if p.variant == fast.name] == [0.0, 0.0]
    table = render(points, {"qa": "tiny", "items": 3, "artifacts": {"acme": folder.name},
                            "cpus": 2, "load": 0.0})  # fmt: skip
    assert table.count("\n| int8, batches of 1, clipped |") == 4


def test_the_curve_has_a_point_per_artifact_length_and_depth(
    artifact: tuple[Path, list[float], object],
) -> None:
    from ragway_tools.training.curve import best_under, measure, render

    folder, _, _ = artifact
    candidates = {q: [(d, 0.0) for d in TINY.corpus] for q in QUERIES}

    def curve(batch_size: int, runtimes: tuple[str, ...] = ("onnx-fp32",)) -> list[Any]:
        return measure(
            [folder], TINY, candidates, depths=(2, 4), lengths=(32, 64),
            runtimes=runtimes, latency_queries=2, batch_size=batch_size,
        )  # fmt: skip

    one_at_a_time, batched = curve(1), curve(0)
    assert [(p.layers, p.max_length, p.depth) for p in one_at_a_time] == [
        (4, 32, 2), (4, 32, 4), (4, 64, 2), (4, 64, 4),
    ]  # fmt: skip
    for p in one_at_a_time:
        assert p.artifact == folder.name and 0.0 <= p.ndcg10 <= 1.0
        assert p.p95_ms >= p.p50_ms > 0
    # Batched, each depth is scored as its own call; in fp32 that ranks the same.
    assert [p.ndcg10 for p in batched] == pytest.approx([p.ndcg10 for p in one_at_a_time])
    best = best_under(one_at_a_time, budget_ms=1e9)
    assert best is not None and best.ndcg10 == max(p.ndcg10 for p in one_at_a_time)
    assert best_under(one_at_a_time, budget_ms=0.0) is None
    table = render(one_at_a_time, 0.5, 40.0, best)
    assert "| layers |" in table and table.count("**(default)**") == 1
    windows = curve(1, ("onnx-fp32", "onnx-fp32+best"))
    assert [p.runtime for p in windows] == ["onnx-fp32"] * 4 + ["onnx-fp32+best"] * 4


def test_a_shallow_curve_still_scores_a_full_first_page() -> None:
    from ragway_tools.training.curve import candidate_depth, rerank_run

    assert candidate_depth([3, 5]) == 10 and candidate_depth([5, 20]) == 20
    # The relevant document is 8th of the fused candidates: reranking the top 5 leaves
    # it on the first page, where nDCG@10 sees it, only if the tail is fetched too.
    order = [(f"d{i}", 1.0 / i) for i in range(1, candidate_depth([3, 5]) + 1)]
    run = rerank_run(order, [0.0, 0.5, 0.1, 0.9, 0.3], depth=5)
    assert sorted(run, key=run.__getitem__, reverse=True)[:6] == [
        "d4",
        "d2",
        "d5",
        "d3",
        "d1",
        "d6",
    ]
    assert "d8" in run and len(run) == 10


def _logit(model: Any, base: Path, pair: list[tuple[str, str]]) -> float:
    arrays = encode(load_tokenizer(base, 64), pair)
    with torch.no_grad():
        return float(model(**{k: torch.from_numpy(v) for k, v in arrays.items()}).reshape(-1)[0])


def test_adapting_from_an_artifact_starts_from_its_weights_and_may_keep_them(
    artifact: tuple[Path, list[float], object],
) -> None:
    from ragway_tools.training.reranker import artifact_base

    folder, _, trained = artifact
    base, record = artifact_base(folder)
    assert record["version"] == folder.name and record["layers"] == 4
    groups = build_groups(TINY, QUERIES, NEGATIVES)
    config = TrainConfig(epochs=2, queries_per_step=3, group_size=3, max_length=64)
    pair = [(TINY.queries[QUERIES[0]], "Some passage about the query.")]
    start = _logit(trained, base, pair)
    seen: list[float] = []

    def metric(score: Any) -> float:
        # The start is the best this made-up metric ever sees.
        seen.append(score(pair)[0])
        return [0.9, 0.5, 0.4, 0.3][len(seen) - 1]

    result = train(groups, config, base=base, stopping=EarlyStopping(metric, every=1, patience=2))
    assert seen[0] == pytest.approx(start, abs=1e-5)  # evaluated before any step
    assert [st for st, _ in result.evaluations] == [0, 1, 2] and result.best_step == 0
    assert _logit(result.model, base, pair) == pytest.approx(start, abs=1e-5)


def test_only_a_ragway_artifact_is_a_starting_point(tmp_path: Path) -> None:
    from ragway_tools.training.reranker import artifact_base

    with pytest.raises(ValueError, match="not a ragway reranker artifact"):
        artifact_base(tmp_path)


def _kl_to(teacher: Any, student: Any, base: Path, groups: list[Group]) -> float:
    """Mean KL divergence of each whole group's softmax from the teacher's."""
    tokenizer = load_tokenizer(base, 64)
    total = 0.0
    for g in groups:
        pairs = [(g.query, g.positive)] + [(g.query, n) for n in g.negatives]
        inputs = {k: torch.from_numpy(v) for k, v in encode(tokenizer, pairs).items()}
        with torch.no_grad():
            mine, theirs = student(**inputs).squeeze(-1), teacher(**inputs).squeeze(-1)
        total += float(
            torch.nn.functional.kl_div(
                torch.log_softmax(mine, 0), torch.log_softmax(theirs, 0),
                log_target=True, reduction="sum",
            )
        )  # fmt: skip
    return total / len(groups)


def test_a_smaller_student_learns_its_teachers_order_and_leaves_the_teacher_as_it_was(
    artifact: tuple[Path, list[float], object],
) -> None:
    from ragway_tools.training.reranker import artifact_base, load_teacher

    folder, _, _ = artifact
    teacher = load_teacher(folder)
    base, _ = artifact_base(folder)
    pair = [(TINY.queries[QUERIES[0]], "Some passage about the query.")]
    before = _logit(teacher, base, pair)
    groups = build_groups(TINY, QUERIES, NEGATIVES)

    def student(weight: float) -> Any:
        config = TrainConfig(
            epochs=20, queries_per_step=3, group_size=4, max_length=64, learning_rate=1e-3,
            layers=1, distill_weight=weight,
        )  # fmt: skip
        return train(groups, config, teacher=teacher).model

    # The same 1-layer student, same seed and batches, with and without the teacher's share
    # of the loss: only the distilled one comes close to the teacher's order of every group
    # (0.04 against 0.60 nats when this test was written), not just its positive.
    taught, plain = student(1.0), student(0.0)
    assert len(taught.encoder.encoder.layer) == 1
    assert _kl_to(teacher, taught, base, groups) < 0.3 * _kl_to(teacher, plain, base, groups)
    assert _logit(teacher, base, pair) == before  # frozen: no step moved it


def test_a_student_cut_from_its_teacher_starts_with_the_teachers_first_layers_and_head(
    artifact: tuple[Path, list[float], object],
) -> None:
    from transformers import AutoConfig

    from ragway_tools.training.reranker import artifact_base, build_model, load_head, load_teacher

    folder, _, _ = artifact
    teacher = load_teacher(folder)
    base, _ = artifact_base(folder)  # what `--student-start teacher` trains from
    config = AutoConfig.from_pretrained(str(base), local_files_only=True)
    config.num_hidden_layers = 1
    student = build_model(base, config)
    assert load_head(student, base)
    kept = dict(teacher.named_parameters())
    for name, value in student.named_parameters():
        assert ".layer.1." not in name
        assert torch.equal(value, kept[name]), name
    assert len(student.encoder.encoder.layer) == 1 < len(teacher.encoder.encoder.layer)


def test_a_student_cut_from_its_teacher_cannot_have_more_layers_than_it(
    artifact: tuple[Path, list[float], object],
) -> None:
    from typer.testing import CliRunner

    from ragway_tools.cli import app

    folder, _, _ = artifact  # 4 layers
    args = ["train", "reranker", "--dataset", str(FIXTURES / "beir-tiny"), "--layers", "6",
            "--distill-from", str(folder)]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0
    assert "keeps at most its 4 layers" in " ".join(result.output.split())
    result = CliRunner().invoke(app, [*args, "--student-start", "bert"])
    assert result.exit_code != 0 and "--student-start is teacher or minilm" in result.output
