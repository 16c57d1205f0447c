from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
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


def half_open(clock: Clock) -> CircuitBreaker:
    b = breaker(clock)
    for _ in range(3):
        b.record_failure()
    clock.now += 10
    assert b.state == "half-open"
    return b


def test_a_trial_cancelled_before_its_first_message_frees_the_trial() -> None:
    # A run cancelled (task cancelled) while the one trial call was out left the trial
    # marked in flight: every later call failed at once, until the gateway restarted.
    clock = Clock()
    b = half_open(clock)

    async def hangs() -> AsyncGenerator[int, None]:
        await asyncio.sleep(3600)
        yield 1

    async def main() -> None:
        task = asyncio.create_task(
            drain_async(stream_with_retries(b, hangs, attempts=3, backoff_s=0))
        )
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert b.state == "half-open"
    b.before_call()  # a new trial may go out


def test_a_trial_closed_early_by_its_consumer_frees_the_trial() -> None:
    # The executor stops reading mid-stream (cancel requested, or a Redis error while
    # appending a delta): the stream is closed at its yield, and no outcome was recorded.
    clock = Clock()
    b = half_open(clock)
    open_stream, _ = stream_of([1, 2, 3])

    async def main() -> None:
        async with aclosing(stream_with_retries(b, open_stream, attempts=3, backoff_s=0)) as s:
            async for _ in s:
                raise ConnectionError("redis went away while appending")

    with pytest.raises(ConnectionError):
        asyncio.run(main())
    assert b.state == "closed"  # it answered: the dependency is up
    b.before_call()


async def drain_async(stream: AsyncGenerator[int, None]) -> list[int]:
    return [x async for x in stream]
