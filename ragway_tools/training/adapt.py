"""Self-supervised adaptation: a reranker learned from one tenant's own documents.

``ragway train reranker --from-folder kb/`` (or ``--from-build live``) has no
judged queries, so it makes them (``pseudo.py``), finds each one's hard
negatives with ragway's own hybrid search *inside the same tenant*, holds a
slice of chunks out for early stopping, and fine-tunes the packaged MiniLM
with the listwise loss of ``reranker.py``.

Tenant isolation is structural: a ``TenantCorpus`` holds one tenant's chunks,
the searches that mine negatives carry that tenant's scope (applied inside
both engines), and a passage enters a training group only when its chunk id is
in that same corpus. A hit of any other tenant is dropped and counted, so a
retriever bug would show in the artifact's record rather than in the weights.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragway.kb import Document
from ragway.v1 import retriever_pb2, retriever_pb2_grpc
from ragway_tools.training import pseudo
from ragway_tools.training.reranker import Group


@dataclass(frozen=True)
class TenantCorpus:
    """One tenant's current chunks, the access groups they carry, and a checksum."""

    tenant: str
    chunks: dict[str, pseudo.SourceChunk]
    access_groups: tuple[str, ...]
    documents: int
    documents_sha256: str


def tenant_corpora(documents: Sequence[Document]) -> dict[str, TenantCorpus]:
    """Current documents split by tenant (deprecated and draft pages are never served)."""
    by_tenant: dict[str, list[Document]] = {}
    for d in documents:
        if d.status == retriever_pb2.DOCUMENT_STATUS_CURRENT:
            by_tenant.setdefault(d.tenant, []).append(d)
    out = {}
    for tenant, docs in sorted(by_tenant.items()):
        digest = hashlib.sha256()
        chunks: dict[str, pseudo.SourceChunk] = {}
        groups: set[str] = set()
        for d in sorted(docs, key=lambda d: d.document_id):
            digest.update(f"{tenant}\x1f{d.document_id}\x1f{d.checksum}\n".encode())
            groups.update(d.groups)
            for c in d.chunks:
                chunks[c.chunk_id] = pseudo.SourceChunk(
                    tenant, d.document_id, c.chunk_id, c.title, c.section, c.text
                )
        out[tenant] = TenantCorpus(
            tenant, chunks, tuple(sorted(groups)), len(docs), digest.hexdigest()
        )
    return out


@dataclass
class Mined:
    """Each pseudo-query's fused candidates (chunk ids of its own tenant, in order)."""

    candidates: dict[str, list[str]] = field(default_factory=dict)
    foreign_hits: int = 0  # hits outside the tenant's corpus, dropped (must stay 0)


def mine(
    stub: retriever_pb2_grpc.RetrieverStub,
    corpus: TenantCorpus,
    queries: Sequence[pseudo.PseudoQuery],
    *,
    depth: int,
    build: str = "",
    on_query: Callable[[], None] | None = None,
) -> Mined:
    """Hybrid search (no rerank) for every query, scoped to the corpus's tenant."""
    mined = Mined()
    for q in queries:
        if q.tenant != corpus.tenant:
            raise ValueError(f"query of tenant {q.tenant!r} mined in {corpus.tenant!r}")
        reply = stub.Search(
            retriever_pb2.SearchRequest(
                query=q.query,
                tenant=corpus.tenant,
                access_groups=list(corpus.access_groups),
                top_k=depth,
                candidate_depth=max(depth, 50),
                mode=retriever_pb2.SEARCH_MODE_HYBRID,
                rerank=retriever_pb2.RERANK_MODE_OFF,
                budget_ms=60_000,
                build=build,
            ),
            timeout=120,
        )
        own = []
        for hit in reply.hits:
            chunk = corpus.chunks.get(hit.chunk_id)
            if chunk is None or chunk.document_id != hit.document_id:
                mined.foreign_hits += 1
                continue
            own.append(hit.chunk_id)
        mined.candidates[q.key] = own
        if on_query is not None:
            on_query()
    return mined


def build_groups(
    corpus: TenantCorpus,
    queries: Sequence[pseudo.PseudoQuery],
    mined: Mined,
    *,
    seed: int = 2026,
    min_negatives: int = 3,
) -> list[Group]:
    """One group per query: its chunk and the tenant's hard negatives, rendered per kind.

    A query whose search found too few other chunks is topped up with random
    chunks of the same tenant: easy negatives, but never another tenant's.
    """
    rng = random.Random(seed)
    ids = sorted(corpus.chunks)
    groups = []
    for q in queries:
        positive = corpus.chunks[q.chunk_id]
        negatives = [
            c
            for c in mined.candidates.get(q.key, [])
            if c != q.chunk_id and corpus.chunks[c].text != positive.text
        ]
        if len(negatives) < min_negatives:
            others = [c for c in ids if c != q.chunk_id and c not in negatives]
            negatives += rng.sample(others, min(len(others), min_negatives - len(negatives)))
        if not negatives:
            continue
        groups.append(
            Group(
                q.key,
                q.query,
                pseudo.render(positive, q.kind),
                tuple(pseudo.render(corpus.chunks[c], q.kind) for c in negatives),
            )
        )
    return groups


@dataclass(frozen=True)
class HeldOutItem:
    query: str
    passages: tuple[str, ...]  # the fused top candidates, in fused order
    positive: int  # index of the query's own chunk in ``passages``


def heldout_items(
    corpus: TenantCorpus, queries: Sequence[pseudo.PseudoQuery], mined: Mined, *, depth: int
) -> list[HeldOutItem]:
    """Held-out queries whose chunk is among the fused top ``depth`` (reranking can matter)."""
    items = []
    for q in queries:
        order = mined.candidates.get(q.key, [])[:depth]
        if q.chunk_id in order and len(order) > 1:
            items.append(
                HeldOutItem(
                    q.query,
                    tuple(pseudo.render(corpus.chunks[c], q.kind) for c in order),
                    order.index(q.chunk_id),
                )
            )
    return items


def fused_mrr(items: Sequence[HeldOutItem]) -> float:
    """MRR of the fused order itself: the bar an adapted reranker has to clear."""
    return sum(1 / (i.positive + 1) for i in items) / max(1, len(items))


def reranked_mrr(
    items: Sequence[HeldOutItem], score_pairs: Callable[[Sequence[tuple[str, str]]], list[float]]
) -> float:
    pairs = [(i.query, p) for i in items for p in i.passages]
    scores = score_pairs(pairs)
    total, at = 0.0, 0
    for item in items:
        mine_ = scores[at : at + len(item.passages)]
        at += len(item.passages)
        positive = mine_[item.positive]
        rank = 1 + sum(1 for s in mine_ if s > positive)
        total += 1 / rank
    return total / max(1, len(items))


def data_record(
    corpus: TenantCorpus,
    source: dict[str, Any],
    train: Sequence[pseudo.PseudoQuery],
    heldout: Sequence[pseudo.PseudoQuery],
    *,
    heldout_fraction: float,
    negatives_depth: int,
    foreign_hits: int,
) -> tuple[str, dict[str, Any]]:
    """(checksum, record) of what one tenant's artifact was trained on."""
    digest = hashlib.sha256(corpus.documents_sha256.encode())
    for q in sorted(train, key=lambda q: q.key):
        digest.update(q.key.encode() + b"\0")
    record = {
        "kind": "self-supervised",
        "source": source,
        "tenant": corpus.tenant,
        "documents": corpus.documents,
        "chunks": len(corpus.chunks),
        "documents_sha256": corpus.documents_sha256,
        "pseudo_queries": {
            "train": len(train),
            "heldout": len(heldout),
            "heldout_fraction": heldout_fraction,
            "by_kind": dict(sorted(Counter(q.kind for q in [*train, *heldout]).items())),
        },
        "negatives": {
            "from": "ragway hybrid search, same tenant, rerank off",
            "depth": negatives_depth,
            "foreign_hits_dropped": foreign_hits,
        },
    }
    return digest.hexdigest(), record
