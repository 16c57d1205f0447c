from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from typing import Any

import grpc
import pytest

from services.gateway.resilience import (
    CircuitBreaker,
    CircuitOpenError,
    call_with_retries,
    stream_with_retries,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def rpc_error(code: grpc.StatusCode = grpc.StatusCode.UNAVAILABLE) -> grpc.aio.AioRpcError:
    # The error grpc.aio raises when a call fails: the same class, not a stand-in.
    error: grpc.aio.AioRpcError = grpc.aio.AioRpcError(
        code, grpc.aio.Metadata(), grpc.aio.Metadata(), details="down"
    )
    return error


def breaker(clock: Clock) -> CircuitBreaker:
    return CircuitBreaker("retriever", failure_threshold=3, cooldown_s=10, clock=clock)


def test_the_breaker_opens_after_n_failures_and_half_opens_after_the_cooldown() -> None:
    clock = Clock()
    b = breaker(clock)
    for _ in range(2):
        b.before_call()
        b.record_failure()
    assert b.state == "closed"
    b.before_call()
    b.record_failure()
    assert b.state == "open"
    with pytest.raises(CircuitOpenError) as err:
        b.before_call()
    assert err.value.retry_after_s == 10
    clock.now += 10
    assert b.state == "half-open"
    b.before_call()  # the one trial call
    with pytest.raises(CircuitOpenError):
        b.before_call()  # no second call while the trial is out
    b.record_success()
    assert b.state == "closed"


def test_a_failed_trial_opens_the_breaker_again() -> None:
    clock = Clock()
    b = breaker(clock)
    for _ in range(3):
        b.record_failure()
    clock.now += 10
    b.before_call()
    b.record_failure()
    assert b.state == "open"
    assert b.retry_after_s() == 10


def test_retries_are_bounded_and_only_for_unavailable() -> None:
    clock = Clock()
    calls = []

    async def failing() -> int:
        calls.append(1)
        raise rpc_error()

    b = CircuitBreaker("generator", failure_threshold=10, cooldown_s=10, clock=clock)
    with pytest.raises(grpc.aio.AioRpcError):
        asyncio.run(call_with_retries(b, failing, attempts=3, backoff_s=0.001))
    assert len(calls) == 3

    async def invalid() -> int:
        calls.append(1)
        raise rpc_error(grpc.StatusCode.INVALID_ARGUMENT)

    calls.clear()
    with pytest.raises(grpc.aio.AioRpcError):
        asyncio.run(call_with_retries(b, invalid, attempts=3, backoff_s=0.001))
    assert len(calls) == 1  # not retried, and the breaker counts the service as up
    assert b.state == "closed"


def test_a_success_after_a_retry_returns_the_result() -> None:
    failures = [rpc_error()]

    async def flaky() -> int:
        if failures:
            raise failures.pop()
        return 42

    b = breaker(Clock())
    assert asyncio.run(call_with_retries(b, flaky, attempts=3, backoff_s=0.001)) == 42
    assert b.state == "closed"


def stream_of(*outcomes: list[int] | grpc.aio.AioRpcError) -> tuple[Callable[[], Any], list[int]]:
    """A stream opener: each call yields the next outcome's items, or raises it."""
    opened: list[int] = []

    def open_stream() -> AsyncGenerator[int, None]:
        outcome = outcomes[len(opened)]
        opened.append(1)

        async def stream() -> AsyncGenerator[int, None]:
            if isinstance(outcome, grpc.aio.AioRpcError):
                raise outcome
            for item in outcome:
                yield item

        return stream()

    return open_stream, opened


def drain(b: CircuitBreaker, open_stream: Callable[[], Any]) -> list[int]:
    async def main() -> list[int]:
        return [x async for x in stream_with_retries(b, open_stream, attempts=3, backoff_s=0)]

    return asyncio.run(main())


def test_a_stream_is_retried_before_its_first_message_and_records_the_success() -> None:
    b = breaker(Clock())
    open_stream, opened = stream_of(rpc_error(), [1, 2])
    assert drain(b, open_stream) == [1, 2]
    assert len(opened) == 2 and b.state == "closed"


def test_a_stream_that_fails_after_a_message_is_not_retried() -> None:
    b = breaker(Clock())

    async def half() -> AsyncGenerator[int, None]:
        yield 1
        raise rpc_error()

    opened: list[int] = []

    def open_stream() -> AsyncGenerator[int, None]:
        opened.append(1)
        return half()

    seen: list[int] = []

    async def main() -> None:
        async for x in stream_with_retries(b, open_stream, attempts=3, backoff_s=0):
            seen.append(x)

    with pytest.raises(grpc.aio.AioRpcError):
        asyncio.run(main())
    assert (seen, len(opened)) == ([1], 1)
