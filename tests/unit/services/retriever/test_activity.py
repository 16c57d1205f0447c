"""When a live write may embed on every core: no search in flight, none for quiet_s."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest

from ragway.v1 import retriever_pb2 as pb
from services.retriever.activity import SearchActivity
from services.retriever.settings import RetrieverSettings
from tests.unit.services.retriever.fakes import FakeEmbedder
from tests.unit.services.retriever.test_servicer import chunk, start


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_quiet_from_the_start_and_until_a_search_begins() -> None:
    clock = Clock()
    activity = SearchActivity(1.0, clock)
    assert activity.quiet()
    with activity.searching():
        assert not activity.quiet()
        clock.now += 10  # however long it runs
        assert not activity.quiet()
    assert not activity.quiet()  # it just ended
    clock.now += 0.5
    assert not activity.quiet()
    clock.now += 0.5
    assert activity.quiet()


def test_overlapping_searches_keep_it_busy_until_the_last_ends() -> None:
    clock = Clock()
    activity = SearchActivity(0.0, clock)
    first, second = activity.searching(), activity.searching()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert not activity.quiet()
    second.__exit__(None, None, None)
    assert activity.quiet()


def test_a_failed_search_still_ends() -> None:
    activity = SearchActivity(0.0)
    with pytest.raises(RuntimeError), activity.searching():
        raise RuntimeError("search failed")
    assert activity.quiet()


def test_a_negative_quiet_time_is_refused() -> None:
    with pytest.raises(ValueError, match="quiet_s"):
        SearchActivity(-1.0)


def test_the_settings_refuse_a_negative_quiet_time() -> None:
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        RetrieverSettings(write_quiet_s=-1)


class SeenEmbedder(FakeEmbedder):
    """Records whether the activity read quiet while each call embedded."""

    def __init__(self, activity: SearchActivity) -> None:
        super().__init__()
        self.activity = activity
        self.quiet_seen: list[bool] = []

    def embed(self, texts: Sequence[str]) -> Any:
        self.quiet_seen.append(self.activity.quiet())
        return super().embed(texts)


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[Any, SeenEmbedder, SearchActivity]]:
    activity = SearchActivity(0.0)
    embedder = SeenEmbedder(activity)
    async for r in start(tmp_path, embedder=embedder, activity=activity):
        yield r.stub, embedder, activity


async def test_a_search_over_grpc_is_in_flight_while_it_embeds(
    served: tuple[Any, SeenEmbedder, SearchActivity],
) -> None:
    stub, embedder, activity = served
    await stub.Search(
        pb.SearchRequest(query="meal allowance", tenant="acme", access_groups=["staff"], top_k=3)
    )
    assert embedder.quiet_seen and not any(embedder.quiet_seen)
    assert activity.quiet()  # ended, and quiet_s is 0
    # A write is not a search: it embeds while the activity reads quiet.
    embedder.quiet_seen.clear()
    await stub.Upsert(
        pb.UpsertRequest(chunks=[chunk("travel#0", "The daily meal allowance is 45 euros.")])
    )
    assert embedder.quiet_seen and all(embedder.quiet_seen)


async def test_a_refused_search_ends_too(
    served: tuple[Any, SeenEmbedder, SearchActivity],
) -> None:
    stub, _, activity = served
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.Search(pb.SearchRequest(query="  ", tenant="acme"))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert activity.quiet()


def test_quiet_is_safe_to_read_from_write_threads() -> None:
    activity = SearchActivity(0.0)
    stop = threading.Event()
    reads: list[bool] = []

    def read() -> None:
        while not stop.is_set():
            reads.append(activity.quiet())

    reader = threading.Thread(target=read)
    reader.start()
    for _ in range(2000):
        with activity.searching():
            pass
    stop.set()
    reader.join()
    assert reads and activity.quiet()


def test_each_search_start_is_announced_before_it_runs() -> None:
    starts: list[bool] = []
    activity = SearchActivity(0.0, on_search=lambda: starts.append(activity.quiet()))
    with activity.searching():
        pass
    with activity.searching():
        pass
    assert starts == [False, False]  # already in flight when the wide writes are stopped
