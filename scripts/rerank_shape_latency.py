"""Rerank stage latency by network shape, with untrained same-shaped artifacts.

    .venv/bin/python scripts/rerank_shape_latency.py --dataset ../shared/datasets/scifact

Latency does not depend on the weights, so no trained reranker is needed: this
writes one artifact per layer count (the packaged MiniLM's first N layers and a
fresh head, exported like ``ragway train reranker`` exports) and times the
retriever's ``OnnxCrossEncoderReranker.score`` over depth-5 heads of SciFact
passages (random documents for random queries: the abstracts' length is what
matters), for each layer count, input length, batching (1: pairs one at a time,
0: one padded batch per query) and onnxruntime thread count. The single-query
calls run interleaved, so a shared machine's load falls on every variant
alike; then each variant serves two concurrent query streams on one session
(the retriever's search threads), for per-query latency and queries per second.
Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

from ragway.reranker_artifact import passage_text
from ragway.stats import percentile
from services.retriever.rerank import OnnxCrossEncoderReranker

Key = tuple[int, int, int, int]  # layers, max length, batch size, threads


def untrained_artifact(layers: int, out: Path) -> Path:
    from transformers import AutoConfig

    from ragway_tools.training import reranker as trainer

    base = trainer.base_model_dir()
    config = AutoConfig.from_pretrained(str(base), local_files_only=True)
    config.num_hidden_layers = layers
    model = trainer.build_model(base, config).eval()
    result = trainer.TrainResult(model, 0, 0, 0.0, [0.0])
    return trainer.write_artifact(
        result, trainer.TrainConfig(layers=layers), out, checksum="untrained", data={}
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--layers", default="2,3,4")
    parser.add_argument("--lengths", default="128,192")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--depth", type=int, default=5)
    args = parser.parse_args()
    docs = [json.loads(line) for line in (args.dataset / "corpus.jsonl").open()]
    queries = [json.loads(line)["text"] for line in (args.dataset / "queries.jsonl").open()]
    rng = random.Random(7)
    items = [
        (
            rng.choice(queries),
            [passage_text(d["title"], d["text"]) for d in rng.sample(docs, args.depth)],
        )
        for _ in range(args.queries)
    ]
    with tempfile.TemporaryDirectory(prefix="rerank-shapes-") as tmp:
        models: dict[Key, OnnxCrossEncoderReranker] = {}
        for layers in (int(x) for x in args.layers.split(",")):
            artifact = untrained_artifact(layers, Path(tmp) / str(layers))
            for length in (int(x) for x in args.lengths.split(",")):
                for batch, threads in ((1, 1), (1, 2), (0, 1), (0, 2)):
                    model = OnnxCrossEncoderReranker(
                        artifact, max_length=length, threads=threads, batch_size=batch
                    )
                    model.score(*items[0])  # the first inference allocates
                    models[(layers, length, batch, threads)] = model
        keys = list(models)
        single: dict[Key, list[float]] = {k: [] for k in keys}
        for n, (query, passages) in enumerate(items):
            for key in [*keys[n % len(keys) :], *keys[: n % len(keys)]]:
                t0 = time.perf_counter()
                models[key].score(query, passages)
                single[key].append((time.perf_counter() - t0) * 1000)
        lines = [
            f"depth {args.depth}, {args.queries} queries, interleaved",
            "",
            "| layers | max length | batch | threads | one query p50 / p95 ms "
            "| two streams p50 / p95 ms | two streams queries/s |",
            "|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for key in keys:
            pair, wall = _two_streams(models[key], items)
            lines.append(
                f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} "
                f"| {percentile(single[key], 50):.1f} / {percentile(single[key], 95):.1f} "
                f"| {percentile(pair, 50):.1f} / {percentile(pair, 95):.1f} "
                f"| {len(pair) / wall:.1f} |"
            )
    sys.stdout.write("\n".join(lines) + "\n")


def _two_streams(
    model: OnnxCrossEncoderReranker, items: list[tuple[str, list[str]]]
) -> tuple[list[float], float]:
    """Per-call latencies and the wall time of two threads scoring half the items each."""
    out: list[float] = []
    score = model.score

    def stream(part: list[tuple[str, list[str]]]) -> None:
        for query, passages in part:
            t0 = time.perf_counter()
            score(query, passages)
            out.append((time.perf_counter() - t0) * 1000)

    threads = [threading.Thread(target=stream, args=(items[i::2],)) for i in range(2)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out, time.perf_counter() - t0


if __name__ == "__main__":
    main()
