"""Dense search through qdrant-client: a Qdrant server, or the client's local mode.

One collection per knowledge build, named vector ``text`` (cosine), the same
point ids (uuid5 of tenant and chunk id) and payload as the embedded qdrant-edge shard,
and the access scope as the query's ``filter``: the engine evaluates it during
the vector search, so a chunk the caller may not see never takes a place in the
top-k. The code is the same for a server (``QdrantClient(url=...)``, gRPC or
HTTP) and for local mode (``QdrantClient(path=...)``); only the client differs,
and the factory (``services.retriever.backends``) builds it. Local mode scans
every point and ignores payload indexes; it serves tests and small setups.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Sequence

from qdrant_client import QdrantClient, models

from services.retriever.engines.edge_dense import VECTOR, point_id
from services.retriever.engines.payload import chunk_from_payload, dense_payload
from services.retriever.model import AccessScope, Candidate, ChunkRecord, Status, by_tenant

_KEYWORD_FIELDS = ("chunk_id", "document_id", "tenant", "access_groups", "status")
_INTEGER_FIELDS = ("effective_from", "effective_to")
_BATCH = 256


class QdrantDenseIndex:
    def __init__(self, client: QdrantClient, collection: str, *, dim: int) -> None:
        self._client = client
        self._collection = collection
        self._lock = threading.Lock()
        if not client.collection_exists(collection):
            client.create_collection(
                collection,
                vectors_config={
                    VECTOR: models.VectorParams(size=dim, distance=models.Distance.COSINE)
                },
            )
            # The filter runs inside the search; indexes keep it cheap on a server.
            # Local mode scans and says so in a warning: same calls, nothing to act on.
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", "Payload indexes have no effect in the local")
                for name in _KEYWORD_FIELDS:
                    client.create_payload_index(collection, name, models.PayloadSchemaType.KEYWORD)
                for name in _INTEGER_FIELDS:
                    client.create_payload_index(collection, name, models.PayloadSchemaType.INTEGER)
        else:
            found = _vector_size(client, collection)
            if found != dim:
                raise ValueError(
                    f"collection {collection} holds {found}-dimensional vectors; "
                    f"the retriever's model has {dim}"
                )

    @property
    def collection(self) -> str:
        return self._collection

    def upsert(self, chunks: Sequence[ChunkRecord], vectors: Sequence[Sequence[float]]) -> None:
        points = _points(chunks, vectors)
        with self._lock:
            for start in range(0, len(points), _BATCH):
                # wait=True: the points are searchable when the call returns.
                self._client.upsert(self._collection, points[start : start + _BATCH], wait=True)

    def replace_documents(
        self,
        documents: Sequence[tuple[str, str]],
        chunks: Sequence[ChunkRecord],
        vectors: Sequence[Sequence[float]],
    ) -> None:
        """Every point of each (tenant, document id) out, ``chunks`` in: one request.

        Qdrant applies a batch's operations in order; a delete and then an upsert
        were two round trips (three with the count), and a search between them
        missed the document for as long as the second took.
        """
        grouped = by_tenant(documents)
        operations: list[models.UpdateOperation] = [
            models.DeleteOperation(delete=models.FilterSelector(filter=_documents(tenant, ids)))
            for tenant, ids in grouped.items()
        ]
        points = _points(chunks, vectors)
        operations += [
            models.UpsertOperation(upsert=models.PointsList(points=points[start : start + _BATCH]))
            for start in range(0, len(points), _BATCH)
        ]
        if operations:
            with self._lock:
                self._client.batch_update_points(self._collection, operations, wait=True)

    def delete_documents(self, tenant: str, document_ids: Sequence[str]) -> int:
        if not document_ids:
            return 0
        selector = _documents(tenant, document_ids)
        with self._lock:
            deleted = self._client.count(self._collection, count_filter=selector, exact=True).count
            self._client.delete(self._collection, models.FilterSelector(filter=selector), wait=True)
        return int(deleted)

    def search(self, vector: Sequence[float], scope: AccessScope, limit: int) -> list[Candidate]:
        if limit <= 0:
            return []
        reply = self._client.query_points(
            self._collection,
            query=[float(x) for x in vector],
            using=VECTOR,
            query_filter=scope_filter(scope),
            limit=limit,
            with_payload=True,
        )
        return [
            Candidate(chunk=chunk_from_payload(p.payload or {}), score=float(p.score), rank=rank)
            for rank, p in enumerate(reply.points, start=1)
        ]

    def count(self) -> int:
        return int(self._client.count(self._collection, exact=True).count)

    def close(self) -> None:
        """The client belongs to the factory that opened this collection; nothing to release."""


def _points(
    chunks: Sequence[ChunkRecord], vectors: Sequence[Sequence[float]]
) -> list[models.PointStruct]:
    """The chunks as points; vectors that do not match them are refused before any write."""
    if len(chunks) != len(vectors):
        raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
    return [
        models.PointStruct(
            id=point_id(c.tenant, c.chunk_id),
            vector={VECTOR: [float(x) for x in v]},
            payload=dense_payload(c),
        )
        for c, v in zip(chunks, vectors, strict=True)
    ]


def _documents(tenant: str, document_ids: Sequence[str]) -> models.Filter:
    return models.Filter(
        must=[
            models.FieldCondition(key="tenant", match=models.MatchValue(value=tenant)),
            models.FieldCondition(key="document_id", match=models.MatchAny(any=list(document_ids))),
        ]
    )


def scope_filter(scope: AccessScope) -> models.Filter:
    return models.Filter(
        must=[
            models.FieldCondition(key="tenant", match=models.MatchValue(value=scope.tenant)),
            models.FieldCondition(
                key="access_groups", match=models.MatchAny(any=sorted(scope.groups))
            ),
            models.FieldCondition(
                key="status", match=models.MatchValue(value=Status.CURRENT.value)
            ),
            models.FieldCondition(key="effective_from", range=models.Range(lte=scope.as_of)),
            models.FieldCondition(key="effective_to", range=models.Range(gt=scope.as_of)),
        ]
    )


def swap_alias(client: QdrantClient, alias: str, collection: str) -> None:
    """Point ``alias`` at ``collection``, in one atomic ``update_collection_aliases`` call."""
    operations: list[models.AliasOperations] = []
    # Deleting an alias that does not exist fails the whole batch on a server.
    if any(a.alias_name == alias for a in client.get_aliases().aliases):
        operations.append(
            models.DeleteAliasOperation(delete_alias=models.DeleteAlias(alias_name=alias))
        )
    operations.append(
        models.CreateAliasOperation(
            create_alias=models.CreateAlias(collection_name=collection, alias_name=alias)
        )
    )
    client.update_collection_aliases(change_aliases_operations=operations)


def _vector_size(client: QdrantClient, collection: str) -> int:
    vectors = client.get_collection(collection).config.params.vectors
    if isinstance(vectors, dict) and VECTOR in vectors:
        return int(vectors[VECTOR].size)
    raise ValueError(f"collection {collection} has no vector named {VECTOR!r}")
