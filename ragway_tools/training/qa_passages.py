"""The passages each question of a QA set gets, exactly as a run gets them.

A private stack is started on the QA set's knowledge base; every question is
searched with its caller's tenant and groups and packed by the gateway's own
``pack`` under its default settings. The learned parts of the generator (the
answerability model, the unit ranker) are fitted on these, so they see what
they will see in service.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragway_tools.channels import service_channel
from ragway_tools.demo import demo_stack
from ragway_tools.evaluation.qa import QASet
from services.gateway.auth import KeyRegistry
from services.gateway.runs.context import pack
from services.gateway.settings import GatewaySettings
from services.generator.backends.base import Passage

Progress = Callable[[int, int], None]


def packed_passages(stub: Any, question: str, tenant: str, groups: list[str]) -> list[Passage]:
    """The passages a run of ``question`` gets: searched with the caller's scope and
    packed by the gateway's own ``pack`` under its default settings."""
    from ragway.v1 import retriever_pb2 as pb

    gateway = GatewaySettings()
    response = stub.Search(
        pb.SearchRequest(
            query=question,
            tenant=tenant,
            access_groups=groups,
            top_k=gateway.top_k,
            candidate_depth=gateway.candidate_depth,
            mode=pb.SEARCH_MODE_HYBRID,
            budget_ms=gateway.retrieval_budget_ms,
            unit_vectors=True,
        ),
        timeout=gateway.retrieval_budget_ms / 1000 + 30,
    )
    return [
        Passage(
            p.number,
            p.hit.chunk_id,
            p.hit.document_id,
            p.hit.title,
            p.hit.section,
            p.hit.text,
            p.hit.url,
            p.hit.score,
            p.hit.unit_vectors,
        )
        for p in pack(response.hits, gateway.context_token_budget, gateway.top_k)
    ]


def passages_from_stack(qa: QASet, progress: Progress | None = None) -> dict[str, list[Passage]]:
    """Each item's packed passages, by item id."""
    from ragway.v1 import retriever_pb2_grpc as pbg

    # A QA set over its own knowledge base names it and its keys; else the demo's.
    with demo_stack(kb=qa.knowledge_base, api_keys=qa.api_keys) as stack:
        config = stack.config
        keys = KeyRegistry.from_file(config.api_keys_file)
        with service_channel(config.retriever_addr, config.service_token) as channel:
            stub = pbg.RetrieverStub(channel)
            out: dict[str, list[Passage]] = {}
            for n, item in enumerate(qa.items, start=1):
                who = keys.authenticate(qa.callers[item.caller], None)
                out[item.id] = packed_passages(stub, item.question, who.tenant, sorted(who.groups))
                if progress is not None:
                    progress(n, len(qa.items))
            return out
