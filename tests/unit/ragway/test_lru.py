"""The bounded LRU map: what it forgets first, its bound of 0, and many threads at once."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import pytest

from ragway.lru import LruCache


def test_past_its_bound_the_least_recently_used_entry_goes() -> None:
    cache: LruCache[str, int] = LruCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the more recent of the two
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    assert len(cache) == 2


def test_putting_a_key_again_replaces_its_value_and_makes_it_the_most_recent() -> None:
    cache: LruCache[str, int] = LruCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 10)
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (10, None, 3)


def test_a_bound_of_zero_keeps_nothing_and_a_negative_one_is_refused() -> None:
    cache: LruCache[str, int] = LruCache(0)
    cache.put("a", 1)
    assert cache.get("a") is None and len(cache) == 0
    with pytest.raises(ValueError, match="max_entries must be >= 0, got -1"):
        LruCache(-1)


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Threads switch as often as the interpreter allows, so races show."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


@pytest.mark.usefixtures("busy_switching")
def test_many_threads_at_once_keep_it_within_bounds_and_get_only_their_keys_values() -> None:
    bound, keys, threads = 8, 40, 8
    cache: LruCache[int, str] = LruCache(bound)
    errors: list[BaseException] = []
    wrong: list[tuple[int, str]] = []
    start = threading.Barrier(threads)

    def work(seed: int) -> None:
        try:
            start.wait()
            for i in range(100_000):
                key = (seed * 7 + i) % keys
                found = cache.get(key)
                if found is None:
                    cache.put(key, f"value {key}")
                elif found != f"value {key}":
                    wrong.append((key, found))
                assert len(cache) <= bound
        except BaseException as exc:  # a KeyError from an unguarded OrderedDict, say
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == [] and wrong == []
    assert len(cache) == bound
