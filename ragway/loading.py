"""Sends parsed documents to the retriever (which owns the indexes) over gRPC."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import grpc

from ragway.kb import Document
from ragway.v1 import retriever_pb2, retriever_pb2_grpc

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
) -> LoadReport:
    """Replace each document in the build: delete its old chunks, upsert the new ones.

    Both calls are idempotent (stable chunk ids), so a retried load converges.
    """
    report = LoadReport()
    with grpc.insecure_channel(addr) as channel:
        stub = retriever_pb2_grpc.RetrieverStub(channel)
        for doc in documents:
            stub.Delete(
                retriever_pb2.DeleteRequest(
                    tenant=doc.tenant, document_ids=[doc.document_id], build=build, origin=origin
                ),
                timeout=timeout_s,
            )
            for start in range(0, len(doc.chunks), BATCH):
                reply = stub.Upsert(
                    retriever_pb2.UpsertRequest(
                        chunks=doc.chunks[start : start + BATCH], build=build, origin=origin
                    ),
                    timeout=timeout_s,
                )
                report.build_id = reply.build_id
                report.skipped_chunks += reply.skipped
            report.documents += 1
            report.chunks += len(doc.chunks)
            if on_document is not None:
                on_document(doc)
    return report
