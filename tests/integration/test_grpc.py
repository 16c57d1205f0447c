"""The gRPC contracts directly: health, reflection, validation, writes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from ragway.v1 import generator_pb2, generator_pb2_grpc, retriever_pb2, retriever_pb2_grpc
from ragway_tools.channels import service_channel
from ragway_tools.launcher import Stack


@pytest.fixture
def channels(stack: Stack) -> Iterator[dict[str, grpc.Channel]]:
    with (
        service_channel(stack.config.retriever_addr) as r,
        service_channel(stack.config.generator_addr) as g,
    ):
        yield {"retriever": r, "generator": g}


@pytest.mark.parametrize(
    ("name", "service"),
    [("retriever", "ragway.v1.Retriever"), ("generator", "ragway.v1.Generator")],
)
def test_health_and_reflection_on_both_servers(
    channels: dict[str, grpc.Channel], name: str, service: str
) -> None:
    health = health_pb2_grpc.HealthStub(channels[name])
    for svc in ("", service):
        reply = health.Check(health_pb2.HealthCheckRequest(service=svc), timeout=5)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    stub = reflection_pb2_grpc.ServerReflectionStub(channels[name])
    replies = stub.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")])
    )
    names = {s.name for r in replies for s in r.list_services_response.service}
    assert {service, "grpc.health.v1.Health"} <= names


def code_of(call: object) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as err:
        call()  # type: ignore[operator]
    code: grpc.StatusCode = err.value.code()
    return code


def test_retriever_validates_requests(channels: dict[str, grpc.Channel]) -> None:
    stub = retriever_pb2_grpc.RetrieverStub(channels["retriever"])
    ok: dict[str, Any] = {"tenant": "acme", "access_groups": ["staff"]}
    cases = [
        retriever_pb2.SearchRequest(query="  ", **ok),
        retriever_pb2.SearchRequest(query="x" * 5000, **ok),
        retriever_pb2.SearchRequest(query="hotel", access_groups=["staff"]),
        retriever_pb2.SearchRequest(query="hotel", tenant="acme"),
        retriever_pb2.SearchRequest(query="hotel", top_k=500, **ok),
    ]
    for request in cases:
        assert (
            code_of(lambda r=request: stub.Search(r, timeout=5)) == grpc.StatusCode.INVALID_ARGUMENT
        )
    missing = retriever_pb2.SearchRequest(query="hotel", build="no-such-build", **ok)
    assert code_of(lambda: stub.Search(missing, timeout=5)) == grpc.StatusCode.NOT_FOUND
    bad_chunk = retriever_pb2.UpsertRequest(
        chunks=[retriever_pb2.Chunk(chunk_id="c", document_id="d", tenant="t", text="x")]
    )
    assert code_of(lambda: stub.Upsert(bad_chunk, timeout=5)) == grpc.StatusCode.INVALID_ARGUMENT


def test_retriever_search_reports_stages_and_the_build(channels: dict[str, grpc.Channel]) -> None:
    stub = retriever_pb2_grpc.RetrieverStub(channels["retriever"])
    reply = stub.Search(
        retriever_pb2.SearchRequest(
            query="meal allowance", tenant="acme", access_groups=["staff"], top_k=3
        ),
        timeout=5,
    )
    assert (
        reply.build_id
        == stub.DescribeBuild(retriever_pb2.DescribeBuildRequest(), timeout=5).build_id
    )
    assert reply.mode == retriever_pb2.SEARCH_MODE_HYBRID
    top = reply.hits[0]
    assert top.chunk_id == "acme/expense-policy#meal-allowance"
    assert top.scores.sparse_rank == 1 and top.scores.dense_rank >= 1 and top.scores.fused > 0
    assert {t.stage for t in reply.timings} >= {"embed", "sparse", "dense", "fuse", "total"}
    # rerank requested with no model configured: fused order kept, and said so.
    reranked = stub.Search(
        retriever_pb2.SearchRequest(
            query="meal allowance",
            tenant="acme",
            access_groups=["staff"],
            rerank=retriever_pb2.RERANK_MODE_ON,
        ),
        timeout=5,
    )
    assert [d.stage for d in reranked.degraded] == ["rerank"]
    assert [h.chunk_id for h in reranked.hits][:3] == [h.chunk_id for h in reply.hits]


def test_retriever_upsert_then_delete_over_grpc(channels: dict[str, grpc.Channel]) -> None:
    stub = retriever_pb2_grpc.RetrieverStub(channels["retriever"])
    chunk = retriever_pb2.Chunk(
        chunk_id="tmp/zebra#1",
        document_id="tmp/zebra",
        tenant="scratch",
        access_groups=["g"],
        status=retriever_pb2.DOCUMENT_STATUS_CURRENT,
        title="Zebras",
        text="Zebras have black and white stripes.",
    )
    search = retriever_pb2.SearchRequest(
        query="zebra stripes", tenant="scratch", access_groups=["g"]
    )
    assert stub.Upsert(retriever_pb2.UpsertRequest(chunks=[chunk]), timeout=30).upserted == 1
    assert [h.chunk_id for h in stub.Search(search, timeout=5).hits] == ["tmp/zebra#1"]
    deleted = stub.Delete(
        retriever_pb2.DeleteRequest(tenant="scratch", document_ids=["tmp/zebra"]), timeout=5
    )
    assert deleted.deleted_chunks == 1
    assert list(stub.Search(search, timeout=5).hits) == []


def test_generator_validates_passages(channels: dict[str, grpc.Channel]) -> None:
    stub = generator_pb2_grpc.GeneratorStub(channels["generator"])
    p = generator_pb2.Passage
    cases = [
        generator_pb2.GenerateRequest(question=""),
        generator_pb2.GenerateRequest(
            question="q", passages=[p(number=0, source_id="a", text="t")]
        ),
        generator_pb2.GenerateRequest(
            question="q",
            passages=[p(number=1, source_id="a", text="t"), p(number=1, source_id="b", text="t")],
        ),
        generator_pb2.GenerateRequest(question="q", passages=[p(number=1, source_id="", text="t")]),
    ]
    for request in cases:
        assert (
            code_of(lambda r=request: list(stub.Generate(r, timeout=5)))
            == grpc.StatusCode.INVALID_ARGUMENT
        )


def test_generator_streams_deltas_then_one_final(channels: dict[str, grpc.Channel]) -> None:
    stub = generator_pb2_grpc.GeneratorStub(channels["generator"])
    request = generator_pb2.GenerateRequest(
        question="What is the daily meal allowance?",
        passages=[
            generator_pb2.Passage(
                number=1,
                source_id="m#1",
                title="Meals",
                text="The daily meal allowance on business trips is 45 euros.",
            )
        ],
    )
    replies = list(stub.Generate(request, timeout=10))
    assert all(r.HasField("delta") for r in replies[:-1]) and replies[-1].HasField("final")
    final = replies[-1].final
    assert final.verdict == generator_pb2.GROUNDING_VERDICT_GROUNDED
    assert list(final.cited_source_ids) == ["m#1"] and list(final.cited_passages) == [1]
    assert final.answer == "".join(r.delta.text for r in replies[:-1])
    assert final.model == "extractive-v2" and final.prompt_version
