"""The build catalog's state in Redis, shared by every retriever replica.

    <prefix>aliases            hash   alias → build id ("live", "candidate", ...)
    <prefix>history            list   live builds in promotion order (rollback pops)
    <prefix>builds             zset   build id, scored by created_at
    <prefix>manifest:<id>      string the build's manifest, JSON
    <prefix>touched:<id>       set    "tenant\\x1fdocument" changed by incremental writes

Promote, rollback, setting an alias and delete are Lua scripts: each checks and
writes in one step on the server, so of two replicas that promote at once with the
same expected ``live`` exactly one wins, and no reader ever sees ``live`` moved
without its history entry. A manifest update is a WATCH/MULTI read-modify-write.
The scripts touch keys they compute from the prefix, so the store needs one Redis
server (or, on a cluster, a prefix with a hash tag such as ``{ragway}:catalog:``).

Nothing is cached between requests: ``alias`` is one HGET, so a promotion through
any replica is what every replica serves on its next search. Only when Redis is
unreachable does ``alias`` answer from the mapping it last read, so searches keep
serving the build they served (nothing can be promoted meanwhile, since promotion
needs Redis too); everything else fails with ``CatalogUnavailableError``.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from typing import Any, cast

import redis

from services.retriever.catalog_store import (
    CANDIDATE,
    LIVE,
    BuildStateError,
    CatalogStore,
    CatalogUnavailableError,
    DocKey,
    TouchedLog,
    UnknownBuildError,
    moved,
    no_earlier,
    rollback_step,
    still_named,
)

log = logging.getLogger(__name__)

_CREATE = """
if redis.call('SET', KEYS[1], ARGV[2], 'NX') then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
  return 1
end
return 0
"""

_SET_ALIAS = """
if redis.call('EXISTS', KEYS[2]) == 0 then return -1 end
if ARGV[3] == '1' then return redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
"""

# KEYS: aliases, history, manifest of the build. ARGV: build, expected live, live, candidate.
_PROMOTE = """
if redis.call('EXISTS', KEYS[3]) == 0 then return {'unknown', ''} end
local previous = redis.call('HGET', KEYS[1], ARGV[3]) or ''
if ARGV[2] ~= '' and previous ~= ARGV[2] then return {'moved', previous} end
if previous == ARGV[1] then return {'already', previous} end
if redis.call('LLEN', KEYS[2]) == 0 and previous ~= '' then
  redis.call('RPUSH', KEYS[2], previous)
end
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[3], ARGV[1])
if redis.call('HGET', KEYS[1], ARGV[4]) == ARGV[1] then redis.call('HDEL', KEYS[1], ARGV[4]) end
return {'ok', previous}
"""

# KEYS: aliases, history. ARGV: live, expected live, manifest key prefix.
_ROLLBACK = """
local current = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if ARGV[2] ~= '' and current ~= ARGV[2] then return {'moved', current, ''} end
local history = redis.call('LRANGE', KEYS[2], 0, -1)
if #history == 0 and current ~= '' then history = {current} end
while #history > 0 and history[#history] ~= current do table.remove(history) end
if #history < 2 then return {'none', current, ''} end
table.remove(history)
local target = history[#history]
if redis.call('EXISTS', ARGV[3] .. target) == 0 then return {'deleted', current, target} end
redis.call('HSET', KEYS[1], ARGV[1], target)
redis.call('DEL', KEYS[2])
redis.call('RPUSH', KEYS[2], unpack(history))
return {'ok', current, target}
"""

# KEYS: aliases, history, manifest, touched, builds. ARGV: build.
_DELETE = """
if redis.call('EXISTS', KEYS[3]) == 0 then return {'unknown'} end
local named = {'named'}
local pairs_ = redis.call('HGETALL', KEYS[1])
for i = 1, #pairs_, 2 do
  if pairs_[i + 1] == ARGV[1] then table.insert(named, pairs_[i]) end
end
if #named > 1 then return named end
for _, b in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  if b == ARGV[1] then return {'step'} end
end
redis.call('DEL', KEYS[3], KEYS[4])
redis.call('ZREM', KEYS[5], ARGV[1])
return {'ok'}
"""


@contextlib.contextmanager
def _unavailable() -> Iterator[None]:
    try:
        yield
    except redis.RedisError as exc:
        raise CatalogUnavailableError(f"the build catalog's Redis is unavailable: {exc}") from exc


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisCatalogStore:
    def __init__(self, client: redis.Redis, *, prefix: str = "ragway:catalog:") -> None:
        self._r = client
        self._prefix = prefix
        self._aliases_key = prefix + "aliases"
        self._history_key = prefix + "history"
        self._builds_key = prefix + "builds"
        self._create = client.register_script(_CREATE)
        self._set_alias = client.register_script(_SET_ALIAS)
        self._promote = client.register_script(_PROMOTE)
        self._rollback = client.register_script(_ROLLBACK)
        self._delete = client.register_script(_DELETE)
        self._last_aliases: dict[str, str] = {}

    @classmethod
    def from_url(cls, url: str, *, prefix: str, timeout_s: float) -> RedisCatalogStore:
        client = redis.Redis.from_url(
            url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s
        )
        return cls(client, prefix=prefix)

    def _manifest_key(self, build_id: str) -> str:
        return f"{self._prefix}manifest:{build_id}"

    def _touched_key(self, build_id: str) -> str:
        return f"{self._prefix}touched:{build_id}"

    def aliases(self) -> dict[str, str]:
        with _unavailable():
            raw = self._r.hgetall(self._aliases_key)
        self._last_aliases = {_text(k): _text(v) for k, v in raw.items()}
        return dict(self._last_aliases)

    def alias(self, name: str) -> str | None:
        try:
            value = self._r.hget(self._aliases_key, name)
        except redis.RedisError as exc:
            if name not in self._last_aliases:
                raise CatalogUnavailableError(
                    f"the build catalog's Redis is unavailable: {exc}"
                ) from exc
            log.warning(
                "catalog unavailable; serving the alias last read",
                extra={"alias": name, "build": self._last_aliases[name], "error": str(exc)},
            )
            return self._last_aliases[name]
        if value is None:
            self._last_aliases.pop(name, None)
            return None
        self._last_aliases[name] = _text(value)
        return self._last_aliases[name]

    def has_build(self, build_id: str) -> bool:
        with _unavailable():
            return bool(self._r.exists(self._manifest_key(build_id)))

    def manifest(self, build_id: str) -> dict[str, Any] | None:
        with _unavailable():
            raw = self._r.get(self._manifest_key(build_id))
        if raw is None:
            return None
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError(f"{self._manifest_key(build_id)} must hold a JSON object")
        return data

    def build_ids(self) -> list[str]:
        with _unavailable():
            raw = self._r.zrange(self._builds_key, 0, -1, withscores=True)
        scored = cast("list[tuple[bytes, float]]", raw)
        pairs = [(float(score), _text(b)) for b, score in scored]
        return [b for _, b in sorted(pairs, reverse=True)]  # as the file store: (created, id)

    def live_history(self) -> list[str]:
        with _unavailable():
            history = [_text(b) for b in self._r.lrange(self._history_key, 0, -1)]
        if history:
            return history
        live = self.alias(LIVE)
        return [live] if live else []

    def create(self, build_id: str, manifest: dict[str, Any]) -> None:
        with _unavailable():
            created = self._create(
                keys=[self._manifest_key(build_id), self._builds_key],
                args=[build_id, json.dumps(manifest), int(manifest.get("created_at", 0))],
            )
        if not created:
            raise FileExistsError(build_id)

    def update_manifest(self, build_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        key = self._manifest_key(build_id)
        with _unavailable(), self._r.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)  # type: ignore[no-untyped-call]
                    raw = pipe.get(key)
                    if raw is None:
                        raise UnknownBuildError(f"no build {build_id!r}")
                    manifest = json.loads(raw) | fields
                    pipe.multi()
                    pipe.set(key, json.dumps(manifest))
                    pipe.execute()
                    return dict(manifest)
                except redis.WatchError:
                    continue  # another replica updated it meanwhile: merge into theirs

    def set_alias(self, alias: str, build_id: str, *, only_if_absent: bool = False) -> bool:
        with _unavailable():
            done = int(
                self._set_alias(
                    keys=[self._aliases_key, self._manifest_key(build_id)],
                    args=[alias, build_id, "1" if only_if_absent else "0"],
                )
            )
        if done < 0:
            raise UnknownBuildError(f"no build {build_id!r}")
        return done == 1

    def promote(self, build_id: str, expected_live: str) -> str:
        with _unavailable():
            code, previous = (
                _text(v)
                for v in self._promote(
                    keys=[self._aliases_key, self._history_key, self._manifest_key(build_id)],
                    args=[build_id, expected_live, LIVE, CANDIDATE],
                )
            )
        if code == "unknown":
            raise UnknownBuildError(f"no build {build_id!r}")
        if code == "moved":
            raise moved(previous, expected_live)
        if code == "already":
            raise BuildStateError(f"build {build_id} is already live")
        return previous

    def rollback(self, expected_live: str) -> tuple[str, str]:
        with _unavailable():
            code, current, target = (
                _text(v)
                for v in self._rollback(
                    keys=[self._aliases_key, self._history_key],
                    args=[LIVE, expected_live, self._manifest_key("")],
                )
            )
        if code == "moved":
            raise moved(current, expected_live)
        if code == "none":
            raise no_earlier(current)
        if code == "deleted":
            raise BuildStateError(f"the previous live build {target} was deleted")
        return current, target

    def delete(self, build_id: str) -> None:
        with _unavailable():
            code, *named = (
                _text(v)
                for v in self._delete(
                    keys=[
                        self._aliases_key,
                        self._history_key,
                        self._manifest_key(build_id),
                        self._touched_key(build_id),
                        self._builds_key,
                    ],
                    args=[build_id],
                )
            )
        if code == "unknown":
            raise UnknownBuildError(f"no build {build_id!r}")
        if code == "named":
            raise still_named(build_id, sorted(named))
        if code == "step":
            raise rollback_step(build_id)

    def touched_log(self, build_id: str) -> TouchedLog:
        return RedisTouchedLog(self._r, self._touched_key(build_id))

    def adopt(self, source: CatalogStore) -> int:
        """Copy another store's builds, aliases and history in, once, if this one has none.

        For a retriever moving from its file catalog to the shared one (a compose
        volume that kept its aliases.json): its promoted builds stay known. Of
        replicas starting at once only the first adopts (a key set if absent), so
        a second data root never merges into the first. Returns the builds copied."""
        with _unavailable():
            if self._r.exists(self._aliases_key) or not self._r.set(
                self._prefix + "adopted", "1", nx=True
            ):
                return 0
            copied = 0
            for build_id in reversed(source.build_ids()):
                manifest = source.manifest(build_id)
                if manifest is None:
                    continue
                try:
                    self.create(build_id, manifest)
                except FileExistsError:
                    continue
                self.touched_log(build_id).add(source.touched_log(build_id).members())
                copied += 1
            history = source.live_history()
            if history:
                self._r.rpush(self._history_key, *history)
            for alias, build_id in source.aliases().items():
                self.set_alias(alias, build_id)
        return copied

    def close(self) -> None:
        self._r.close()


class RedisTouchedLog:
    """Read from Redis each time: another replica's webhook write counts at once."""

    def __init__(self, client: redis.Redis, key: str) -> None:
        self._r = client
        self._key = key

    def members(self) -> set[DocKey]:
        with _unavailable():
            raw = self._r.smembers(self._key)
        pairs = (_text(m).split("\x1f", 1) for m in raw)
        return {(t, d) for t, d in pairs}

    def add(self, keys: set[DocKey]) -> None:
        if keys:
            with _unavailable():
                self._r.sadd(self._key, *(f"{t}\x1f{d}" for t, d in keys))
