"""How create_server wires the retriever: live search apart from ingestion writes.

Regression (issue 16): writes ran on the search thread pool and embedded with the
search path's embedder, so a bulk build or a burst of webhooks queued live searches
behind it. The embedder here holds a lock for a whole batch (the real one locks its
tokenizer and shares one onnxruntime session), and the write blocks inside it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path

import grpc
import pytest

from ragway.embedding import Vectors
from ragway.v1 import retriever_pb2 as pb
from ragway.v1 import retriever_pb2_grpc as pb_grpc
from services.retriever.settings import RetrieverSettings
from tests.unit.services.retriever.fakes import FakeEmbedder, running, serve_in_memory

MARKER = "a bulk write that takes its time"


class LockingEmbedder(FakeEmbedder):
    """One batch at a time; a batch holding MARKER waits for ``release`` inside the lock."""

    entered = threading.Event()
    release = threading.Event()

    def __init__(self, threads: int = 1, spin: bool = True, widening: object = None) -> None:
        super().__init__()
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Vectors:
        with self._lock:
            if any(MARKER in t for t in texts):
                LockingEmbedder.entered.set()
                LockingEmbedder.release.wait(10)
            return super().embed(texts)


async def _search_during_a_stuck_write(settings: RetrieverSettings) -> pb.SearchResponse:
    async with (
        running(settings) as rs,
        grpc.aio.insecure_channel(f"127.0.0.1:{rs.port}") as channel,
    ):
        stub = pb_grpc.RetrieverStub(channel)
        token = settings.service_token_value()
        auth = (("authorization", f"Bearer {token}"),) if token else ()
        chunk = pb.Chunk(
            chunk_id="bulk#1", document_id="bulk", tenant="acme", access_groups=["staff"],
            status=pb.DOCUMENT_STATUS_CURRENT, title="Bulk", text=MARKER,
        )  # fmt: skip
        write = asyncio.ensure_future(stub.Upsert(pb.UpsertRequest(chunks=[chunk]), metadata=auth))
        assert await asyncio.to_thread(LockingEmbedder.entered.wait, 5)
        try:
            reply: pb.SearchResponse = await stub.Search(
                pb.SearchRequest(query="hotel", tenant="acme", access_groups=["staff"]),
                timeout=5,
                metadata=auth,
            )
            return reply
        finally:
            LockingEmbedder.release.set()
            await write


def test_a_search_is_answered_while_a_write_is_stuck_embedding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_in_memory(monkeypatch, LockingEmbedder)
    LockingEmbedder.entered.clear()
    LockingEmbedder.release.clear()
    settings = RetrieverSettings(
        index_dir=tmp_path, retriever_listen="127.0.0.1:0", search_threads=1, unit_vectors=False
    )
    reply = asyncio.run(_search_during_a_stuck_write(settings))
    assert reply.build_id  # answered, not queued behind the write
