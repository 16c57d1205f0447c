"""Ingestion throughput on a BEIR corpus against the embedder's raw throughput, one run.

    .venv/bin/python scripts/bench_ingest.py --dataset ../shared/datasets/scifact

On a private stack (Redis server, retriever, ingest API, one Celery worker):

1. embedder   OnnxMiniLMEmbedder.embed over the same chunk texts the retriever
              embeds (title > section + text), batches of 32, 1 thread, in this
              process: the ceiling, since embedding is the costliest step.
2. bulk       parse + chunk every document (plain text) and load them into a new
              build through the retriever (Upsert, origin BULK), then seal it:
              what `ragway builds create` does.
3. webhooks   the first --webhook-docs documents as signed webhooks, through the
              ingest API, Redis broker and one worker, into live: from the
              first POST to the last delivery done.

Writes var/bench/ingest.md and ingest.json. Thread pools: OPENBLAS/OMP = 1,
the retriever's inference_threads = 1 (the defaults).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import redis

from ragway.embedding import OnnxMiniLMEmbedder
from ragway.kb import Defaults, Document, build_document
from ragway.v1 import retriever_pb2 as pb
from ragway.v1 import retriever_pb2_grpc as pb_grpc
from ragway_tools.build_client import SourceRead, summarize
from ragway_tools.evaluation.beir import load
from ragway_tools.launcher import Stack, StackConfig
from ragway_tools.loading import load_documents
from services.ingest.deliveries import TERMINAL, DeliveryStore
from services.ingest.signing import sign

DEFAULTS = Defaults(tenant="bench", groups=("public",))


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


def bench_embedder(texts: list[str]) -> float:
    embedder = OnnxMiniLMEmbedder(threads=1)
    embedder.embed(["warm-up"])
    started = time.perf_counter()
    embedder.embed(texts)
    return time.perf_counter() - started


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--dataset", type=Path, default=Path("../shared/datasets/scifact"))
    parser.add_argument("--webhook-docs", type=int, default=500)
    parser.add_argument("--output", type=Path, default=Path("var/bench/ingest.md"))
    parser.add_argument("--data-dir", type=Path, default=Path("var/bench/ingest-stack"))
    args = parser.parse_args()

    docs, parse_s = parse_corpus(args.dataset)
    texts = embed_texts(docs)
    chunks = len(texts)
    say(f"{len(docs)} documents, {chunks} chunks, parsed in {parse_s:.1f} s", flush=True)
    embed_s = bench_embedder(texts)
    say(f"embedder: {chunks / embed_s:.1f} chunks/s", flush=True)

    shutil.rmtree(args.data_dir, ignore_errors=True)  # this run's private stack starts empty
    stack = Stack(StackConfig.on_free_ports(args.data_dir))
    try:
        stack.preflight()
        stack.logs_dir.mkdir(parents=True, exist_ok=True)
        stack.start_redis()
        stack.start_service("retriever")
        stack.start_ingest()
        bulk_s, build_id, summary = bench_bulk(stack, docs)
        say(f"bulk: {len(docs) / bulk_s:.1f} docs/s", flush=True)
        subset = docs[: args.webhook_docs]
        hook_s = bench_webhooks(stack, subset)
        say(f"webhooks: {len(subset) / hook_s:.1f} docs/s", flush=True)
    finally:
        stack.stop()

    hook_chunks = sum(len(d.chunks) for d in subset)
    result = {
        "dataset": str(args.dataset),
        "documents": len(docs),
        "chunks": chunks,
        "duplicate_rate": summary["duplicate_rate"],
        "build_id": build_id,
        "parse_chunk_s": round(parse_s, 2),
        "embedder": {"s": round(embed_s, 2), "chunks_per_s": round(chunks / embed_s, 1)},
        "bulk": {
            "s": round(bulk_s, 2),
            "docs_per_s": round(len(docs) / bulk_s, 1),
            "chunks_per_s": round(chunks / bulk_s, 1),
        },
        "webhooks": {
            "documents": len(subset),
            "chunks": hook_chunks,
            "s": round(hook_s, 2),
            "docs_per_s": round(len(subset) / hook_s, 1),
            "chunks_per_s": round(hook_chunks / hook_s, 1),
        },
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_avg_at_end": os.getloadavg(),
            "threads": "OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1, inference_threads=1",
        },
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    e, bk, wh = result["embedder"], result["bulk"], result["webhooks"]

    def row(name: str, r: dict[str, Any]) -> str:
        share = r["chunks_per_s"] / e["chunks_per_s"]
        return f"| {name} | {r['docs_per_s']} | {r['chunks_per_s']} | {share:.0%} |"

    report = f"""# Ingestion throughput ({args.dataset.name})

{len(docs)} documents → {chunks} chunks (duplicate rate {summary["duplicate_rate"]:.2%}).

| path | documents/s | chunks/s | share of embedder |
|---|---:|---:|---:|
| embedder alone (int8 ONNX MiniLM, batch 32, 1 thread) | - | {e["chunks_per_s"]} | 100 % |
{row("bulk build (parse, chunk, gRPC Upsert: embed + BM25 + dense, seal)", bk)}
{row(f"signed webhooks → Celery worker → live ({wh['documents']} docs)", wh)}

Parsing and chunking alone: {parse_s:.1f} s for the whole corpus. Machine: {os.cpu_count()} CPUs,
load average at the end {os.getloadavg()[0]:.1f}; threads {result["machine"]["threads"]}.
"""
    args.output.write_text(report)
    say(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
