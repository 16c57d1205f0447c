"""The retriever's Prometheus metrics (names and labels in docs/observability.md)."""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import Counter, Gauge, Histogram

from ragway.metrics import LATENCY_BUCKETS, REGISTRY, exemplar, reason_label

SEARCH_DURATION = Histogram(
    "ragway_retriever_search_duration_seconds",
    "Duration of one Search call, by retrieval mode (hybrid, sparse, dense).",
    ["mode"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
SEARCH_STAGE_DURATION = Histogram(
    "ragway_retriever_stage_duration_seconds",
    "Duration of one stage inside a Search call (embed, sparse, dense, fuse, rerank).",
    ["stage"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
SEARCH_DEGRADATIONS = Counter(
    "ragway_retriever_degradations",
    "Search calls answered without a stage, by stage and reason.",
    ["stage", "reason"],
    registry=REGISTRY,
)


RERANKS = Counter(
    "ragway_retriever_reranks",
    "Default-or-forced reranks by the artifact in force and what it did "
    "(reranked, skipped: fusion confident, late: fused order kept).",
    ["reranker", "outcome"],
    registry=REGISTRY,
)
RERANKER_INFO = Gauge(
    "ragway_retriever_reranker_info",
    'Each reranker artifact loaded, value 1: role shared (tenant "*"), a tenant\'s own '
    'default, or offered for a path to name (tenant: the one it was adapted on, "*" any).',
    ["tenant", "reranker", "role"],
    registry=REGISTRY,
)


EMBEDDING_CACHE = Counter(
    "ragway_retriever_embedding_cache_texts",
    "Texts the write path embedded (outcome=miss) or found in the embedding cache (hit).",
    ["outcome"],
    registry=REGISTRY,
)


QUERY_VECTOR_CACHE = Counter(
    "ragway_retriever_query_vector_cache_texts",
    "Texts a search embedded (outcome=miss) or found in the query vector cache (hit).",
    ["outcome"],
    registry=REGISTRY,
)


WRITE_BATCHES = Counter(
    "ragway_retriever_write_embedding_batches",
    "Batches a live write embedded: session=wide on the bulk session while searches were "
    "quiet, narrow on the live writes' own, interrupted: stopped by a search and run again "
    "narrow (RAGWAY_WRITE_WIDEN_WHEN_QUIET).",
    ["session"],
    registry=REGISTRY,
)


def observe_write_batch(outcome: str) -> None:
    """``outcome``: "wide", "narrow" or "interrupted" (ragway.embedding.Widening)."""
    WRITE_BATCHES.labels(outcome).inc()


def observe_embedding_cache(hits: int, misses: int) -> None:
    if hits:
        EMBEDDING_CACHE.labels("hit").inc(hits)
    if misses:
        EMBEDDING_CACHE.labels("miss").inc(misses)


def observe_query_vector(outcome: str) -> None:
    """``outcome``: "hit" or "miss" (services/retriever/query_vectors.py)."""
    QUERY_VECTOR_CACHE.labels(outcome).inc()


def announce_rerankers(loaded: Iterable[tuple[str, str, str]]) -> None:
    """``loaded``: (tenant, served model id, role) for every artifact on the shelf."""
    for tenant, model_id, role in loaded:
        RERANKER_INFO.labels(tenant, model_id, role).set(1)


def observe_rerank(reranker: str | None, outcome: str | None) -> None:
    if reranker is not None and outcome is not None:
        RERANKS.labels(reranker, outcome).inc()


def observe_search(
    mode: str, seconds: float, timings_ms: dict[str, float], degraded: list[tuple[str, str]]
) -> None:
    # Called inside the Search server span: the exemplar names the run's trace.
    trace_ref = exemplar()
    SEARCH_DURATION.labels(mode).observe(seconds, exemplar=trace_ref)
    for stage, ms in timings_ms.items():
        SEARCH_STAGE_DURATION.labels(stage).observe(ms / 1000, exemplar=trace_ref)
    for stage, reason in degraded:
        SEARCH_DEGRADATIONS.labels(stage, reason_label(reason)).inc()
