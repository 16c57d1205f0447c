"""Do two sparse backends rank alike? Same BEIR corpus and queries, scored side by side.

The corpus goes into the embedded tantivy index and into an OpenSearch index
(one chunk per document, as ``ragway eval retrieval`` loads it), each query runs
on both at depth 100 with the same access scope, and the report gives, per
backend, nDCG@10 and R@100 from the same metric code as the retrieval harness,
plus how often the two top-10 lists agree: identical, identical up to the order
inside groups of tied scores, or different.

This talks to the indexes directly, not through the retriever's gRPC API: it
measures the engines, with no embedding or fusion in between.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from ragway_tools.evaluation.beir import Dataset
from ragway_tools.evaluation.metrics import DEFAULT_KS, evaluate
from services.retriever.engines.opensearch_sparse import OpenSearchSparseIndex
from services.retriever.engines.tantivy_sparse import TantivySparseIndex
from services.retriever.indexes import SparseIndex
from services.retriever.model import OPEN_END, AccessScope, Candidate, ChunkRecord, Status

TENANT = "eval"
SCOPE = AccessScope(TENANT, frozenset({"eval"}), as_of=1)
# Lucene's BM25 leaves out the (k1 + 1) factor that tantivy keeps (k1 = 1.2).
LUCENE_TO_TANTIVY = 2.2
# Relative gap under which two scores count as a tie (float32 arithmetic in both).
TIE = 1e-5


@dataclass(frozen=True)
class Agreement:
    identical: int = 0
    tie_order: int = 0
    different: int = 0

    @property
    def total(self) -> int:
        return self.identical + self.tie_order + self.different


def records(dataset: Dataset) -> list[ChunkRecord]:
    return [
        ChunkRecord(
            chunk_id=d.doc_id,
            document_id=d.doc_id,
            tenant=TENANT,
            access_groups=("eval",),
            status=Status.CURRENT,
            effective_from=0,
            effective_to=OPEN_END,
            version="",
            url="",
            title=d.title,
            section="",
            text=d.text or d.title,
        )
        for d in dataset.corpus.values()
    ]


def compare_top(a: Sequence[Candidate], b: Sequence[Candidate], *, scale: float = 1.0) -> str:
    """'identical', 'tie-order' (same ids, order differs only among tied scores) or 'different'.

    ``a``'s scores are the reference for ties; ``b``'s are multiplied by ``scale``
    first. A tie group cut by the end of the list may hold different members in
    ``a`` and ``b`` (either engine may pick any of the tied documents for the
    last places); such a group counts as tie-order when its scores agree.
    """
    ids_a = [c.chunk.chunk_id for c in a]
    ids_b = [c.chunk.chunk_id for c in b]
    if ids_a == ids_b:
        return "identical"
    if len(a) != len(b):
        return "different"
    for x, y in zip(a, b, strict=True):
        if not math.isclose(x.score, y.score * scale, rel_tol=1e-4):
            return "different"
    start = 0
    while start < len(a):
        end = start + 1
        while end < len(a) and math.isclose(a[end].score, a[start].score, rel_tol=TIE):
            end += 1
        group_a, group_b = set(ids_a[start:end]), set(ids_b[start:end])
        if group_a != group_b and end < len(a):
            return "different"
        start = end
    return "tie-order"


def _search_all(
    index: SparseIndex,
    dataset: Dataset,
    query_ids: Sequence[str],
    depth: int,
    on_query: Callable[[], None] | None,
) -> dict[str, list[Candidate]]:
    hits: dict[str, list[Candidate]] = {}
    for qid in query_ids:
        hits[qid] = index.search(dataset.queries[qid], SCOPE, depth)
        if on_query is not None:
            on_query()
    return hits


def sparse_congruence(
    dataset: Dataset,
    query_ids: Sequence[str],
    client: OpenSearch,
    *,
    index_name: str,
    depth: int = 100,
    on_query: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Index the corpus in both engines, run every query, return the comparison."""
    chunks = records(dataset)
    with tempfile.TemporaryDirectory(prefix="ragway-congruence-") as tmp:
        tantivy = TantivySparseIndex(Path(tmp) / "sparse")
        opensearch = OpenSearchSparseIndex(client, index_name)
        try:
            tantivy.upsert(chunks)
            opensearch.upsert(chunks)
            results = {
                "tantivy": _search_all(tantivy, dataset, query_ids, depth, on_query),
                "opensearch": _search_all(opensearch, dataset, query_ids, depth, on_query),
            }
        finally:
            tantivy.close()
            client.indices.delete(index=index_name, ignore_unavailable=True)
    qrels = {q: dataset.qrels[q] for q in query_ids}
    metrics = {}
    for name, hits in results.items():
        # Scores from ranks keep each engine's own order exactly.
        run = {q: {c.chunk.chunk_id: float(depth - c.rank + 1) for c in h} for q, h in hits.items()}
        metrics[name] = evaluate(qrels, run, DEFAULT_KS)[0]
    counts = {"identical": 0, "tie-order": 0, "different": 0}
    different: list[str] = []
    for qid in query_ids:
        verdict = compare_top(
            results["tantivy"][qid][:10],
            results["opensearch"][qid][:10],
            scale=LUCENE_TO_TANTIVY,
        )
        counts[verdict] += 1
        if verdict == "different":
            different.append(qid)
    return {
        "dataset": dataset.name,
        "checksum": dataset.checksum,
        "queries": len(query_ids),
        "documents": len(chunks),
        "depth": depth,
        "metrics": metrics,
        "ndcg@10_gap": abs(metrics["tantivy"]["ndcg@10"] - metrics["opensearch"]["ndcg@10"]),
        "top10": counts,
        "different_queries": different,
    }


def render(report: dict[str, Any]) -> str:
    m = report["metrics"]
    t = report["top10"]
    lines = [
        f"# BM25 congruence on {report['dataset']} "
        f"({report['queries']} queries, {report['documents']} documents)",
        "",
        "| engine | nDCG@10 | R@10 | R@100 |",
        "|---|---:|---:|---:|",
        *(
            f"| {name} | {m[name]['ndcg@10']:.4f} | {m[name]['recall@10']:.4f} | "
            f"{m[name]['recall@100']:.4f} |"
            for name in ("tantivy", "opensearch")
        ),
        "",
        f"nDCG@10 gap: {report['ndcg@10_gap']:.4f}. Top-10 lists: {t['identical']} identical, "
        f"{t['tie-order']} equal up to the order of tied scores, {t['different']} different.",
        "",
    ]
    return "\n".join(lines)


def write(report: dict[str, Any], out: Path) -> str:
    out.mkdir(parents=True, exist_ok=True)
    (out / "congruence.json").write_text(json.dumps(report, indent=2))
    text = render(report)
    (out / "congruence.md").write_text(text)
    return text
