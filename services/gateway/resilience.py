"""Bounded retries and circuit breakers for the gateway's calls to its dependencies.

    closed ──(N consecutive failures)──▶ open ──(cooldown)──▶ half-open
      ▲                                    │                      │
      └──────────── success ◀──────────────┴──── one trial call ──┘ (failure: open again)

While a breaker is open, calls fail at once and the API answers 503 with
Retry-After instead of piling runs onto a dependency that is down.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from typing import TypeVar

import grpc

T = TypeVar("T")

RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE})


class CircuitOpenError(Exception):
    def __init__(self, name: str, retry_after_s: float) -> None:
        super().__init__(f"the {name} is unavailable; retry in {retry_after_s:.0f} s")
        self.name = name
        self.retry_after_s = retry_after_s


class CircuitBreaker:
    def __init__(
        self,
        name: str,
        *,
        failure_threshold: int,
        cooldown_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if failure_threshold < 1:
            raise ValueError(f"failure_threshold must be >= 1, got {failure_threshold}")
        self.name = name
        self._threshold = failure_threshold
        self._cooldown = cooldown_s
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._trial_in_flight = False

    @property
    def state(self) -> str:
        if self._opened_at is None:
            return "closed"
        return "open" if self.retry_after_s() > 0 else "half-open"

    def retry_after_s(self) -> float:
        if self._opened_at is None:
            return 0.0
        return max(0.0, self._opened_at + self._cooldown - self._clock())

    def before_call(self) -> None:
        """Raise CircuitOpenError unless a call may go out now."""
        state = self.state
        if state == "open" or (state == "half-open" and self._trial_in_flight):
            raise CircuitOpenError(self.name, max(self.retry_after_s(), 1.0))
        if state == "half-open":
            self._trial_in_flight = True

    def record_success(self) -> None:
        self._failures = 0
        self._opened_at = None
        self._trial_in_flight = False

    def release_trial(self) -> None:
        """The trial call ended without an outcome (cancelled, or its reader stopped):
        let the next call be the trial. Without this the trial stayed in flight forever."""
        self._trial_in_flight = False

    def record_failure(self) -> None:
        self._trial_in_flight = False
        self._failures += 1
        if self._opened_at is not None or self._failures >= self._threshold:
            self._opened_at = self._clock()


async def stream_with_retries(
    breaker: CircuitBreaker,
    open_stream: Callable[[], AsyncGenerator[T, None]],
    *,
    attempts: int,
    backoff_s: float,
) -> AsyncGenerator[T, None]:
    """The messages of ``open_stream()``, retrying UNAVAILABLE with doubling backoff, behind
    ``breaker``: the one retry rule of the gateway's calls, unary ones included.

    A stream is retried only before its first message: once a message was handed
    on, a second attempt would hand it on again. Close this iterator (``aclosing``)
    when stopping early, so the open stream is closed (and its call cancelled) at once.
    """
    for attempt in range(1, attempts + 1):
        breaker.before_call()
        received = False
        settled = False  # an outcome was recorded for this attempt
        try:
            async with aclosing(open_stream()) as stream:
                async for message in stream:
                    received = True
                    yield message
        except grpc.aio.AioRpcError as exc:
            settled = True
            if exc.code() not in RETRYABLE:
                breaker.record_success()  # the dependency answered: it is up, if unhappy
                raise
            breaker.record_failure()
            if received or attempt == attempts:
                raise
            await asyncio.sleep(backoff_s * 2 ** (attempt - 1))
        else:
            settled = True
            breaker.record_success()
            return
        finally:
            # Any other exit: CancelledError, GeneratorExit (the reader closed us at a
            # yield), or the reader's own error. A message came: the dependency is up.
            # None came: no verdict, but the half-open trial must not stay taken.
            if not settled:
                if received:
                    breaker.record_success()
                else:
                    breaker.release_trial()
    raise AssertionError("unreachable")


async def call_with_retries(
    breaker: CircuitBreaker,
    call: Callable[[], Awaitable[T]],
    *,
    attempts: int,
    backoff_s: float,
) -> T:
    """Run ``call``; retry UNAVAILABLE up to ``attempts`` times with doubling backoff."""

    async def once() -> AsyncGenerator[T, None]:
        yield await call()

    # Read to the end, not just the one reply: the stream's end records the success.
    replies = [
        r async for r in stream_with_retries(breaker, once, attempts=attempts, backoff_s=backoff_s)
    ]
    return replies[0]
