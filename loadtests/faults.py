"""Runs the scenario's timed fault steps against the stack, and always undoes them.

Stack operations block (they start processes and wait for health checks), so
they run in a worker thread; the clients' event loop keeps going meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable, Sequence
from typing import Any

import redis

from loadtests import stored
from loadtests.clients import Clock
from loadtests.model import FaultWindow, RedisSnapshot
from loadtests.scenario import (
    Fault,
    FreezeGateway,
    KillGateway,
    PauseRetriever,
    RestartRedis,
    SlowGenerator,
)
from loadtests.stack import LoadStack

log = logging.getLogger(__name__)


class FaultInjector:
    def __init__(self, stack: LoadStack, faults: Sequence[Fault], clock: Clock) -> None:
        self._stack = stack
        self._faults = sorted(faults, key=lambda f: f.at_s)
        self._clock = clock
        self.windows: list[FaultWindow] = []
        self.snapshots: list[RedisSnapshot] = []
        # Undo actions of faults in progress, run on cancellation too.
        self._undo: dict[int, Callable[[], None]] = {}

    async def run(self) -> None:
        try:
            await asyncio.gather(*(self._one(i, f) for i, f in enumerate(self._faults)))
        finally:
            for undo in list(self._undo.values()):
                await asyncio.to_thread(undo)
            self._undo.clear()

    async def _one(self, i: int, fault: Fault) -> None:
        await asyncio.sleep(max(0.0, fault.at_s - self._clock.now()))
        start = self._clock.now()
        log.info("fault %s at %.1f s", fault.kind, start)
        s = self._stack
        if isinstance(fault, KillGateway):
            await self._hold(
                i,
                lambda: s.kill_gateway(fault.replica),
                fault.down_s,
                lambda: s.start_gateway(fault.replica),
            )
            detail = f"replica {fault.replica}, down {fault.down_s:g} s"
        elif isinstance(fault, FreezeGateway):
            await self._hold(
                i,
                lambda: s.freeze_gateway(fault.replica),
                fault.for_s,
                lambda: s.thaw_gateway(fault.replica),
            )
            detail = f"replica {fault.replica}, SIGSTOP {fault.for_s:g} s"
        elif isinstance(fault, PauseRetriever):
            await self._hold(i, s.pause_retriever, fault.for_s, s.resume_retriever)
            detail = f"SIGSTOP {fault.for_s:g} s"
        elif isinstance(fault, RestartRedis):
            await asyncio.to_thread(self._snapshot)
            sig = signal.SIGKILL if fault.signal == "KILL" else signal.SIGTERM
            await self._hold(i, lambda: s.stop_redis(sig), fault.down_s, s.start_redis)
            detail = f"SIG{fault.signal}, down {fault.down_s:g} s"
        elif isinstance(fault, SlowGenerator):
            await self._hold(
                i,
                lambda: s.slow_generator(fault.delta_delay_ms),
                fault.for_s,
                s.clear_generator_faults,
            )
            detail = f"{fault.delta_delay_ms} ms before each delta, {fault.for_s:g} s"
        self.windows.append(FaultWindow(fault.kind, start, self._clock.now(), detail))

    async def _hold(
        self, i: int, do: Callable[[], Any], seconds: float, undo: Callable[[], Any]
    ) -> None:
        await asyncio.to_thread(do)
        self._undo[i] = undo
        await asyncio.sleep(seconds)
        del self._undo[i]
        await asyncio.to_thread(undo)

    def _snapshot(self) -> None:
        client = redis.Redis.from_url(self._stack.redis_url)
        try:
            self.snapshots.append(stored.snapshot(client, self._clock.now()))
        finally:
            client.close()
