from __future__ import annotations

import asyncio

import grpc
import pytest

from services.gateway.resilience import CircuitBreaker, CircuitOpenError, call_with_retries


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
