"""``ragway eval debug "question"``: the whole path of one question, stage by stage.

1. each retriever alone (BM25, dense) with ranks and scores,
2. the fused (RRF) order and, when a reranker is configured, its scores,
3. the passages that reached the generator (the run's numbered sources),
4. the answer, and a verdict for each citation: ``supported`` (the sentences
   citing it are covered by it and their numbers are in it), ``unsupported``,
   ``changed_number`` or ``unknown_id``.

Retrieval runs with the caller's own tenant and groups (from the API key
file), so the candidates are the ones this caller may see.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from ragway.text import content_terms
from ragway.v1 import retriever_pb2, retriever_pb2_grpc
from ragway_tools.channels import service_channel
from ragway_tools.evaluation.answers import SUPPORT_COVERAGE, cited_sentences, numbers

STAGES = {
    "bm25": (retriever_pb2.SEARCH_MODE_SPARSE, retriever_pb2.RERANK_MODE_OFF),
    "dense": (retriever_pb2.SEARCH_MODE_DENSE, retriever_pb2.RERANK_MODE_OFF),
    "fused (RRF)": (retriever_pb2.SEARCH_MODE_HYBRID, retriever_pb2.RERANK_MODE_OFF),
    "reranked": (retriever_pb2.SEARCH_MODE_HYBRID, retriever_pb2.RERANK_MODE_ON),
}


@dataclass
class StageList:
    stage: str
    hits: list[dict[str, Any]]
    degraded: list[str]
    ms: float


@dataclass
class CitationVerdict:
    number: int
    document_id: str
    verdict: str
    coverage: float
    missing_numbers: list[float] = field(default_factory=list)


@dataclass
class DebugReport:
    question: str
    tenant: str
    groups: list[str]
    stages: list[StageList]
    answer: dict[str, Any]
    citations: list[CitationVerdict]


def principal_for(key: str, keys_file: Path) -> tuple[str, list[str]]:
    from services.gateway.auth import AuthError, KeyRegistry

    try:
        p = KeyRegistry.from_file(keys_file).authenticate(key, None)
    except AuthError as exc:
        raise ValueError(f"API key: {exc.message}") from None
    return p.tenant, sorted(p.groups)


def retrieve_stages(
    retriever: str,
    question: str,
    tenant: str,
    groups: list[str],
    depth: int,
    token: str | None = None,
) -> list[StageList]:
    """``token``: the retriever's service token; None takes the environment's (operator
    use against a running stack). A private stack has a token of its own."""
    out = []
    with service_channel(retriever, token) as ch:
        stub = retriever_pb2_grpc.RetrieverStub(ch)
        for stage, (mode, rerank) in STAGES.items():
            reply = stub.Search(
                retriever_pb2.SearchRequest(
                    query=question,
                    tenant=tenant,
                    access_groups=groups,
                    top_k=depth,
                    candidate_depth=max(depth, 50),
                    mode=mode,
                    rerank=rerank,
                ),
                timeout=30,
            )
            hits = [
                {
                    "rank": i,
                    "chunk_id": h.chunk_id,
                    "document_id": h.document_id,
                    "section": h.section,
                    "sparse": h.scores.sparse if h.scores.sparse_rank else None,
                    "sparse_rank": h.scores.sparse_rank or None,
                    "dense": h.scores.dense if h.scores.dense_rank else None,
                    "dense_rank": h.scores.dense_rank or None,
                    "unit": h.scores.unit if h.scores.unit_rank else None,
                    "unit_rank": h.scores.unit_rank or None,
                    "fused": h.scores.fused,
                    "rerank": h.scores.rerank if h.scores.reranked else None,
                }
                for i, h in enumerate(reply.hits, start=1)
            ]
            total = next((t.ms for t in reply.timings if t.stage == "total"), 0.0)
            out.append(
                StageList(stage, hits, [f"{d.stage}: {d.reason}" for d in reply.degraded], total)
            )
    return out


def citation_verdicts(body: dict[str, Any]) -> list[CitationVerdict]:
    sources = {int(s["number"]): s for s in body.get("sources") or []}
    sentences: dict[int, list[str]] = {}
    for text, markers in cited_sentences(str(body.get("answer") or "")):
        for n in markers:
            sentences.setdefault(n, []).append(text)
    verdicts = []
    for n in sorted(set(sentences) | {int(c["number"]) for c in body.get("citations") or []}):
        source = sources.get(n)
        if source is None:
            verdicts.append(CitationVerdict(n, "?", "unknown_id", 0.0))
            continue
        claim = " ".join(sentences.get(n, []))
        passage = str(source.get("text") or "")
        terms = content_terms(claim)
        coverage = len(terms & content_terms(passage)) / len(terms) if terms else 0.0
        missing = sorted(numbers(claim) - numbers(passage))
        verdict = (
            "changed_number"
            if missing
            else "supported"
            if coverage >= SUPPORT_COVERAGE
            else "unsupported"
        )
        verdicts.append(
            CitationVerdict(n, str(source["document_id"]), verdict, round(coverage, 3), missing)
        )
    return verdicts


def debug(
    question: str,
    *,
    gateway_url: str,
    retriever: str,
    key: str,
    keys_file: Path,
    depth: int = 10,
    token: str | None = None,
) -> DebugReport:
    tenant, groups = principal_for(key, keys_file)
    stages = retrieve_stages(retriever, question, tenant, groups, depth, token)
    resp = httpx.post(
        f"{gateway_url}/v1/ask",
        json={"question": question},
        headers={"Authorization": f"Bearer {key}"},
        timeout=60,
    )
    if resp.status_code != 200:
        raise RuntimeError(f"/v1/ask answered HTTP {resp.status_code}: {resp.text[:300]}")
    body = resp.json()
    return DebugReport(question, tenant, groups, stages, body, citation_verdicts(body))
