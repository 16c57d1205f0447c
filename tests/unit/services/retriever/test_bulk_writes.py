"""Bulk loads embed on a session of their own, sized by bulk_inference_threads (issue 19).

Query-time embedding keeps its session and inference_threads and live (webhook)
writes keep write_inference_threads; only Upserts with origin BULK take the bulk
session. A bulk load embeds many documents' chunks and their unit texts per call.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import grpc
import pytest

from ragway.embedding import Vectors, Widening
from ragway.kb import Defaults, Document, build_document
from ragway.v1 import retriever_pb2 as pb
from ragway.v1 import retriever_pb2_grpc as pb_grpc
from ragway_tools.loading import load_documents
from services.retriever.settings import RetrieverSettings
from tests.unit.services.retriever.fakes import FakeEmbedder, MemoryDense, running, serve_in_memory


class ThreadedEmbedder(FakeEmbedder):
    """Records the thread count it was made with and each call's texts."""

    made: ClassVar[list[ThreadedEmbedder]] = []

    def __init__(self, threads: int = 1, spin: bool = True, widening: object = None) -> None:
        super().__init__()
        self.threads = threads
        self.spin = spin
        self.widening = widening
        self.calls: list[list[str]] = []
        ThreadedEmbedder.made.append(self)

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        return super().embed(texts)


def test_bulk_threads_default_to_every_cpu_and_the_setting_wins() -> None:
    assert RetrieverSettings().bulk_threads() == (os.cpu_count() or 1)
    assert RetrieverSettings(bulk_inference_threads=3).bulk_threads() == 3


def test_bulk_threads_are_bounded() -> None:
    with pytest.raises(ValueError, match="bulk_inference_threads"):
        RetrieverSettings(bulk_inference_threads=0)


def _documents(n: int) -> list[Document]:
    text = "\n\n".join(
        f"Paragraph {p} of this document says something about topic {p}. It has two sentences."
        for p in range(40)
    )
    return [
        build_document(
            "text",
            text.encode(),
            {"document_id": f"doc-{i}", "title": f"Document {i}"},
            Defaults(tenant="acme", groups=("staff",)),
        )
        for i in range(n)
    ]


async def _load(settings: RetrieverSettings, docs: list[Document]) -> None:
    async with running(settings) as rs:
        addr = f"127.0.0.1:{rs.port}"
        token = settings.service_token_value()
        await asyncio.to_thread(
            load_documents, addr, docs, origin=pb.WRITE_ORIGIN_BULK, token=token
        )
        async with grpc.aio.insecure_channel(addr) as channel:
            stub = pb_grpc.RetrieverStub(channel)
            auth = (("authorization", f"Bearer {token}"),) if token else ()
            chunk = pb.Chunk(
                chunk_id="hook#1", document_id="hook", tenant="acme", access_groups=["staff"],
                status=pb.DOCUMENT_STATUS_CURRENT, title="Hook", text="A webhook's document.",
            )  # fmt: skip
            await stub.Upsert(
                pb.UpsertRequest(chunks=[chunk], origin=pb.WRITE_ORIGIN_INCREMENTAL),
                metadata=auth,
            )


def test_bulk_upserts_embed_on_the_bulk_session_many_documents_per_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_in_memory(monkeypatch, ThreadedEmbedder)
    ThreadedEmbedder.made.clear()
    settings = RetrieverSettings(
        index_dir=tmp_path,
        retriever_listen="127.0.0.1:0",
        inference_threads=1,
        write_inference_threads=2,
        bulk_inference_threads=5,
    )
    docs = _documents(6)
    asyncio.run(_load(settings, docs))

    by_threads = {e.threads: e for e in ThreadedEmbedder.made}
    assert sorted(by_threads) == [1, 2, 5]  # search, live writes, bulk: one session each
    bulk, live, search = by_threads[5], by_threads[2], by_threads[1]
    assert search.calls == [["warm-up"]]  # a load never embeds on the query session
    assert (search.spin, live.spin, bulk.spin) == (True, True, False)
    # Only live writes borrow the bulk session while searches are quiet.
    assert isinstance(live.widening, Widening) and search.widening is bulk.widening is None
    assert live.calls == [["Hook\nA webhook's document.", "Hook: A webhook's document."]]
    assert bulk.calls and not any(t.startswith("Hook") for c in bulk.calls for t in c)
    # One call carries several documents' chunks, and their unit texts with them.
    first = bulk.calls[0]
    titled = {f"Document {i}" for i in range(6) if any(f"Document {i}\n" in t for t in first)}
    assert len(titled) > 1
    assert any(t.startswith("Document 0: ") for t in first)  # a unit text (title: sentence)


def _document(doc_id: str, paragraphs: int) -> Document:
    text = "\n\n".join(
        f"Paragraph {p} of {doc_id} covers topic {p} in enough words to fill its own chunk "
        + "with detail " * 30
        for p in range(paragraphs)
    )
    meta = {"document_id": doc_id, "title": doc_id}
    return build_document("text", text.encode(), meta, Defaults(tenant="acme", groups=("staff",)))


async def _load_twice(
    settings: RetrieverSettings, first: list[Document], second: list[Document]
) -> dict[str, int]:
    """Chunks per document in live after loading ``first`` and then ``second``."""
    async with running(settings) as rs:
        addr, token = f"127.0.0.1:{rs.port}", settings.service_token_value()
        for docs in (first, second):
            await asyncio.to_thread(load_documents, addr, docs, token=token)
        dense = rs.catalog.open("live").dense
    assert isinstance(dense, MemoryDense)
    return dict(Counter(c.document_id for c in dense.chunks.values()))


def test_a_load_replaces_each_document_and_a_long_one_keeps_every_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # load_documents sends no Delete first: the Upsert replaces (replace_documents).
    serve_in_memory(monkeypatch, ThreadedEmbedder)
    settings = RetrieverSettings(
        index_dir=tmp_path, retriever_listen="127.0.0.1:0", unit_vectors=False
    )
    long = _document("long", 140)
    assert len(long.chunks) > 64  # sent in two Upserts; only the first replaces
    first = [_document("shrinks", 6), _document("stays", 2)]
    second = [_document("shrinks", 2), long]
    counts = asyncio.run(_load_twice(settings, first, second))
    assert counts == {
        "shrinks": len(second[0].chunks),
        "stays": len(first[1].chunks),
        "long": len(long.chunks),
    }
    assert len(first[0].chunks) > len(second[0].chunks)
