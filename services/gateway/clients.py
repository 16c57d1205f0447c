"""gRPC clients for the retriever and the generator, and the mapping between their
protos and the run's own types.

Every call carries a deadline and goes through one retry rule behind a circuit
breaker (resilience.stream_with_retries); a streaming call is cancelled when the
caller stops iterating (the run was cancelled or the executor is shutting down).
The executor speaks in runs/models.py types; the protos stop here.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Protocol

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from ragway.service_auth import aio_insecure_channel
from ragway.v1 import (
    embeddings_pb2,
    generator_pb2,
    generator_pb2_grpc,
    retriever_pb2,
    retriever_pb2_grpc,
)
from services.gateway import metrics
from services.gateway.resilience import (
    CircuitBreaker,
    CircuitOpenError,
    call_with_retries,
    stream_with_retries,
)
from services.gateway.runs.context import PackedPassage
from services.gateway.runs.models import Degradation, RunRecord, Source


class GenerateCall(Protocol):
    def __aiter__(self) -> AsyncGenerator[generator_pb2.GenerateResponse, None]: ...

    def cancel(self) -> bool: ...


_CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", 32 * 1024 * 1024),
    ("grpc.keepalive_time_ms", 30_000),
    # gRPC's default reconnect backoff grows to 120 s: a restarted retriever
    # would stay unreachable long after it is back. Retry the connection often.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]


class ServiceClients:
    def __init__(
        self,
        retriever_addr: str,
        generator_addr: str,
        *,
        attempts: int = 3,
        backoff_s: float = 0.05,
        breaker_failures: int = 5,
        breaker_cooldown_s: float = 10.0,
        service_token: str | None = None,
    ) -> None:
        self.attempts = attempts
        self.backoff_s = backoff_s
        self.retriever_breaker = CircuitBreaker(
            "retriever", failure_threshold=breaker_failures, cooldown_s=breaker_cooldown_s
        )
        self.generator_breaker = CircuitBreaker(
            "generator", failure_threshold=breaker_failures, cooldown_s=breaker_cooldown_s
        )
        metrics.BREAKERS.watch(self.retriever_breaker)
        metrics.BREAKERS.watch(self.generator_breaker)
        # Every call carries the service token (ragway/service_auth.py) when one is set.
        self._retriever_channel = aio_insecure_channel(
            retriever_addr, service_token, options=_CHANNEL_OPTIONS
        )
        self._generator_channel = aio_insecure_channel(
            generator_addr, service_token, options=_CHANNEL_OPTIONS
        )
        self.retriever = retriever_pb2_grpc.RetrieverStub(self._retriever_channel)
        self.generator = generator_pb2_grpc.GeneratorStub(self._generator_channel)

    async def search(
        self, request: retriever_pb2.SearchRequest, timeout_s: float
    ) -> retriever_pb2.SearchResponse:
        """Search, retrying UNAVAILABLE (bounded) behind the retriever's circuit breaker."""

        async def once() -> retriever_pb2.SearchResponse:
            reply: retriever_pb2.SearchResponse = await self.retriever.Search(
                request, timeout=timeout_s
            )
            return reply

        return await call_with_retries(
            self.retriever_breaker, once, attempts=self.attempts, backoff_s=self.backoff_s
        )

    async def describe_build(self, build: str) -> str:
        """The build id an id or alias names; NOT_FOUND (AioRpcError) when none."""
        reply: retriever_pb2.DescribeBuildResponse = await self.retriever.DescribeBuild(
            retriever_pb2.DescribeBuildRequest(build=build), timeout=5.0
        )
        return reply.build_id

    async def list_rerankers(self) -> list[retriever_pb2.RerankerInfo]:
        """The reranker artifacts the retriever has loaded (its ListRerankers)."""
        reply: retriever_pb2.ListRerankersResponse = await self.retriever.ListRerankers(
            retriever_pb2.ListRerankersRequest(), timeout=5.0
        )
        return list(reply.rerankers)

    def unavailable(self) -> CircuitOpenError | None:
        """Why new runs should be refused now: an open breaker, else None."""
        for breaker in (self.retriever_breaker, self.generator_breaker):
            if breaker.state == "open":
                return CircuitOpenError(breaker.name, breaker.retry_after_s())
        return None

    def generate(
        self, request: generator_pb2.GenerateRequest, timeout_s: float
    ) -> AsyncGenerator[generator_pb2.GenerateResponse, None]:
        """The generator's stream, retried behind its breaker only before its first message.

        Close the iterator to stop early (``aclosing``): that cancels the call, and the
        generator stops its work too.
        """

        async def once() -> AsyncGenerator[generator_pb2.GenerateResponse, None]:
            call: GenerateCall = self.generator.Generate(request, timeout=timeout_s)
            try:
                async for message in call:
                    yield message
            finally:
                call.cancel()  # no-op when finished; else stops the generator's work too

        return stream_with_retries(
            self.generator_breaker, once, attempts=self.attempts, backoff_s=self.backoff_s
        )

    def breaker_states(self) -> dict[str, str]:
        """Each dependency's breaker: closed, open or half-open (for /readyz)."""
        return {b.name: b.state for b in (self.retriever_breaker, self.generator_breaker)}

    async def serving(self) -> dict[str, bool]:
        """Health of each dependency, as its own gRPC health service reports it."""
        result: dict[str, bool] = {}
        for name, channel in (
            ("retriever", self._retriever_channel),
            ("generator", self._generator_channel),
        ):
            stub = health_pb2_grpc.HealthStub(channel)
            try:
                reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0)
                result[name] = reply.status == health_pb2.HealthCheckResponse.SERVING
            except grpc.aio.AioRpcError:
                result[name] = False
        return result

    async def close(self) -> None:
        await self._retriever_channel.close()
        await self._generator_channel.close()


# Proto mapping: requests from the run, replies into the run's types.

SEARCH_MODES = {
    "hybrid": retriever_pb2.SEARCH_MODE_HYBRID,
    "sparse": retriever_pb2.SEARCH_MODE_SPARSE,
    "dense": retriever_pb2.SEARCH_MODE_DENSE,
}
REFUSAL_REASONS = {
    generator_pb2.REFUSAL_REASON_NO_EVIDENCE: "no_evidence",
    generator_pb2.REFUSAL_REASON_WEAK_EVIDENCE: "weak_evidence",
    generator_pb2.REFUSAL_REASON_MODEL_ABSTAINED: "model_abstained",
}


RERANK_MODES = {
    "default": retriever_pb2.RERANK_MODE_UNSPECIFIED,
    "on": retriever_pb2.RERANK_MODE_ON,
    "off": retriever_pb2.RERANK_MODE_OFF,
}


def search_request(
    record: RunRecord,
    *,
    candidate_depth: int,
    budget_ms: int,
    build: str = "",
    rerank: str = "default",
    reranker: str = "",
    rerank_weight: float | None = None,
    rerank_skip_margin: float | None = None,
) -> retriever_pb2.SearchRequest:
    return retriever_pb2.SearchRequest(
        query=record.standalone_query,
        tenant=record.tenant,
        access_groups=record.access_groups,
        top_k=record.top_k,
        candidate_depth=max(candidate_depth, record.top_k),
        mode=SEARCH_MODES[record.mode],
        budget_ms=budget_ms,
        build=build,
        rerank=RERANK_MODES[rerank],
        reranker=reranker,
        # None leaves the field absent: the retriever's own setting.
        rerank_weight=rerank_weight,
        rerank_skip_margin=rerank_skip_margin,
        # The generator scores the passages' answer units with these instead of
        # embedding them per question (ragway/unit_vectors.py).
        unit_vectors=True,
        # ...and the question with the vectors the retriever embedded it as, the
        # same text with the same model (GenerateRequest.question_vectors).
        query_vectors=True,
    )


@dataclass(frozen=True, slots=True)
class Retrieved:
    """A search reply: the hits to pack, and what the run records about the search."""

    build_id: str
    reranker_model: str | None  # the artifact in force, None when none reranked
    # Whether that artifact was skipped (fusion was confident); None when none was in force.
    rerank_skipped: bool | None
    hits: Sequence[retriever_pb2.SearchHit]
    degraded: list[Degradation]
    timings_ms: dict[str, float]  # the retriever's stages, as "retriever.<stage>"
    # The texts the retriever embedded (the question, its parts, its respelling),
    # for the generator; and their model's id.
    query_vectors: Sequence[embeddings_pb2.QueryVector] = ()
    embedding_model: str = ""


def retrieved(response: retriever_pb2.SearchResponse) -> Retrieved:
    return Retrieved(
        build_id=response.build_id,
        reranker_model=response.reranker_model or None,
        rerank_skipped=response.rerank_skipped if response.reranker_model else None,
        hits=response.hits,
        degraded=[Degradation(stage=d.stage, reason=d.reason) for d in response.degraded],
        timings_ms={f"retriever.{t.stage}": round(t.ms, 3) for t in response.timings},
        query_vectors=response.query_vectors,
        embedding_model=response.embedding_model,
    )


def sources(passages: Sequence[PackedPassage]) -> list[Source]:
    return [
        Source(
            number=p.number,
            source_id=p.hit.chunk_id,
            document_id=p.hit.document_id,
            title=p.hit.title,
            section=p.hit.section,
            url=p.hit.url,
            version=p.hit.version,
            score=round(p.hit.score, 6),
            text=p.hit.text,
        )
        for p in passages
    ]


def generate_request(
    record: RunRecord,
    passages: Sequence[PackedPassage],
    *,
    max_output_tokens: int = 0,
    min_support: float | None = None,
    backend: str = "",
    model: str = "",
    found: Retrieved | None = None,
) -> generator_pb2.GenerateRequest:
    request = generator_pb2.GenerateRequest(
        question=record.standalone_query,
        run_id=record.id,
        max_output_tokens=max_output_tokens,
        backend=backend,
        model=model,
        # The generator embeds the question as the retriever did; these spare it that.
        question_vectors=found.query_vectors if found is not None else (),
        embedding_model=found.embedding_model if found is not None else "",
        passages=[
            generator_pb2.Passage(
                number=p.number,
                source_id=p.hit.chunk_id,
                document_id=p.hit.document_id,
                title=p.hit.title,
                section=p.hit.section,
                text=p.hit.text,
                url=p.hit.url,
                retrieval_score=p.hit.score,
                unit_vectors=p.hit.unit_vectors,
            )
            for p in passages
        ],
    )
    if min_support is not None:  # unset: the generator's own threshold
        request.min_support = min_support
    return request


@dataclass(frozen=True, slots=True)
class Delta:
    text: str
    index: int


@dataclass(frozen=True, slots=True)
class Reset:
    reason: str


@dataclass(frozen=True, slots=True)
class Generated:
    """The generator's final message: the answer, its verdict and the passages it cites."""

    answer: str
    refused: bool
    evidence_score: float
    refusal_reason: str | None
    refusal_detail: str | None
    model: str
    prompt_version: str
    cited: list[int]  # passage numbers, as the generator sent them
    degraded: list[Degradation]


def generation(message: generator_pb2.GenerateResponse) -> Delta | Reset | Generated | None:
    """One message of the generator's stream; None for a message of no known kind."""
    if message.HasField("delta"):
        return Delta(text=message.delta.text, index=message.delta.index)
    if message.HasField("reset"):
        return Reset(reason=message.reset.reason)
    if message.HasField("final"):
        final = message.final
        refused = final.verdict == generator_pb2.GROUNDING_VERDICT_REFUSED
        return Generated(
            answer=final.answer,
            refused=refused,
            evidence_score=round(final.evidence_score, 4),
            refusal_reason=REFUSAL_REASONS.get(final.refusal_reason) if refused else None,
            refusal_detail=final.refusal_detail or None,
            model=final.model,
            prompt_version=final.prompt_version,
            cited=list(final.cited_passages),
            # The generator's checks and budgets, beside the retriever's: a fallback
            # to the extractive answer, a dropped citation, an unsupported number.
            degraded=[
                Degradation(stage="generator", reason=f"{d.code}: {d.detail}")
                for d in final.degraded
            ],
        )
    return None
