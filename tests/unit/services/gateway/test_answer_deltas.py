"""The executor's answer deltas: written in order, a burst in one write, none after a
cancel is seen, and a lost lease raised to the executor.

The store below holds each delta write until the test lets it go, so what arrives
meanwhile is what a busy Redis would see queued behind one round trip.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import pytest

from services.gateway.runs.events import RunEvent
from services.gateway.runs.executor import RunExecutor
from services.gateway.runs.models import RunStatus
from services.gateway.runs.store import LeaseLost
from services.gateway.settings import GatewaySettings
from tests.unit.services.gateway.fakes import FakeBackends, FakeStore, delta, final, queued_run

SETTINGS = GatewaySettings(grpc_backoff_s=0.0)
BURST = [delta(f"part {i} ", i) for i in range(6)]


class SlowStore(FakeStore):
    """Each delta write waits for ``release`` (set once the generator sent everything)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.lose_lease = False

    async def append_all_checking_cancel(
        self, run_id: str, events: Sequence[RunEvent], *, token: int
    ) -> bool:
        await self.release.wait()
        if self.lose_lease:
            raise LeaseLost(run_id)
        return await super().append_all_checking_cancel(run_id, events, token=token)


class Releasing(FakeBackends):
    """Sends its messages, then lets the store's writes through."""

    def __init__(self, store: SlowStore) -> None:
        super().__init__(messages=[*BURST, final("part 0 part 1 [1].", [1])])
        self.store = store

    async def _stream(self):  # type: ignore[no-untyped-def]
        try:
            for message in self.messages:
                await asyncio.sleep(0)
                yield message
            self.store.release.set()
        finally:
            self.closed = True


def run(store: SlowStore) -> str:
    record = queued_run(store)

    async def main() -> None:
        await RunExecutor(store, Releasing(store), SETTINGS).execute(record.id, token=1)

    asyncio.run(main())
    return record.id


def test_a_burst_of_deltas_is_written_in_order_in_fewer_writes() -> None:
    store = SlowStore()
    run_id = run(store)
    texts = [d["text"] for d in store.data(run_id, "answer.delta")]
    assert texts == [f"part {i} " for i in range(6)]  # every delta, in order
    assert store.writes == [["answer.delta"], ["answer.delta"] * 5]  # the first, then the rest
    types = store.types(run_id)
    assert types.index("answer.completed") > max(
        i for i, t in enumerate(types) if t == "answer.delta"
    )
    assert types[-1] == "run.completed"


def test_no_delta_is_written_after_the_write_that_saw_the_cancel() -> None:
    store = SlowStore()
    record = queued_run(store)

    async def main() -> None:
        # Cancelled right after the retrieval's check: the next read of the flag is the
        # first delta write's, while the rest of the burst waits behind it.
        backends = Releasing(store)
        original = store.append_checking_cancel

        async def retrieval_then_cancel(run_id: str, event: RunEvent, *, token: int) -> bool:
            cancelled = await original(run_id, event, token=token)
            store.cancelled.add(run_id)
            return cancelled

        store.append_checking_cancel = retrieval_then_cancel  # type: ignore[method-assign]
        await RunExecutor(store, backends, SETTINGS).execute(record.id, token=1)

    asyncio.run(main())
    types = store.types(record.id)
    assert types[-1] == "run.cancelled"
    assert types.count("answer.delta") == 1  # the write that read the flag, no more
    assert "answer.completed" not in types
    assert store.records[record.id].status is RunStatus.CANCELLED
    assert json.loads(store.events[record.id][-1].data) == {"status": "cancelled"}


def test_a_lease_lost_in_a_delta_write_reaches_the_executor() -> None:
    store = SlowStore()
    store.lose_lease = True
    with pytest.raises(LeaseLost):
        run(store)
