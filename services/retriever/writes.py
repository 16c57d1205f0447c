"""The write path of one build: upsert, delete and access changes. No gRPC here.

Who writes decides what is skipped (docs/ingestion.md):

    Origin.PLAIN        writes everything (kb load, tests)
    Origin.BULK         skips documents an incremental write touched in this build,
                        so a bulk load never undoes a webhook update
    Origin.INCREMENTAL  writes everything and marks its documents touched

Embedding is the slow part, so ``upsert`` embeds outside the build's write lock,
then decides again under it (an incremental write may have landed meanwhile)
and keeps only the vectors of the chunks it still writes. The functions block:
the servicer runs them in its thread pool.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

import numpy as np

from ragway.embedding import Embedder, Vectors
from ragway.unit_vectors import chunk_unit_texts, pack_chunks
from services.retriever.catalog import Build
from services.retriever.indexes import ChunkSource, DenseReplacer, DocumentReplacer
from services.retriever.model import ChunkRecord, Status, by_tenant


class Origin(StrEnum):
    PLAIN = "plain"
    BULK = "bulk"
    INCREMENTAL = "incremental"


class ReadBackUnsupportedError(RuntimeError):
    """The build's sparse backend cannot hand back stored chunks (no ``ChunkSource``)."""


@dataclass(frozen=True, slots=True)
class Upserted:
    written: int  # chunks written
    skipped: int  # chunks a bulk write left alone


@dataclass(frozen=True, slots=True)
class Deleted:
    chunks: int  # chunks removed
    skipped_documents: int  # documents a bulk delete left alone


def _skip_touched(build: Build, records: list[ChunkRecord], origin: Origin) -> list[ChunkRecord]:
    if origin is not Origin.BULK:
        return records
    touched = build.touched  # once: with a shared catalog each read asks Redis
    return [r for r in records if (r.tenant, r.document_id) not in touched]


def embed_records(
    embedder: Embedder, records: Sequence[ChunkRecord], *, unit_vectors: bool = True
) -> tuple[list[ChunkRecord], Vectors]:
    """Each record's dense vector, and the records with their unit vectors when asked.

    Chunk texts and unit texts go to the embedder in one call: it sorts them all
    by token count and batches across chunks and documents, so a 64-chunk write
    runs full batches of like lengths instead of two half-padded sets.
    """
    texts = [r.embedding_text for r in records]
    per_chunk = (
        chunk_unit_texts([(r.title, r.section, r.text) for r in records]) if unit_vectors else []
    )
    flat = texts + [t for unit in per_chunk for t in unit]
    out = embedder.embed(flat) if flat else np.zeros((0, embedder.dim), dtype=np.float32)
    if not unit_vectors:
        return list(records), out
    blobs = pack_chunks(embedder.model_id, per_chunk, out[len(texts) :])
    done = [replace(r, unit_vectors=b) for r, b in zip(records, blobs, strict=True)]
    return done, out[: len(texts)]


def upsert(
    build: Build,
    embedder: Embedder,
    records: Sequence[ChunkRecord],
    origin: Origin,
    *,
    unit_vectors: bool = True,
    replace_documents: bool = False,
) -> Upserted:
    """Write ``records``; with ``replace_documents``, first remove the other chunks of
    their documents, under the same lock and after the embedding, so that searches
    find the old version until the new one is in (a Delete call first left them
    without the document for as long as the embedding took)."""
    todo = _skip_touched(build, list(records), origin)
    todo, vectors = embed_records(embedder, todo, unit_vectors=unit_vectors)
    with build.write_lock:
        keep = _skip_touched(build, todo, origin)  # an incremental write may have landed meanwhile
        if len(keep) != len(todo):
            kept = {(r.tenant, r.chunk_id) for r in keep}  # chunk ids repeat across tenants
            vectors = vectors[[i for i, r in enumerate(todo) if (r.tenant, r.chunk_id) in kept]]
        if replace_documents:
            _replace(build, keep, vectors)
        elif keep:
            build.sparse.upsert(keep)
            build.dense.upsert(keep, vectors.tolist())
        if origin is Origin.INCREMENTAL:
            build.mark_touched((r.tenant, r.document_id) for r in keep)
    return Upserted(written=len(keep), skipped=len(records) - len(keep))


def _replace(build: Build, records: list[ChunkRecord], vectors: Vectors) -> None:
    """The documents of ``records`` become exactly ``records`` (under the write lock)."""
    documents = list(dict.fromkeys((r.tenant, r.document_id) for r in records))
    grouped = by_tenant(documents)
    if isinstance(build.dense, DenseReplacer):
        build.dense.replace_documents(documents, records, vectors.tolist())  # one flush
    else:
        for tenant, ids in grouped.items():
            build.dense.delete_documents(tenant, ids)
        if records:
            build.dense.upsert(records, vectors.tolist())
    if isinstance(build.sparse, DocumentReplacer):
        build.sparse.replace_documents(documents, records)  # one commit
        return
    for tenant, ids in grouped.items():
        build.sparse.delete_documents(tenant, ids)
    if records:
        build.sparse.upsert(records)


def delete(build: Build, tenant: str, document_ids: Sequence[str], origin: Origin) -> Deleted:
    with build.write_lock:
        ids = list(document_ids)
        if origin is Origin.BULK:
            touched = build.touched
            ids = [d for d in ids if (tenant, d) not in touched]
        dense = build.dense.delete_documents(tenant, ids) if ids else 0
        sparse = build.sparse.delete_documents(tenant, ids) if ids else 0
        if origin is Origin.INCREMENTAL:
            build.mark_touched((tenant, d) for d in ids)
    return Deleted(chunks=max(dense, sparse), skipped_documents=len(document_ids) - len(ids))


def can_read_back(build: Build) -> bool:
    """Whether ``update_access`` works on this build's sparse backend."""
    return isinstance(build.sparse, ChunkSource)


def update_access(
    build: Build,
    embedder: Embedder,
    tenant: str,
    document_id: str,
    *,
    groups: Sequence[str],
    status: Status | None,
    origin: Origin,
    unit_vectors: bool = True,
) -> int:
    """Rewrite a document's stored chunks with new groups and/or status; returns how many.

    Empty ``groups`` or ``None`` status keeps each chunk's own. The chunks are
    read back from the sparse index, so the caller need not resend the text.
    """
    source = build.sparse
    if not isinstance(source, ChunkSource):
        raise ReadBackUnsupportedError(
            "this sparse backend cannot read chunks back; resend the document instead"
        )
    wanted = tuple(dict.fromkeys(groups))
    with build.write_lock:
        old = source.document_chunks(tenant, document_id)
        new = [
            replace(c, access_groups=wanted or c.access_groups, status=status or c.status)
            for c in old
        ]
        if new:
            # Unit vectors again: the sparse index they were read back from keeps none.
            new, vectors = embed_records(embedder, new, unit_vectors=unit_vectors)
            build.sparse.upsert(new)
            build.dense.upsert(new, vectors.tolist())
        if origin is Origin.INCREMENTAL:
            build.mark_touched([(tenant, document_id)])
        return len(new)
