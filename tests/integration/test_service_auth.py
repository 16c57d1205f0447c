"""Service-to-service authentication on the real retriever and generator (issue 16).

Before it, anyone who reached the retriever's port could search as any tenant and
upsert, delete, promote or drop builds. Now every call but health and reflection
needs the stack's service token; the stack itself (gateway, tools) sends it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from ragway.service_auth import insecure_channel
from ragway.v1 import generator_pb2, generator_pb2_grpc, retriever_pb2, retriever_pb2_grpc
from ragway_tools.launcher import Stack
from tests.integration.conftest import auth

Metadata = tuple[tuple[str, str], ...]
Call = Callable[[grpc.Channel, Metadata], object]

SEARCH = retriever_pb2.SearchRequest(query="meal allowance", tenant="acme", access_groups=["staff"])
CALLS: dict[str, tuple[str, Call]] = {
    "search": (
        "retriever",
        lambda ch, md: retriever_pb2_grpc.RetrieverStub(ch).Search(SEARCH, timeout=5, metadata=md),
    ),
    "upsert": (
        "retriever",
        lambda ch, md: retriever_pb2_grpc.RetrieverStub(ch).Upsert(
            retriever_pb2.UpsertRequest(
                chunks=[
                    retriever_pb2.Chunk(
                        chunk_id="evil#1",
                        document_id="evil",
                        tenant="acme",
                        access_groups=["staff"],
                        status=retriever_pb2.DOCUMENT_STATUS_CURRENT,
                        title="Evil",
                        text="The meal allowance is 9000 euros.",
                    )
                ]
            ),
            timeout=5,
            metadata=md,
        ),
    ),
    "delete-build": (
        "retriever",
        lambda ch, md: retriever_pb2_grpc.RetrieverStub(ch).DeleteBuild(
            retriever_pb2.DeleteBuildRequest(build_id="no-such-build"), timeout=5, metadata=md
        ),
    ),
    "promote": (
        "retriever",
        lambda ch, md: retriever_pb2_grpc.RetrieverStub(ch).PromoteBuild(
            retriever_pb2.PromoteBuildRequest(build_id="no-such-build"), timeout=5, metadata=md
        ),
    ),
    "generate": (
        "generator",
        lambda ch, md: list(
            generator_pb2_grpc.GeneratorStub(ch).Generate(
                generator_pb2.GenerateRequest(
                    question="What is the daily meal allowance?",
                    passages=[
                        generator_pb2.Passage(
                            number=1, source_id="m#1", title="Meals", text="It is 45 euros."
                        )
                    ],
                ),
                timeout=5,
                metadata=md,
            )
        ),
    ),
}


def ask(api: httpx.Client, question: str) -> dict[str, Any]:
    resp = api.post("/v1/ask", json={"question": question}, headers=auth("acme"))
    assert resp.status_code == 200, resp.text
    body: dict[str, Any] = resp.json()
    return body


def addr(stack: Stack, service: str) -> str:
    return stack.config.retriever_addr if service == "retriever" else stack.config.generator_addr


STRANGERS: dict[str, Callable[[str], Metadata]] = {
    "no token": lambda token: (),
    "wrong token": lambda token: (("authorization", f"Bearer {token}x"),),
    "right secret, not a bearer token": lambda token: (("authorization", token),),
    "another header": lambda token: (("x-ragway-service-token", token),),
}


@pytest.mark.parametrize("stranger", list(STRANGERS))
@pytest.mark.parametrize("name", list(CALLS))
def test_when_a_caller_lacks_the_service_token_then_the_call_is_unauthenticated(
    stack: Stack, stranger: str, name: str
) -> None:
    service, call = CALLS[name]
    metadata = STRANGERS[stranger](stack.config.service_token)
    with grpc.insecure_channel(addr(stack, service)) as ch, pytest.raises(grpc.RpcError) as refused:
        call(ch, metadata)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "service token" in (refused.value.details() or "")


def test_the_forged_write_did_not_reach_the_index(stack: Stack, api: httpx.Client) -> None:
    with grpc.insecure_channel(stack.config.retriever_addr) as ch, pytest.raises(grpc.RpcError):
        CALLS["upsert"][1](ch, ())
    answer = ask(api, "What is the meal allowance?")
    assert "9000" not in answer["answer"]
    assert all(s["document_id"] != "evil" for s in answer["sources"])


@pytest.mark.parametrize("service", ["retriever", "generator"])
def test_health_and_reflection_need_no_token(stack: Stack, service: str) -> None:
    with grpc.insecure_channel(addr(stack, service)) as ch:
        reply = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        replies = reflection_pb2_grpc.ServerReflectionStub(ch).ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5
        )
        assert any(r.list_services_response.service for r in replies)


def test_with_the_token_both_services_answer(stack: Stack) -> None:
    token = stack.config.service_token
    with insecure_channel(stack.config.retriever_addr, token) as r:
        assert CALLS["search"][1](r, ())
    with insecure_channel(stack.config.generator_addr, token) as g:
        assert CALLS["generate"][1](g, ())


def test_the_stack_runs_with_authentication_on(stack: Stack, api: httpx.Client) -> None:
    """The gateway sends the token: a question is answered end to end."""
    assert stack.config.service_token_file.read_text() == stack.config.service_token
    assert stack.config.service_token_file.stat().st_mode & 0o077 == 0
    answer = ask(api, "What is the daily meal allowance?")
    assert answer["sources"], answer
    for part in ("retriever", "generator"):
        log = (stack.logs_dir / f"{part}.log").read_text()
        assert "service authentication is off" not in log


def test_no_log_line_holds_the_redis_password(stack: Stack, api: httpx.Client) -> None:
    api.get("/readyz")
    logs = {p.name: p.read_text(errors="replace") for p in stack.logs_dir.glob("*.log")}
    assert {"redis.log", "gateway.log", "retriever.log"} <= set(logs)
    assert stack.config.redis_password not in stack.config.secrets_dir.name
    for name, text in logs.items():
        assert stack.config.redis_password not in text, name
        assert stack.config.service_token not in text, name
