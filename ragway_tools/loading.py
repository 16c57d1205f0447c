"""Sends parsed documents to the retriever (which owns the indexes) over gRPC."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from ragway.kb import Document
from ragway.v1 import retriever_pb2, retriever_pb2_grpc
from ragway_tools.channels import service_channel

BATCH = 64


@dataclass
class LoadReport:
    documents: int = 0
    chunks: int = 0
    build_id: str = ""
    skipped_chunks: int = 0  # BULK loads: chunks of documents a webhook changed meanwhile
    errors: list[str] = field(default_factory=list)


def load_documents(
    addr: str,
    documents: Sequence[Document],
    *,
    build: str = "",
    origin: retriever_pb2.WriteOrigin.ValueType = retriever_pb2.WRITE_ORIGIN_UNSPECIFIED,
    on_document: Callable[[Document], None] | None = None,
    timeout_s: float = 120.0,
    token: str | None = None,
) -> LoadReport:
    """Replace each document in the build with its new chunks.

    Every call is idempotent (stable chunk ids), so a retried load converges.
    ``token``: the service token (None: the environment's, ragway_tools/channels.py).
    """
    report = LoadReport()
    with service_channel(addr, token) as ch:
        stub = retriever_pb2_grpc.RetrieverStub(ch)
        for batch in _batches(documents):
            # A document without chunks has nothing to replace its old ones with.
            empty = [d for d in batch if not d.chunks]
            for tenant in dict.fromkeys(d.tenant for d in empty):
                stub.Delete(
                    retriever_pb2.DeleteRequest(
                        tenant=tenant,
                        document_ids=[d.document_id for d in empty if d.tenant == tenant],
                        build=build,
                        origin=origin,
                    ),
                    timeout=timeout_s,
                )
            # One Upsert for the whole batch: the retriever embeds its chunks together
            # (batching is most of the embedder's speed) and replaces the old versions
            # in the same write, so a load into live never leaves a document missing
            # while it embeds. Only the first call replaces: a batch of more than
            # BATCH chunks is one document, and its later slices add to it.
            chunks = [c for d in batch for c in d.chunks]
            for start in range(0, len(chunks), BATCH):
                reply = stub.Upsert(
                    retriever_pb2.UpsertRequest(
                        chunks=chunks[start : start + BATCH],
                        build=build,
                        origin=origin,
                        replace_documents=start == 0,
                    ),
                    timeout=timeout_s,
                )
                report.build_id = reply.build_id
                report.skipped_chunks += reply.skipped
            for doc in batch:
                report.documents += 1
                report.chunks += len(doc.chunks)
                if on_document is not None:
                    on_document(doc)
    return report


def _batches(documents: Sequence[Document]) -> Iterator[list[Document]]:
    """Consecutive documents holding about BATCH chunks together (a big one alone)."""
    batch: list[Document] = []
    size = 0
    for doc in documents:
        if batch and size + len(doc.chunks) > BATCH:
            yield batch
            batch, size = [], 0
        batch.append(doc)
        size += len(doc.chunks)
    if batch:
        yield batch
