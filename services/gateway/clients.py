"""gRPC clients for the retriever and the generator, created in the app's lifespan.

Every call carries a deadline; a streaming call is cancelled when the caller
stops iterating (the run was cancelled or the executor is shutting down).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from ragway.v1 import generator_pb2, generator_pb2_grpc, retriever_pb2, retriever_pb2_grpc
from services.gateway.resilience import CircuitBreaker, CircuitOpenError, call_with_retries


class GenerateCall(Protocol):
    def __aiter__(self) -> AsyncIterator[generator_pb2.GenerateResponse]: ...

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
    ) -> None:
        self.attempts = attempts
        self.backoff_s = backoff_s
        self.retriever_breaker = CircuitBreaker(
            "retriever", failure_threshold=breaker_failures, cooldown_s=breaker_cooldown_s
        )
        self.generator_breaker = CircuitBreaker(
            "generator", failure_threshold=breaker_failures, cooldown_s=breaker_cooldown_s
        )
        self._retriever_channel = grpc.aio.insecure_channel(
            retriever_addr, options=_CHANNEL_OPTIONS
        )
        self._generator_channel = grpc.aio.insecure_channel(
            generator_addr, options=_CHANNEL_OPTIONS
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

    def unavailable(self) -> CircuitOpenError | None:
        """Why new runs should be refused now: an open breaker, else None."""
        for breaker in (self.retriever_breaker, self.generator_breaker):
            if breaker.state == "open":
                return CircuitOpenError(breaker.name, breaker.retry_after_s())
        return None

    def generate(self, request: generator_pb2.GenerateRequest, timeout_s: float) -> GenerateCall:
        """The server stream; ``cancel()`` on it stops the generator's work."""
        call: GenerateCall = self.generator.Generate(request, timeout=timeout_s)
        return call

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
