"""Rerank stage latency of onnxruntime settings, quantisations and tokenisation, same run.

    nice -n 10 .venv/bin/python scripts/rerank_variant_latency.py \
        --dataset ../shared/datasets/scifact [--artifact var/models/reranker-…]

Latency does not depend on the weights, so without ``--artifact`` this writes
an untrained 4-layer artifact (the packaged MiniLM's first layers and a fresh
head, exported like ``ragway train reranker`` exports). From its fp32 network it
makes the other int8 quantisations (dynamic per channel, dynamic with a reduced
range, static QDQ calibrated on training pairs), and times depth-``--depth``
heads of SciFact abstracts for training-split queries (never the validation or
test queries) through each variant, interleaved and rotated query by query so a
shared machine's load falls on every variant alike. Every variant is checked
against the baseline's scores (the largest absolute difference, and how often
the head's order is the same), so one that moves scores is visible next to its
time. Prints a Markdown table. ``--tokenisation`` times only the step that turns
a head into model inputs: the tokenizer per pair (before the pair encoder), and
the pair encoder cold and warm, reading each passage's head or its best window.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from rerank_shape_latency import untrained_artifact  # scripts/, the script's own folder

from ragway.reranker_artifact import (
    PairEncoder,
    clip_words,
    encode_by_length,
    load_tokenizer,
    passage_text,
)
from ragway.stats import percentile
from ragway_tools.commands.common import load_split
from services.retriever.rerank import OnnxCrossEncoderReranker

Score = Callable[[str, Sequence[str]], list[float]]


def quantisations(artifact: Path, out: Path, calibration: list[dict[str, Any]]) -> dict[str, Path]:
    """Other int8 networks from the artifact's fp32 ONNX."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_dynamic,
        quantize_static,
    )

    fp32 = artifact / "onnx" / "model.onnx"
    made: dict[str, Path] = {}
    made["dyn-per-channel"] = out / "dyn_pc.onnx"
    quantize_dynamic(str(fp32), str(made["dyn-per-channel"]), weight_type=QuantType.QInt8,
                     per_channel=True)  # fmt: skip
    made["dyn-reduce-range"] = out / "dyn_rr.onnx"
    quantize_dynamic(str(fp32), str(made["dyn-reduce-range"]), weight_type=QuantType.QInt8,
                     reduce_range=True)  # fmt: skip
    made["dyn-u8"] = out / "dyn_u8.onnx"
    quantize_dynamic(str(fp32), str(made["dyn-u8"]), weight_type=QuantType.QUInt8)

    class Reader(CalibrationDataReader):  # type: ignore[misc]
        def __init__(self) -> None:
            self._it = iter(calibration)

        def get_next(self) -> dict[str, Any] | None:
            return next(self._it, None)

    made["static-qdq"] = out / "static_qdq.onnx"
    quantize_static(str(fp32), str(made["static-qdq"]), Reader(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    op_types_to_quantize=["MatMul"])  # fmt: skip
    made["static-qop"] = out / "static_qop.onnx"
    quantize_static(str(fp32), str(made["static-qop"]), Reader(),
                    quant_format=QuantFormat.QOperator, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"])  # fmt: skip
    return made


def with_network(base: OnnxCrossEncoderReranker, network: Path, **options: Any) -> Score:
    """``base``'s tokenisation and batching with another network or session options."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    for name, value in options.items():
        if name.startswith("config:"):
            so.add_session_config_entry(name[len("config:") :], value)
        else:
            setattr(so, name, value)
    session = ort.InferenceSession(str(network), so, providers=["CPUExecutionProvider"])
    inputs = {i.name for i in session.get_inputs()}

    def score(query: str, passages: Sequence[str]) -> list[float]:
        scores = [0.0] * len(passages)
        for idx, arrays in base.batches(query, passages):
            feeds = {k: v for k, v in arrays.items() if k in inputs}
            (logits,) = session.run(["logits"], feeds)
            for i, x in zip(idx, logits.reshape(-1), strict=True):
                scores[i] = float(x)
        return scores

    return score


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--artifact", type=Path, default=None)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--max-length", type=int, default=192)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--depth", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2, help="passes over the queries")
    parser.add_argument("--only", default="", help="comma-separated variant names")
    parser.add_argument(
        "--tokenisation", action="store_true", help="time only the tokenisation of each head"
    )
    args = parser.parse_args()
    data, train_ids = load_split(args.dataset, "train", 2026)
    rng = random.Random(7)
    docs = list(data.corpus.values())
    items = [
        (
            data.queries[qid],
            [passage_text(d.title, d.text) for d in rng.sample(docs, args.depth)],
        )
        for qid in rng.sample(train_ids, args.queries)
    ]
    if args.tokenisation:
        tokenisation(args.artifact or _untrained(args.layers), items, args.max_length, args.rounds)
        return
    with tempfile.TemporaryDirectory(prefix="rerank-variants-") as tmp:
        artifact = args.artifact or _untrained(args.layers)
        base = OnnxCrossEncoderReranker(artifact, max_length=args.max_length)
        calibration = [
            arrays for query, passages in items[:20] for _, arrays in base.batches(query, passages)
        ]
        onnx = artifact / "onnx"
        variants: dict[str, Score] = {"baseline (int8 dynamic, pairs one by one)": base.score}
        batched = OnnxCrossEncoderReranker(artifact, max_length=args.max_length, batch_size=0)
        variants["one padded batch"] = batched.score
        variants["pair encoder, no cache"] = OnnxCrossEncoderReranker(
            artifact, max_length=args.max_length, cache_size=0
        ).score
        tokenizer = load_tokenizer(artifact / "model", args.max_length)

        def per_pair_tokenizer(query: str, passages: Sequence[str]) -> list[float]:
            # Before the pair encoder: every pair clipped and tokenised on each call.
            scores = [0.0] * len(passages)
            pairs = [(query, clip_words(p, args.max_length)) for p in passages]
            for idx, arrays in encode_by_length(tokenizer, pairs, 1):
                for i, x in zip(idx, base.run(arrays), strict=True):
                    scores[i] = x
            return scores

        variants["tokenizer per pair (before)"] = per_pair_tokenizer
        variants["fp32"] = OnnxCrossEncoderReranker(
            artifact, max_length=args.max_length, int8=False
        ).score
        int8 = onnx / "model_int8.onnx"
        import onnxruntime as ort

        level = ort.GraphOptimizationLevel
        variants["opt basic"] = with_network(
            base, int8, graph_optimization_level=level.ORT_ENABLE_BASIC
        )
        variants["opt extended"] = with_network(
            base, int8, graph_optimization_level=level.ORT_ENABLE_EXTENDED
        )
        variants["opt disabled"] = with_network(
            base, int8, graph_optimization_level=level.ORT_DISABLE_ALL
        )
        variants["no mem arena"] = with_network(base, int8, enable_cpu_mem_arena=False)
        variants["no mem pattern"] = with_network(base, int8, enable_mem_pattern=False)
        variants["no spinning"] = with_network(
            base, int8, **{"config:session.intra_op.allow_spinning": "0"}
        )
        variants["denormal as zero"] = with_network(
            base, int8, **{"config:session.set_denormal_as_zero": "1"}
        )
        for name, path in quantisations(artifact, Path(tmp), calibration).items():
            variants[name] = with_network(base, path)
        if args.only:
            keep = {n.strip() for n in args.only.split(",")}
            variants = {
                k: v
                for k, v in variants.items()
                if k.startswith(tuple(keep)) or k.startswith("baseline")
            }
        for score in variants.values():
            score(*items[0])
        names = list(variants)
        times: dict[str, list[float]] = {n: [] for n in names}
        outputs: dict[str, list[list[float]]] = {n: [] for n in names}
        t_start = time.time()
        load0 = os.getloadavg()
        for r in range(args.rounds):
            for n, (query, passages) in enumerate(items):
                k = (n + r) % len(names)
                for name in [*names[k:], *names[:k]]:
                    t0 = time.perf_counter()
                    got = variants[name](query, passages)
                    times[name].append((time.perf_counter() - t0) * 1000)
                    if r == 0:
                        outputs[name].append(got)
        load1 = os.getloadavg()
    ref = outputs[names[0]]
    fp32 = outputs.get("fp32", ref)
    lines = [
        f"{args.layers if args.artifact is None else artifact.name}: depth {args.depth}, "
        f"{args.max_length} tokens, {args.queries} train-split queries x {args.rounds} rounds, "
        f"interleaved; {time.time() - t_start:.0f} s; "
        f"load average {load0[0]:.2f} -> {load1[0]:.2f}",
        "",
        "| variant | p50 ms | p95 ms | p50 vs baseline | max abs diff vs baseline "
        "| same order as fp32 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    b50 = percentile(times[names[0]], 50)
    for name in names:
        diff = max(abs(a - b) for x, y in zip(outputs[name], ref, strict=True)
                   for a, b in zip(x, y, strict=True))  # fmt: skip
        same = sum(_order(x) == _order(y) for x, y in zip(outputs[name], fp32, strict=True))
        lines.append(
            f"| {name} | {percentile(times[name], 50):.1f} | {percentile(times[name], 95):.1f} "
            f"| {percentile(times[name], 50) / b50:.2f} | {diff:.2g} | {same}/{len(fp32)} |"
        )
    sys.stdout.write("\n".join(lines) + "\n")


def tokenisation(
    artifact: Path, items: list[tuple[str, list[str]]], max_length: int, rounds: int
) -> None:
    """The time of turning one head into model inputs, before and with the pair encoder."""
    tokenizer = load_tokenizer(artifact / "model", max_length)
    encoders = {
        "head, cold (no cache)": PairEncoder(tokenizer, max_length, cache_size=0),
        "head, warm (every passage cached)": PairEncoder(tokenizer, max_length),
        "best window, cold": PairEncoder(tokenizer, max_length, cache_size=0, window="best"),
        "best window, warm": PairEncoder(tokenizer, max_length, window="best"),
    }
    for encoder in encoders.values():
        for query, passages in items:
            encoder.batches(query, passages, 1)
    variants: dict[str, Callable[[str, Sequence[str]], object]] = {
        "before: clip + tokenizer per pair": lambda q, ps: encode_by_length(
            tokenizer, [(q, clip_words(p, max_length)) for p in ps], 1
        ),
    }
    for name, encoder in encoders.items():
        variants[f"pair encoder, {name}"] = partial(encoder.batches, batch_size=1)
    names = list(variants)
    times: dict[str, list[float]] = {n: [] for n in names}
    load0 = os.getloadavg()
    for r in range(rounds):
        for n, (query, passages) in enumerate(items):
            k = (n + r) % len(names)
            for name in [*names[k:], *names[:k]]:
                t0 = time.perf_counter()
                variants[name](query, passages)
                times[name].append((time.perf_counter() - t0) * 1000)
    lines = [
        f"tokenisation of a depth-{len(items[0][1])} head, {max_length} tokens, {len(items)} "
        f"train-split queries x {rounds} rounds, interleaved; "
        f"load average {load0[0]:.2f} -> {os.getloadavg()[0]:.2f}",
        "",
        "| tokenisation | p50 ms | p95 ms |",
        "|---|---:|---:|",
    ]
    for name in names:
        lines.append(
            f"| {name} | {percentile(times[name], 50):.2f} | {percentile(times[name], 95):.2f} |"
        )
    sys.stdout.write("\n".join(lines) + "\n")


def _untrained(layers: int) -> Path:
    """An untrained artifact of ``layers`` layers, kept under var/bench/ for the next run."""
    root = Path("var/bench/untrained") / str(layers)
    found = sorted(root.glob("reranker-*"))
    return found[-1] if found else untrained_artifact(layers, root)


def _order(scores: Sequence[float]) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: -scores[i])


if __name__ == "__main__":
    main()
