"""The roles a search backend plays. Embedded engines and servers implement the same ones."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from services.retriever.model import AccessScope, Candidate, ChunkRecord


class SparseIndex(Protocol):
    """Lexical (BM25) search with the access scope evaluated inside the engine."""

    def upsert(self, chunks: Sequence[ChunkRecord]) -> None: ...

    def delete_documents(self, tenant: str, document_ids: Sequence[str]) -> int: ...

    def search(self, query: str, scope: AccessScope, limit: int) -> list[Candidate]: ...

    def count(self) -> int: ...

    def close(self) -> None: ...


class DenseIndex(Protocol):
    """Vector search with the access scope evaluated inside the engine."""

    def upsert(self, chunks: Sequence[ChunkRecord], vectors: Sequence[Sequence[float]]) -> None: ...

    def delete_documents(self, tenant: str, document_ids: Sequence[str]) -> int: ...

    def search(
        self, vector: Sequence[float], scope: AccessScope, limit: int
    ) -> list[Candidate]: ...

    def count(self) -> int: ...

    def close(self) -> None: ...


@runtime_checkable
class ChunkSource(Protocol):
    """A sparse index that can hand back a document's stored chunks.

    Optional: it lets the retriever change a document's access groups or status
    without the caller resending the text. Both sparse backends (tantivy,
    OpenSearch) have it; one without it would answer UpdateAccess with
    UNIMPLEMENTED, which the ingest worker dead-letters.
    """

    def document_chunks(self, tenant: str, document_id: str) -> list[ChunkRecord]: ...


@runtime_checkable
class DocumentReplacer(Protocol):
    """A sparse index that swaps documents' chunks for new ones in one commit.

    Optional: without it the write path deletes and then upserts, and a search in
    between (one commit apart) finds the documents in the dense index only. The
    embedded tantivy engine has it: one commit instead of two per webhook write.
    """

    def replace_documents(
        self, documents: Sequence[tuple[str, str]], chunks: Sequence[ChunkRecord]
    ) -> None: ...


@runtime_checkable
class DenseReplacer(Protocol):
    """A dense index that swaps documents' points for new ones with one flush.

    Optional: without it the write path deletes and then upserts, each persisted on
    its own. Both dense engines have it: the embedded qdrant-edge shard flushes once
    (a flush, the segments written to disk, was about 12 ms of a webhook's write),
    and a Qdrant server takes the swap as one batch request instead of three calls.
    """

    def replace_documents(
        self,
        documents: Sequence[tuple[str, str]],
        chunks: Sequence[ChunkRecord],
        vectors: Sequence[Sequence[float]],
    ) -> None: ...
