"""Which reranker a search gets, when it is skipped, and how the response reports it.

A search's own blend weight and skip margin (a canary path's) replace the
searcher's settings for that search only.

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
from services.retriever.shelf import RerankerShelf, Shelved
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
# Offered to paths only, adapted on acme's documents.
OFFERED = LengthReranker("reranker-acme-20261202-000000-0fe4ed00")
# One shelf decides for the servicer and the searcher (the server wires them so).
SHELF = RerankerShelf(
    shared=Shelved(SHARED.model_id, SHARED, "", "shared", 64, "2026-11-30T00:00:00Z"),
    tenants={"acme": Shelved(OWN.model_id, OWN, "acme", "tenant", 64, "2026-12-01T00:00:00Z")},
    offered=[Shelved(OFFERED.model_id, OFFERED, "acme", "offered", 64, "2026-12-02T00:00:00Z")],
)


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


async def serve(
    tmp_path: Path, *, skip_margin: float | None, rerank_weight: float = 1.0
) -> AsyncIterator[Any]:
    executor = ThreadPoolExecutor(2)
    catalog = BuildCatalog(tmp_path, embedding_model="fake", dim=DIM, engines=MemoryEngines())
    catalog.ensure_live("b-first")
    embedder = FakeEmbedder()
    searcher = HybridSearcher(
        embedder, executor, default_for=SHELF.default_for,
        rerank_depth=5, skip_margin=skip_margin, rerank_weight=rerank_weight,
    )  # fmt: skip
    servicer = RetrieverServicer(
        RetrieverSettings(), catalog, searcher, embedder, executor, rerankers=SHELF
    )
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


def search(
    tenant: str, rerank: int = pb.RERANK_MODE_UNSPECIFIED, **fields: Any
) -> pb.SearchRequest:
    return pb.SearchRequest(
        query="hotel limit per night", tenant=tenant, access_groups=["staff"], top_k=3,
        rerank=rerank, **fields,  # type: ignore[arg-type]
    )  # fmt: skip


def ids(response: pb.SearchResponse) -> list[str]:
    return [h.chunk_id for h in response.hits]


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


async def test_a_searchs_weight_replaces_the_searchers_for_that_search_only(
    tmp_path: Path,
) -> None:
    async for stub in serve(tmp_path, skip_margin=None):  # the searcher's weight: 1.0
        fused = ids(await stub.Search(search("acme", pb.RERANK_MODE_OFF)))
        reranked = await stub.Search(search("acme"))
        assert ids(reranked)[0] == "acme-hotel#b" != fused[0]  # the reranker's order
        kept = await stub.Search(search("acme", rerank_weight=0.0))
        assert ids(kept) == fused  # reranked, and fusion alone decides the order
        assert kept.reranker_model == OWN.model_id and kept.hits[0].scores.reranked
        again = await stub.Search(search("acme"))  # absent: the searcher's weight again
        assert ids(again) == ids(reranked)


async def test_without_a_weight_of_its_own_a_search_gets_the_searchers(tmp_path: Path) -> None:
    async for stub in serve(tmp_path, skip_margin=None, rerank_weight=0.0):
        fused = ids(await stub.Search(search("acme", pb.RERANK_MODE_OFF)))
        assert ids(await stub.Search(search("acme"))) == fused
        own_order = await stub.Search(search("acme", rerank_weight=1.0))
        assert ids(own_order)[0] == "acme-hotel#b" != fused[0]


async def test_a_searchs_skip_margin_replaces_the_searchers(tmp_path: Path) -> None:
    async for stub in serve(tmp_path, skip_margin=None):  # the searcher never skips
        assert not (await stub.Search(search("acme"))).rerank_skipped
        calls = OWN.calls
        skipped = await stub.Search(search("acme", rerank_skip_margin=0.0))
        assert skipped.rerank_skipped and skipped.reranker_model == OWN.model_id
        assert not any(h.scores.reranked for h in skipped.hits) and OWN.calls == calls
        # RERANK_MODE_ON is never skipped, whatever margin comes with it.
        forced = await stub.Search(search("acme", pb.RERANK_MODE_ON, rerank_skip_margin=0.0))
        assert not forced.rerank_skipped and forced.hits[0].scores.reranked
    async for stub in serve(tmp_path / "b", skip_margin=0.0):  # the searcher always skips
        assert (await stub.Search(search("acme"))).rerank_skipped
        # No fused lead reaches 1.0 in RRF units: this search reranks.
        ran = await stub.Search(search("acme", rerank_skip_margin=1.0))
        assert not ran.rerank_skipped and ran.hits[0].scores.reranked


async def test_an_artifact_named_for_another_tenant_brings_no_weight_to_its_searches(
    tmp_path: Path,
) -> None:
    async for stub in serve(tmp_path, skip_margin=None):
        fused = {
            t: ids(await stub.Search(search(t, pb.RERANK_MODE_OFF))) for t in ("acme", "globex")
        }
        named: dict[str, Any] = {
            "reranker": OFFERED.model_id, "rerank_weight": 0.0, "rerank_skip_margin": 1.0
        }  # fmt: skip
        acme = await stub.Search(search("acme", **named))
        assert acme.reranker_model == OFFERED.model_id and ids(acme) == fused["acme"]
        # globex keeps its default (the shared one) and the searcher's weight with it.
        globex = await stub.Search(search("globex", **named))
        assert globex.reranker_model == SHARED.model_id
        assert ids(globex)[0] == "globex-hotel#b" != fused["globex"][0]
        # Without a named artifact the weight is the search's, whichever reranker serves.
        blended = await stub.Search(search("globex", rerank_weight=0.0))
        assert blended.reranker_model == SHARED.model_id and ids(blended) == fused["globex"]


def test_a_searcher_takes_one_rule_for_the_default_reranker_not_two() -> None:
    # The shelf's rule (a tenant's own, else the shared one) and a fixed reranker
    # beside it could disagree about a tenant: the searcher refuses both.
    with ThreadPoolExecutor(1) as executor, pytest.raises(ValueError, match="not both"):
        HybridSearcher(FakeEmbedder(), executor, reranker=SHARED, default_for=SHELF.default_for)
