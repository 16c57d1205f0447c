"""Hard negatives mined from ragway's own retriever.

A cross-encoder learns most from passages that the first stage ranks high but
that are not relevant: those are exactly the mistakes it is there to fix. So the
negatives come from the same hybrid search (BM25 ∥ dense, RRF) the retriever
serves, through its gRPC API, with reranking off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragway.v1 import retriever_pb2, retriever_pb2_grpc
from ragway_tools.evaluation.beir import Dataset
from ragway_tools.evaluation.retrieval import GROUP, TENANT


def candidates(
    stub: retriever_pb2_grpc.RetrieverStub,
    dataset: Dataset,
    query_ids: Sequence[str],
    *,
    depth: int,
    on_query: Callable[[], None] | None = None,
) -> dict[str, list[tuple[str, float]]]:
    """The fused candidate list (id, RRF score) per query, in the retriever's order."""
    out: dict[str, list[tuple[str, float]]] = {}
    for qid in query_ids:
        reply = stub.Search(
            retriever_pb2.SearchRequest(
                query=dataset.queries[qid],
                tenant=TENANT,
                access_groups=[GROUP],
                top_k=depth,
                candidate_depth=max(depth, 50),
                mode=retriever_pb2.SEARCH_MODE_HYBRID,
                rerank=retriever_pb2.RERANK_MODE_OFF,
                budget_ms=60_000,
            ),
            timeout=120,
        )
        out[qid] = [(h.chunk_id, h.scores.fused) for h in reply.hits]
        if on_query is not None:
            on_query()
    return out


def mine(
    stub: retriever_pb2_grpc.RetrieverStub,
    dataset: Dataset,
    query_ids: Sequence[str],
    *,
    depth: int = 30,
    on_query: Callable[[], None] | None = None,
) -> dict[str, list[str]]:
    """For each query: the hybrid top-``depth`` document ids that are not judged relevant."""
    found = candidates(stub, dataset, query_ids, depth=depth, on_query=on_query)
    negatives: dict[str, list[str]] = {}
    for qid, hits in found.items():
        relevant = {d for d, grade in dataset.qrels.get(qid, {}).items() if grade > 0}
        negatives[qid] = [doc for doc, _ in hits if doc not in relevant]
    return negatives
