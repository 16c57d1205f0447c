"""What a live write on every core costs the searches beside it, and what it gains.

    .venv/bin/python scripts/bench_live_writes.py [--docs 120] [--output var/bench/live-writes]

One retriever, three phases, each on a fresh retriever process over the same live build:

1. searches alone     SciFact queries one at a time with a random pause of 0.2-2.5 s
                      between them (a help centre's traffic, not a saturation test);
2. narrow writes      the same searches while a writer replaces documents in live one
                      after another, as the ingest worker does (Upsert, INCREMENTAL,
                      replace_documents), with RAGWAY_WRITE_WIDEN_WHEN_QUIET=false:
                      every write on its one thread;
3. widened writes     the same with the default: a write's batches take the bulk
                      session (every CPU) while no search ran for RAGWAY_WRITE_QUIET_S.

It reports each phase's search latency (p50, p95, max, from the client) and the
writes' documents per second, and writes <output>/live-writes.md and .json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ragway.kb import Defaults, Document, build_document
from ragway.v1 import retriever_pb2 as pb
from ragway.v1 import retriever_pb2_grpc as pb_grpc
from ragway_tools.channels import service_channel
from ragway_tools.evaluation.beir import load
from ragway_tools.launcher import Stack, StackConfig
from ragway_tools.loading import load_documents

DEFAULTS = Defaults(tenant="bench", groups=("public",))


def documents(dataset: Path, n: int) -> list[Document]:
    data = load(dataset)
    docs = []
    for d in list(data.corpus.values())[:n]:
        meta = {"document_id": d.doc_id, "title": d.title}
        docs.append(build_document("text", d.text.encode(), meta, DEFAULTS, fallback_id=d.doc_id))
    return docs


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def phase(
    addr: str,
    token: str,
    queries: list[str],
    docs: list[Document] | None,
    seconds: float,
    seed: int,
) -> dict[str, Any]:
    """Searches for ``seconds`` (and writes of ``docs`` in a loop, when given)."""
    stop = threading.Event()
    written: list[float] = []

    def writer(docs: list[Document]) -> None:
        with service_channel(addr, token) as channel:
            stub = pb_grpc.RetrieverStub(channel)
            for i, doc in enumerate(itertools.cycle(docs)):
                if stop.is_set():
                    return
                # A new version each time: the embedding cache would otherwise answer.
                chunks = []
                for c in doc.chunks:
                    revised = pb.Chunk()
                    revised.CopyFrom(c)
                    revised.text = f"{c.text} (revision {i})"
                    chunks.append(revised)
                stub.Upsert(
                    pb.UpsertRequest(
                        chunks=chunks,
                        origin=pb.WRITE_ORIGIN_INCREMENTAL,
                        replace_documents=True,
                    ),
                    timeout=60,
                )
                written.append(time.perf_counter())

    rng = random.Random(seed)
    latencies: list[float] = []
    thread = threading.Thread(target=writer, args=(docs,)) if docs else None
    started = time.perf_counter()
    if thread is not None:
        thread.start()
    with service_channel(addr, token) as channel:
        stub = pb_grpc.RetrieverStub(channel)
        while time.perf_counter() - started < seconds:
            time.sleep(rng.uniform(0.2, 2.5))
            query = rng.choice(queries)
            t0 = time.perf_counter()
            stub.Search(
                pb.SearchRequest(query=query, tenant="bench", access_groups=["public"], top_k=10),
                timeout=30,
            )
            latencies.append((time.perf_counter() - t0) * 1000)
    stop.set()
    if thread is not None:
        thread.join()
    elapsed = time.perf_counter() - started
    return {
        "searches": len(latencies),
        "search_ms": {
            "p50": round(statistics.median(latencies), 1),
            "p95": round(percentile(latencies, 0.95), 1),
            "max": round(max(latencies), 1),
        },
        "writes": len(written),
        "documents_per_s": round(len(written) / elapsed, 2) if docs else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--dataset", type=Path, default=Path("../shared/datasets/scifact"))
    parser.add_argument("--docs", type=int, default=120)
    parser.add_argument("--seconds", type=float, default=60.0, help="each phase")
    parser.add_argument("--output", type=Path, default=Path("var/bench/live-writes"))
    parser.add_argument("--data-dir", type=Path, default=Path("var/bench/live-writes-stack"))
    args = parser.parse_args()

    docs = documents(args.dataset, args.docs)
    queries = list(load(args.dataset).queries.values())[:200]
    shutil.rmtree(args.data_dir, ignore_errors=True)
    stack = Stack(StackConfig.on_free_ports(args.data_dir))
    results: dict[str, Any] = {}
    load_before = os.getloadavg()
    try:
        stack.preflight()
        stack.logs_dir.mkdir(parents=True, exist_ok=True)
        stack.start_redis()
        addr = stack.start_retriever()
        token = stack.config.service_token
        load_documents(addr, docs, token=token)  # the live build the searches read
        phases = [
            ("searches alone", None, "true"),
            ("narrow writes", docs, "false"),
            ("widened writes", docs, "true"),
        ]
        for n, (name, writes, widen) in enumerate(phases):
            stack.kill("retriever")
            addr = stack.start_retriever(env={"RAGWAY_WRITE_WIDEN_WHEN_QUIET": widen})
            results[name] = phase(addr, token, queries, writes, args.seconds, seed=n)
            sys.stdout.write(f"{name}: {results[name]}\n")
            sys.stdout.flush()
    finally:
        stack.stop()
    load_after = os.getloadavg()
    report = {
        "docs": len(docs),
        "seconds_per_phase": args.seconds,
        "phases": results,
        "machine": {
            "cpus": os.cpu_count(),
            "load_avg_before": [round(x, 2) for x in load_before],
            "load_avg_after": [round(x, 2) for x in load_after],
        },
    }
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "live-writes.json").write_text(json.dumps(report, indent=2) + "\n")
    rows = "\n".join(
        f"| {name} | {r['searches']} | {r['search_ms']['p50']} | {r['search_ms']['p95']} "
        f"| {r['search_ms']['max']} | {r['documents_per_s'] or '-'} |"
        for name, r in results.items()
    )
    (args.output / "live-writes.md").write_text(
        f"""# Live writes beside searches

{args.docs} SciFact documents, {args.seconds:.0f} s a phase.

| phase | searches | search p50 ms | p95 ms | max ms | writes: documents/s |
|---|---:|---:|---:|---:|---:|
{rows}

Searches one at a time, 0.2-2.5 s apart; writes back to back (Upsert INCREMENTAL,
replace_documents). Machine: {os.cpu_count()} CPUs; load average {load_before[0]:.1f}
before, {load_after[0]:.1f} after.
"""
    )
    sys.stdout.write((args.output / "live-writes.md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
