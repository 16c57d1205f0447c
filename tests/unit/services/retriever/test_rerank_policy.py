"""Which reranker a search gets, when it is skipped, and how the response reports it.

A real grpc.aio server on port 0 with in-memory engines and a deterministic
fake reranker (it prefers longer passages), so the ordering it imposes is known.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import pytest

from ragway.metrics import REGISTRY
from ragway.v1 import retriever_pb2 as pb
from ragway.v1 import retriever_pb2_grpc as pb_grpc
from services.retriever.catalog import BuildCatalog
from services.retriever.search import Hit, HybridSearcher, blend, fusion_margin
from services.retriever.servicer import RetrieverServicer
from services.retriever.settings import RetrieverSettings
from tests.unit.services.retriever.fakes import DIM, FakeEmbedder, MemoryEngines


class LengthReranker:
    def __init__(self, model_id: str) -> None:
        self.model_id = model_id
        self.calls = 0

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        self.calls += 1
        return [float(len(p)) for p in passages]


SHARED = LengthReranker("reranker-shared")
OWN = LengthReranker("reranker-acme-20261201-000000-abcdef12")


def chunk(cid: str, text: str, tenant: str) -> pb.Chunk:
    return pb.Chunk(
        chunk_id=cid,
        document_id=cid.split("#")[0],
        tenant=tenant,
        access_groups=["staff"],
        status=pb.DOCUMENT_STATUS_CURRENT,
        title="Travel",
        text=text,
    )


async def serve(tmp_path: Path, *, skip_margin: float | None) -> AsyncIterator[Any]:
    executor = ThreadPoolExecutor(2)
    catalog = BuildCatalog(tmp_path, embedding_model="fake", dim=DIM, engines=MemoryEngines())
    catalog.ensure_live("b-first")
    embedder = FakeEmbedder()
    searcher = HybridSearcher(
        embedder, executor, reranker=SHARED, tenant_rerankers={"acme": OWN},
        rerank_depth=5, skip_margin=skip_margin,
    )  # fmt: skip
    servicer = RetrieverServicer(RetrieverSettings(), catalog, searcher, embedder, executor)
    server = grpc.aio.server()
    pb_grpc.add_RetrieverServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.RetrieverStub(channel)
            for tenant in ("acme", "globex"):
                await stub.Upsert(
                    pb.UpsertRequest(
                        chunks=[
                            chunk(f"{tenant}-hotel#a", "hotel limit per night", tenant),
                            chunk(
                                f"{tenant}-hotel#b",
                                "hotel limit per night in expensive cities is higher", tenant,
                            ),
                            chunk(f"{tenant}-meals#a", "meal allowance per day", tenant),
                        ]
                    )
                )  # fmt: skip
            yield stub
    finally:
        await server.stop(None)
        catalog.close()
        executor.shutdown(wait=True)


def search(tenant: str, rerank: int = pb.RERANK_MODE_UNSPECIFIED) -> pb.SearchRequest:
    return pb.SearchRequest(
        query="hotel limit per night", tenant=tenant, access_groups=["staff"], top_k=3,
        rerank=rerank,  # type: ignore[arg-type]
    )  # fmt: skip


def reranks(reranker: str, outcome: str) -> float:
    value = REGISTRY.get_sample_value(
        "ragway_retriever_reranks_total", {"reranker": reranker, "outcome": outcome}
    )
    return value or 0.0


async def test_a_tenant_is_reranked_by_its_own_artifact_and_others_by_the_shared_one(
    tmp_path: Path,
) -> None:
    async for stub in serve(tmp_path, skip_margin=None):
        before = reranks(OWN.model_id, "reranked")
        acme = await stub.Search(search("acme"))
        globex = await stub.Search(search("globex"))
        assert acme.reranker_model == OWN.model_id
        assert globex.reranker_model == SHARED.model_id
        assert not acme.rerank_skipped
        # The longer passage wins under the fake reranker, in both tenants.
        assert acme.hits[0].chunk_id == "acme-hotel#b" and acme.hits[0].scores.reranked
        assert {h.chunk_id.split("-")[0] for h in globex.hits} == {"globex"}
        assert reranks(OWN.model_id, "reranked") == before + 1
        off = await stub.Search(search("acme", pb.RERANK_MODE_OFF))
        assert off.reranker_model == "" and not any(h.scores.reranked for h in off.hits)


async def test_a_confident_fusion_skips_the_default_rerank_only(tmp_path: Path) -> None:
    async for stub in serve(tmp_path, skip_margin=0.0):  # every margin is >= 0: always confident
        calls = OWN.calls
        skipped = await stub.Search(search("acme"))
        assert skipped.rerank_skipped and skipped.reranker_model == OWN.model_id
        assert not any(h.scores.reranked for h in skipped.hits)
        assert "rerank" not in {t.stage for t in skipped.timings}
        assert OWN.calls == calls
        # A caller that asks for the rerank explicitly still gets it.
        forced = await stub.Search(search("acme", pb.RERANK_MODE_ON))
        assert not forced.rerank_skipped and forced.hits[0].scores.reranked
        assert reranks(OWN.model_id, "skipped") >= 1


def test_the_fusion_margin_is_first_minus_second() -> None:
    hits: Any = [Hit(chunk=None, score=0.0, fused=f) for f in (0.033, 0.031, 0.02)]  # type: ignore[arg-type]
    assert fusion_margin(hits) == pytest.approx(0.002)
    assert fusion_margin(hits[:1]) == float("inf")


def test_a_weight_below_one_blends_reranker_and_fused_scores() -> None:
    fused, rerank = [0.03, 0.02, 0.01], [0.0, 5.0, 10.0]  # the reranker reverses fusion
    assert blend(fused, rerank, 1.0) == rerank  # the reranker's own scores, as before
    assert blend(fused, rerank, 0.0) == pytest.approx([1.0, 0.5, 0.0])  # fusion's order
    mixed = blend(fused, rerank, 0.6)
    assert mixed == pytest.approx([0.4, 0.5, 0.6])
    assert blend([0.1, 0.1], [2.0, 2.0], 0.5) == [0.0, 0.0]  # flat heads do not divide by 0
