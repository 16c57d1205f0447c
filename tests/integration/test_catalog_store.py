"""The Redis catalog store on a real Redis server: the file store's contract, and its
compare-and-swap under a race of replicas.

Each "replica" here is a ``RedisCatalogStore`` with a client of its own, as each
retriever process has; the threads meet at a barrier so their calls reach the
server together. The Lua scripts need a real server (no fake runs them), which is
why these tests start one and live with the integration suite.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import pytest
import redis

from ragway_tools.launcher import Stack
from services.retriever.catalog import LIVE, BuildCatalog, BuildStateError, UnknownBuildError
from services.retriever.catalog_redis import RedisCatalogStore
from services.retriever.catalog_store import (
    CANDIDATE,
    CatalogStore,
    CatalogUnavailableError,
    FileCatalogStore,
)
from tests.integration.conftest import redis_alone
from tests.unit.services.retriever.test_catalog import sealed

T = TypeVar("T")
REPLICAS = 8


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with redis_alone(tmp_path_factory.mktemp("catalog-redis")) as s:
        yield s


@pytest.fixture
def prefix(request: pytest.FixtureRequest) -> str:
    """A key prefix per test: tests share one server but never each other's catalog."""
    return f"t:{request.node.name}:"


def replica(server: Stack, prefix: str) -> RedisCatalogStore:
    return RedisCatalogStore(redis.Redis.from_url(server.config.redis_url), prefix=prefix)


@pytest.fixture(params=["file", "redis"])
def store_factory(
    request: pytest.FixtureRequest, server: Stack, prefix: str, tmp_path: Path
) -> Callable[[], CatalogStore]:
    """A store as a (re)started retriever would open it: the same state every time."""
    if request.param == "file":
        return lambda: FileCatalogStore(tmp_path)
    return lambda: replica(server, prefix)


def test_both_stores_keep_promotion_history_and_refuse_what_the_file_store_refuses(
    store_factory: Callable[[], CatalogStore], tmp_path: Path
) -> None:
    c = BuildCatalog(tmp_path, embedding_model="m", dim=384, store=store_factory())
    first = c.ensure_live()
    a, b = sealed(c), sealed(c, 3)
    c.set_alias(CANDIDATE, b)
    assert c.promote(a, expected_live=first) == (first, a)
    with pytest.raises(BuildStateError, match="live moved"):
        c.promote(b, expected_live=first)
    assert c.promote(b, gate={"passed": True}) == (a, b)
    assert c.aliases() == {LIVE: b}
    assert c.manifest(b)["gate"] == {"passed": True}
    assert set(c.build_ids()) == {first, a, b}
    with pytest.raises(BuildStateError, match="already live"):
        c.promote(b)
    for kept in (a, b, first):
        with pytest.raises(BuildStateError):
            c.delete(kept)
    c.open(b).mark_touched([("t", "doc")])
    c.close()

    again = BuildCatalog(tmp_path, embedding_model="m", dim=384, store=store_factory())
    assert again.live_history() == [first, a, b]
    assert again.open(b).touched == {("t", "doc")}
    assert again.rollback(expected_live=b) == (b, a)
    assert again.rollback() == (a, first)
    with pytest.raises(BuildStateError, match="no earlier build"):
        again.rollback()
    spare = sealed(again)
    again.delete(spare)
    assert spare not in again.build_ids()
    with pytest.raises(UnknownBuildError):
        again.delete(spare)
    again.close()


def race(calls: list[Callable[[], T]]) -> list[T | Exception]:
    """Run every call at once (a barrier releases them together); their results or errors."""
    barrier = threading.Barrier(len(calls))
    results: list[T | Exception] = [RuntimeError("did not run")] * len(calls)

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = calls[i]()
        except Exception as exc:  # the race's losers are the point
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    return results


def manifest(build_id: str) -> dict[str, Any]:
    return {"build_id": build_id, "created_at": 1, "status": "ready"}


def test_of_replicas_promoting_from_the_same_live_exactly_one_wins(
    server: Stack, prefix: str
) -> None:
    stores = [replica(server, prefix) for _ in range(REPLICAS)]
    for i in range(REPLICAS + 1):
        stores[0].create(f"b{i}", manifest(f"b{i}"))
    assert stores[0].set_alias(LIVE, "b0", only_if_absent=True)

    for round_ in range(5):
        live = stores[0].alias(LIVE) or ""
        targets = [f"b{i}" for i in range(1, REPLICAS + 1) if f"b{i}" != live][:REPLICAS]
        results = race(
            [
                partial(s.promote, t, expected_live=live)
                for s, t in zip(stores, targets, strict=False)
            ]
        )
        won = [r for r in results if r == live]
        lost = [r for r in results if isinstance(r, BuildStateError)]
        assert len(won) == 1 and len(lost) == len(results) - 1, (round_, results)
        assert all("live moved" in str(e) for e in lost)
        history = stores[1].live_history()
        assert history[-2:] == [live, stores[2].alias(LIVE)], history
        assert len(history) == round_ + 2  # one entry per round, never two


def test_of_replicas_rolling_back_the_same_live_exactly_one_steps_back(
    server: Stack, prefix: str
) -> None:
    stores = [replica(server, prefix) for _ in range(REPLICAS)]
    for i in range(4):
        stores[0].create(f"b{i}", manifest(f"b{i}"))
    stores[0].set_alias(LIVE, "b0")
    for i in range(1, 4):
        stores[0].promote(f"b{i}", expected_live="")

    results = race([partial(s.rollback, expected_live="b3") for s in stores])
    assert [r for r in results if not isinstance(r, Exception)] == [("b3", "b2")]
    assert stores[3].alias(LIVE) == "b2" and stores[4].live_history() == ["b0", "b1", "b2"]

    # Without expected_live, each rollback takes one step: three replicas at
    # once from b2 can step back at most twice (b2 → b1 → b0), never past b0.
    results = race([partial(s.rollback, expected_live="") for s in stores[:3]])
    assert sorted(r for r in results if not isinstance(r, Exception)) == [
        ("b1", "b0"),
        ("b2", "b1"),
    ]
    assert stores[0].alias(LIVE) == "b0" and stores[0].live_history() == ["b0"]


def test_first_alias_wins_and_manifest_updates_from_replicas_all_land(
    server: Stack, prefix: str
) -> None:
    stores = [replica(server, prefix) for _ in range(REPLICAS)]
    for i in range(REPLICAS):
        stores[0].create(f"b{i}", manifest(f"b{i}"))
    set_first = race(
        [partial(s.set_alias, LIVE, f"b{i}", only_if_absent=True) for i, s in enumerate(stores)]
    )
    assert set_first.count(True) == 1 and set_first.count(False) == REPLICAS - 1
    assert stores[0].alias(LIVE) == f"b{set_first.index(True)}"

    race([partial(s.update_manifest, "b0", {f"field{i}": i}) for i, s in enumerate(stores)])
    m = stores[0].manifest("b0") or {}
    assert {f"field{i}" for i in range(REPLICAS)} <= m.keys() and m["status"] == "ready"

    created = race([partial(s.create, "same", manifest("same")) for s in stores])
    assert sum(r is None for r in created) == 1
    assert sum(isinstance(r, FileExistsError) for r in created) == REPLICAS - 1


def test_without_redis_a_search_serves_the_alias_last_read_and_changes_fail(
    tmp_path: Path,
) -> None:
    with redis_alone(tmp_path) as s:
        store = RedisCatalogStore.from_url(s.config.redis_url, prefix="t:", timeout_s=1)
        store.create("b0", manifest("b0"))
        store.set_alias(LIVE, "b0")
        assert store.alias(LIVE) == "b0"
        s.kill("redis")
        assert store.alias(LIVE) == "b0"
        with pytest.raises(CatalogUnavailableError):
            store.alias(CANDIDATE)  # never read: nothing to fall back on
        with pytest.raises(CatalogUnavailableError):
            store.promote("b0", expected_live="")


def test_a_file_catalog_is_adopted_once_into_an_empty_shared_one(
    server: Stack, prefix: str, tmp_path: Path
) -> None:
    files = BuildCatalog(tmp_path / "a", embedding_model="m", dim=384)
    first = files.ensure_live()
    a = sealed(files)
    files.promote(a)
    files.open(a).mark_touched([("t", "doc")])
    files.close()

    shared = replica(server, prefix)
    assert shared.adopt(FileCatalogStore(tmp_path / "a")) == 2
    assert shared.aliases() == {LIVE: a} and shared.live_history() == [first, a]
    assert shared.manifest(a) == FileCatalogStore(tmp_path / "a").manifest(a)
    assert shared.touched_log(a).members() == {("t", "doc")}
    # A second replica's data root (or a restart) never merges into it again.
    other = BuildCatalog(tmp_path / "b", embedding_model="m", dim=384)
    other.ensure_live("b-other")
    other.close()
    assert replica(server, prefix).adopt(FileCatalogStore(tmp_path / "b")) == 0
    assert "b-other" not in shared.build_ids() and shared.alias(LIVE) == a


@pytest.mark.parametrize("initial", ["b-initial", None])
def test_replicas_starting_at_once_agree_on_one_live_build(
    server: Stack, prefix: str, tmp_path: Path, initial: str | None
) -> None:
    catalogs = [
        BuildCatalog(
            tmp_path / f"r{i}", embedding_model="m", dim=384, store=replica(server, prefix)
        )
        for i in range(REPLICAS)
    ]
    lives = race([partial(c.ensure_live, initial) for c in catalogs])
    assert len(set(map(str, lives))) == 1 and not isinstance(lives[0], Exception), lives
    # A replica whose own unnamed build lost the race removed it again.
    assert catalogs[0].build_ids() == [lives[0]]
    for c in catalogs:
        c.close()
