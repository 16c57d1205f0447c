"""``ragway eval retrieval``: a BEIR data set through the real retriever, every mode side by side.

The corpus goes into a knowledge build through the retriever's gRPC Upsert (one
chunk per document, batched, with a progress bar); each query then runs through
the same Search RPC the gateway uses, once per mode. Outputs, under the output
folder: ``report.json``, ``report.md`` (the readable table), and one TREC run
file per mode. A private retriever on free ports (its index kept in a folder
keyed by the data set's checksum, so a rerun or another split skips indexing)
is started unless ``--retriever`` names a running one.
"""

from __future__ import annotations

import contextlib
import functools
import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragway.stats import percentile
from ragway.v1 import retriever_pb2, retriever_pb2_grpc
from ragway_tools.channels import service_channel
from ragway_tools.evaluation.beir import Dataset
from ragway_tools.evaluation.metrics import DEFAULT_KS, evaluate

TENANT = "eval"
GROUP = "eval"
BATCH = 64
MODES = {
    "sparse": (retriever_pb2.SEARCH_MODE_SPARSE, retriever_pb2.RERANK_MODE_OFF),
    "dense": (retriever_pb2.SEARCH_MODE_DENSE, retriever_pb2.RERANK_MODE_OFF),
    "hybrid": (retriever_pb2.SEARCH_MODE_HYBRID, retriever_pb2.RERANK_MODE_OFF),
    "hybrid+rerank": (retriever_pb2.SEARCH_MODE_HYBRID, retriever_pb2.RERANK_MODE_ON),
}
HEADLINE = [
    "ndcg@10",
    "mrr@10",
    "recall@1",
    "recall@3",
    "recall@5",
    "recall@10",
    "recall@100",
    "hit@1",
    "hit@5",
    "hit@10",
]


@dataclass
class ModeResult:
    mode: str
    means: dict[str, float]
    per_query: dict[str, dict[str, float]]
    segments: dict[str, dict[str, float]]
    latency_ms: dict[str, list[float]] = field(default_factory=dict)
    degraded: int = 0


def index_corpus(
    stub: retriever_pb2_grpc.RetrieverStub,
    dataset: Dataset,
    on_batch: Callable[[int], None] | None = None,
) -> str:
    """Upsert the corpus (idempotent: chunk id = document id). Returns the build id."""
    docs = list(dataset.corpus.values())
    build_id = ""
    for start in range(0, len(docs), BATCH):
        batch = docs[start : start + BATCH]
        chunks = [
            retriever_pb2.Chunk(
                chunk_id=d.doc_id,
                document_id=d.doc_id,
                tenant=TENANT,
                access_groups=[GROUP],
                status=retriever_pb2.DOCUMENT_STATUS_CURRENT,
                title=d.title,
                text=d.text or d.title,
            )
            for d in batch
        ]
        build_id = stub.Upsert(retriever_pb2.UpsertRequest(chunks=chunks), timeout=600).build_id
        if on_batch is not None:
            on_batch(len(batch))
    return build_id


def run_mode(
    stub: retriever_pb2_grpc.RetrieverStub,
    dataset: Dataset,
    query_ids: Sequence[str],
    mode: str,
    *,
    depth: int = 100,
    on_query: Callable[[], None] | None = None,
) -> tuple[dict[str, dict[str, float]], dict[str, list[float]], int]:
    """The run (query -> doc -> score), per-stage latencies and the degraded count."""
    search_mode, rerank = MODES[mode]
    run: dict[str, dict[str, float]] = {}
    latency: dict[str, list[float]] = {"client": []}
    degraded = 0
    for qid in query_ids:
        request = retriever_pb2.SearchRequest(
            query=dataset.queries[qid],
            tenant=TENANT,
            access_groups=[GROUP],
            top_k=depth,
            candidate_depth=depth,
            mode=search_mode,
            rerank=rerank,
            budget_ms=60_000,
        )
        t0 = time.perf_counter()
        reply = stub.Search(request, timeout=120)
        latency["client"].append((time.perf_counter() - t0) * 1000)
        for timing in reply.timings:
            latency.setdefault(timing.stage, []).append(timing.ms)
        degraded += bool(reply.degraded)
        # Scores from ranks keep the retriever's order exactly (no ties to break).
        run[qid] = {hit.chunk_id: float(depth - i) for i, hit in enumerate(reply.hits)}
        if on_query is not None:
            on_query()
    return run, latency, degraded


def score_mode(
    dataset: Dataset, query_ids: Sequence[str], mode: str, run: dict[str, dict[str, float]]
) -> ModeResult:
    qrels = {q: dataset.qrels[q] for q in query_ids}
    means, per_query = evaluate(qrels, run, DEFAULT_KS)
    segments: dict[str, dict[str, float]] = {}
    for segment in sorted(set(dataset.segments.get(q, "") for q in query_ids) - {""}):
        members = {q: qrels[q] for q in query_ids if dataset.segments.get(q) == segment}
        segments[segment] = evaluate(members, run, DEFAULT_KS)[0]
    return ModeResult(mode, means, per_query, segments)


def write_outputs(
    out: Path,
    dataset: Dataset,
    split: str,
    results: list[ModeResult],
    runs: dict[str, dict[str, dict[str, float]]],
    meta: dict[str, Any],
) -> str:
    out.mkdir(parents=True, exist_ok=True)
    for mode, run in runs.items():
        lines = [
            f"{qid} Q0 {doc} {rank} {score:.6f} ragway-{mode}"
            for qid, scores in run.items()
            for rank, (doc, score) in enumerate(sorted(scores.items(), key=lambda kv: -kv[1]), 1)
        ]
        (out / f"run.{mode.replace('+', '-')}.trec").write_text("\n".join(lines) + "\n")
    report = {
        "dataset": dataset.name,
        "checksum": dataset.checksum,
        "split": split,
        **meta,
        "modes": {
            r.mode: {
                "metrics": r.means,
                "segments": r.segments,
                "degraded_queries": r.degraded,
                "latency_ms": {
                    stage: {
                        "p50": percentile(v, 50),
                        "p95": percentile(v, 95),
                        "p99": percentile(v, 99),
                    }
                    for stage, v in r.latency_ms.items()
                },
            }
            for r in results
        },
    }
    (out / "report.json").write_text(json.dumps(report, indent=2))
    table = render(dataset, split, results, meta)
    (out / "report.md").write_text(table)
    return table


def render(dataset: Dataset, split: str, results: list[ModeResult], meta: dict[str, Any]) -> str:
    head = "| mode | " + " | ".join(HEADLINE) + " |"
    rule = "|---|" + "---:|" * len(HEADLINE)
    rows = [
        f"| {r.mode} | " + " | ".join(f"{r.means[m]:.3f}" for m in HEADLINE) + " |" for r in results
    ]
    lat_head = (
        "| mode | client p50 | client p95 | embed p50 | sparse p50 | dense p50 "
        "| rerank p50 | total p50 |"
    )
    lat_rule = "|---|---:|---:|---:|---:|---:|---:|---:|"
    lat_rows = []
    for r in results:

        def p(stage: str, q: float = 50, r: ModeResult = r) -> str:
            values = r.latency_ms.get(stage)
            return f"{percentile(values, q):.1f}" if values else "-"

        lat_rows.append(
            f"| {r.mode} | {p('client')} | {p('client', 95)} | {p('embed')} | {p('sparse')} | "
            f"{p('dense')} | {p('rerank')} | {p('total')} |"
        )
    seg_lines: list[str] = []
    for r in results:
        for segment, means in r.segments.items():
            seg_lines.append(
                f"| {r.mode} | {segment} | {means['ndcg@10']:.3f} | {means['recall@10']:.3f} |"
            )
    parts = [
        f"# Retrieval on {dataset.name} "
        f"({split}: {meta['queries']} queries, {len(dataset.corpus)} documents)",
        "",
        f"Build `{meta['build_id']}`; embedding {meta['embedding_model']}; "
        f"{meta['threads']}; candidate depth {meta['depth']}.",
        "",
        head,
        rule,
        *rows,
        "",
        "Latency per query in ms (client: the whole Search RPC on loopback; "
        "stages as the retriever reports them)",
        "",
        lat_head,
        lat_rule,
        *lat_rows,
        "",
    ]
    if seg_lines:
        parts += ["| mode | segment | nDCG@10 | R@10 |", "|---|---|---:|---:|", *seg_lines, ""]
    return "\n".join(parts)


def _advancer(progress: Any, description: str, total: int) -> Callable[[int], None]:
    """A callback that moves a progress bar (or does nothing without one)."""
    if progress is None:
        return lambda n: None
    task = progress.add_task(description, total=total)
    return lambda n: progress.advance(task, n)


@contextlib.contextmanager
def indexed_retriever(
    dataset: Dataset,
    *,
    retriever: str | None = None,
    index_home: Path,
    reranker: Path | None = None,
    progress: Any = None,
) -> Iterator[tuple[retriever_pb2_grpc.RetrieverStub, retriever_pb2.DescribeBuildResponse]]:
    """A retriever holding ``dataset``: the one at ``retriever``, or a private one.

    The private retriever keeps its index under ``index_home`` (keyed by the data
    set's checksum by the caller), so a second run skips indexing.
    """
    from ragway_tools.launcher import Stack, StackConfig

    stack: Stack | None = None
    token: str | None = None  # None: the environment's (ragway_tools/channels.py)
    if retriever is None:
        # With answer-unit vectors, as a served build has them: a hybrid search fuses
        # its candidates' best units (docs/retrieval.md#unit-fusion). They cost about
        # twice the chunk embeddings at indexing, once: the index stays under
        # index_home. "index-units": an index of an earlier version, built without
        # them, would be taken as complete and score hybrid without its unit list.
        env = {"RAGWAY_INDEX_DIR": str(index_home / "index-units")}
        if reranker is not None:
            env["RAGWAY_RERANKER_PATH"] = str(reranker.resolve())
        stack = Stack(StackConfig.on_free_ports(index_home, extra_env=env))
        stack.start_service("retriever")
        retriever = stack.config.retriever_addr
        token = stack.config.service_token
    try:
        with service_channel(
            retriever, token, options=[("grpc.max_send_message_length", 32 * 1024 * 1024)]
        ) as ch:
            stub = retriever_pb2_grpc.RetrieverStub(ch)
            build = stub.DescribeBuild(retriever_pb2.DescribeBuildRequest(), timeout=30)
            if build.chunk_count != len(dataset.corpus):
                index_corpus(stub, dataset, _advancer(progress, "indexing", len(dataset.corpus)))
                build = stub.DescribeBuild(retriever_pb2.DescribeBuildRequest(), timeout=30)
            yield stub, build
    finally:
        if stack is not None:
            stack.stop()


def evaluate_dataset(
    dataset: Dataset,
    query_ids: Sequence[str],
    split: str,
    modes: Sequence[str],
    out: Path,
    *,
    retriever: str | None = None,
    index_home: Path | None = None,
    reranker: Path | None = None,
    depth: int = 100,
    progress: Any = None,
) -> str:
    """Index (if needed) and evaluate; return the readable table. ``progress``: rich Progress."""
    import os

    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise ValueError(f"unknown mode(s) {unknown}; choose from {sorted(MODES)}")
    with indexed_retriever(
        dataset,
        retriever=retriever,
        index_home=index_home or out / "retriever",
        reranker=reranker,
        progress=progress,
    ) as (stub, build):
        results, runs = [], {}
        for mode in modes:
            step = _advancer(progress, mode, len(query_ids))
            run, latency, degraded = run_mode(
                stub, dataset, query_ids, mode, depth=depth, on_query=functools.partial(step, 1)
            )
            result = score_mode(dataset, query_ids, mode, run)
            result.latency_ms, result.degraded = latency, degraded
            results.append(result)
            runs[mode] = run
    blas = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    threads = f"OPENBLAS_NUM_THREADS={blas}, one inference thread"
    meta = {
        "build_id": build.build_id,
        "embedding_model": build.embedding_model,
        "reranker": str(reranker) if reranker else None,
        "queries": len(query_ids),
        "depth": depth,
        "threads": threads,
    }
    return write_outputs(out, dataset, split, results, runs, meta)
