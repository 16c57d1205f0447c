"""Embedded dense search on the Qdrant engine (qdrant-edge): one shard per build.

The access scope is a Qdrant filter on indexed payload fields, evaluated by the
engine during the vector search: a chunk the caller may not see never takes a
place in the top-k.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from pathlib import Path

import qdrant_edge as qe

from services.retriever.engines.payload import chunk_from_payload, dense_payload
from services.retriever.model import AccessScope, Candidate, ChunkRecord, Status, by_tenant

VECTOR = "text"
_ID_NAMESPACE = uuid.UUID("6f1d2c1e-8a53-4c1b-9b1e-7a0d5f3c2e10")
_KEYWORD_FIELDS = ("chunk_id", "document_id", "tenant", "access_groups", "status")
_INTEGER_FIELDS = ("effective_from", "effective_to")


def point_id(tenant: str, chunk_id: str) -> str:
    """Qdrant ids are UUIDs or integers; chunk ids are strings. uuid5 is stable.

    The tenant is part of it: chunk ids ("document#section") may repeat across
    tenants, and one tenant's upsert must never replace another's point.
    """
    return str(uuid.uuid5(_ID_NAMESPACE, f"{tenant}\x1f{chunk_id}"))


class EdgeDenseIndex:
    def __init__(self, path: Path, *, dim: int) -> None:
        config = qe.EdgeConfig(
            vectors={VECTOR: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine)}
        )
        if path.is_dir() and any(path.iterdir()):
            self._shard = qe.EdgeShard.load(str(path))
        else:
            path.mkdir(parents=True, exist_ok=True)
            self._shard = qe.EdgeShard.create(str(path), config)
            for name in _KEYWORD_FIELDS:
                self._shard.update(
                    qe.UpdateOperation.create_field_index(name, qe.PayloadSchemaType.Keyword)
                )
            for name in _INTEGER_FIELDS:
                self._shard.update(
                    qe.UpdateOperation.create_field_index(name, qe.PayloadSchemaType.Integer)
                )
        self._lock = threading.Lock()

    def upsert(self, chunks: Sequence[ChunkRecord], vectors: Sequence[Sequence[float]]) -> None:
        points = _points(chunks, vectors)
        with self._lock:
            self._shard.update(qe.UpdateOperation.upsert_points(points))
            self._shard.flush()

    def replace_documents(
        self,
        documents: Sequence[tuple[str, str]],
        chunks: Sequence[ChunkRecord],
        vectors: Sequence[Sequence[float]],
    ) -> None:
        """Every point of each (tenant, document id) out, ``chunks`` in, one flush.

        Each update is applied (and logged) as it is made; the flush writes the
        segments to disk, so one after both keeps the write as durable as before
        at half the cost. The shard has no transactions: a search can still land
        between the delete and the upsert, but that gap is now an in-memory
        update long rather than a flush (sparse search finds the document meanwhile).
        """
        grouped = by_tenant(documents)
        points = _points(chunks, vectors)
        with self._lock:
            for tenant, document_ids in grouped.items():
                self._shard.update(
                    qe.UpdateOperation.delete_points_by_filter(_documents(tenant, document_ids))
                )
            if points:
                self._shard.update(qe.UpdateOperation.upsert_points(points))
            self._shard.flush()

    def delete_documents(self, tenant: str, document_ids: Sequence[str]) -> int:
        if not document_ids:
            return 0
        selector = _documents(tenant, document_ids)
        with self._lock:
            deleted = int(self._shard.count(qe.CountRequest(exact=True, filter=selector)))
            self._shard.update(qe.UpdateOperation.delete_points_by_filter(selector))
            self._shard.flush()
        return deleted

    def search(self, vector: Sequence[float], scope: AccessScope, limit: int) -> list[Candidate]:
        if limit <= 0:
            return []
        request = qe.QueryRequest(
            limit=limit,
            query=qe.Query.Nearest([float(x) for x in vector], using=VECTOR),
            filter=scope_filter(scope),
            with_payload=True,
        )
        points = self._shard.query(request)
        return [
            Candidate(chunk=chunk_from_payload(p.payload or {}), score=float(p.score), rank=rank)
            for rank, p in enumerate(points, start=1)
        ]

    def count(self) -> int:
        return int(self._shard.count(qe.CountRequest(exact=True)))

    def close(self) -> None:
        with self._lock:
            self._shard.flush()
            self._shard.close()


def _points(chunks: Sequence[ChunkRecord], vectors: Sequence[Sequence[float]]) -> list[qe.Point]:
    """The chunks as points; vectors that do not match them are refused before any write."""
    if len(chunks) != len(vectors):
        raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
    return [
        qe.Point(point_id(c.tenant, c.chunk_id), {VECTOR: [float(x) for x in v]}, dense_payload(c))
        for c, v in zip(chunks, vectors, strict=True)
    ]


def _documents(tenant: str, document_ids: Sequence[str]) -> qe.Filter:
    return qe.Filter(
        must=[
            qe.FieldCondition("tenant", match=qe.MatchValue(tenant)),
            qe.FieldCondition("document_id", match=qe.MatchAny(list(document_ids))),
        ]
    )


def scope_filter(scope: AccessScope) -> qe.Filter:
    return qe.Filter(
        must=[
            qe.FieldCondition("tenant", match=qe.MatchValue(scope.tenant)),
            qe.FieldCondition("access_groups", match=qe.MatchAny(sorted(scope.groups))),
            qe.FieldCondition("status", match=qe.MatchValue(Status.CURRENT.value)),
            qe.FieldCondition("effective_from", range=qe.RangeFloat(lte=scope.as_of)),
            qe.FieldCondition("effective_to", range=qe.RangeFloat(gt=scope.as_of)),
        ]
    )
