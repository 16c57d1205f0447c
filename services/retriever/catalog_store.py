"""Where the build catalog's state lives: aliases, manifests, promotion history, touched sets.

``BuildCatalog`` (catalog.py) keeps the rules of a build's life; a ``CatalogStore``
keeps its state, and every change that must not race (promote, rollback, an alias
set only if absent, delete) is one method that checks and writes atomically.

    FileCatalogStore   <index_dir>/aliases.json, live-history.json, builds/<id>/manifest.json
                       and touched.json: one retriever process per data root (the default)
    RedisCatalogStore  the same state in Redis (catalog_redis.py), shared by every replica
                       (RAGWAY_CATALOG_STORE=redis, docs/deployment.md)

The file store writes every file with write-to-temp + rename, so a reader sees
either the old or the new content, never a torn one; its lock serialises the
changes of one process, which is all it promises.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

LIVE = "live"
CANDIDATE = "candidate"

DocKey = tuple[str, str]  # (tenant, document id)


class UnknownBuildError(LookupError):
    pass


class BuildStateError(RuntimeError):
    """The operation does not fit the build's state (unsealed, still aliased, raced)."""


class CatalogUnavailableError(RuntimeError):
    """The shared store did not answer: the operation did not happen, or its outcome is unknown."""


class TouchedLog(Protocol):
    """The documents of one build that incremental (webhook) writes changed."""

    def members(self) -> set[DocKey]: ...

    def add(self, keys: set[DocKey]) -> None: ...


class CatalogStore(Protocol):
    def aliases(self) -> dict[str, str]: ...

    def alias(self, name: str) -> str | None:
        """One alias's build, read fresh: called for every request that names a build."""
        ...

    def has_build(self, build_id: str) -> bool: ...

    def manifest(self, build_id: str) -> dict[str, Any] | None: ...

    def build_ids(self) -> list[str]:
        """Every build, newest first."""
        ...

    def live_history(self) -> list[str]: ...

    def create(self, build_id: str, manifest: dict[str, Any]) -> None:
        """Record a new build; FileExistsError when the id is taken."""
        ...

    def update_manifest(self, build_id: str, fields: dict[str, Any]) -> dict[str, Any]: ...

    def set_alias(self, alias: str, build_id: str, *, only_if_absent: bool = False) -> bool:
        """Point ``alias`` at a build; False when ``only_if_absent`` and it points somewhere."""
        ...

    def promote(self, build_id: str, expected_live: str) -> str:
        """``live`` := build_id, history += build_id, ``candidate`` dropped if it named it.

        Refuses (BuildStateError) a build already live or a ``live`` that moved from
        ``expected_live`` (when given). Returns the previous live build."""
        ...

    def rollback(self, expected_live: str) -> tuple[str, str]:
        """``live`` := the build it named before the last promotion. Returns (previous, new)."""
        ...

    def delete(self, build_id: str) -> None:
        """Forget a build no alias and no rollback step names (its files stay for the caller)."""
        ...

    def touched_log(self, build_id: str) -> TouchedLog: ...

    def close(self) -> None: ...


def moved(current: str, expected: str) -> BuildStateError:
    return BuildStateError(f"live moved to {current!r} since you checked {expected!r}; look again")


def no_earlier(current: str) -> BuildStateError:
    return BuildStateError(f"live ({current or 'none'}) has no earlier build to return to")


def still_named(build_id: str, aliases: Iterable[str]) -> BuildStateError:
    return BuildStateError(f"build {build_id} is {', '.join(aliases)}; it stays")


def rollback_step(build_id: str) -> BuildStateError:
    return BuildStateError(
        f"build {build_id} is a rollback step of live; it stays while live can roll back to it"
    )


def trim_history(history: list[str], current: str) -> list[str]:
    """The history up to ``current``: entries past it are of a promotion that crashed half-way."""
    history = list(history)
    while history and history[-1] != current:
        history.pop()
    return history


class FileCatalogStore:
    def __init__(self, root: Path) -> None:
        self._root = root
        self._builds_dir = root / "builds"
        self._builds_dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def aliases(self) -> dict[str, str]:
        path = self._root / "aliases.json"
        if not path.exists():
            return {}
        data = json.loads(path.read_text())
        if not isinstance(data, dict):
            raise ValueError(f"{path} must hold a JSON object")
        return {str(k): str(v) for k, v in data.items()}

    def alias(self, name: str) -> str | None:
        return self.aliases().get(name)

    def has_build(self, build_id: str) -> bool:
        return (self._builds_dir / build_id / "manifest.json").exists()

    def manifest(self, build_id: str) -> dict[str, Any] | None:
        path = self._builds_dir / build_id / "manifest.json"
        if not path.exists():
            return None
        data = json.loads(path.read_text())
        if not isinstance(data, dict):
            raise ValueError(f"{path} must hold a JSON object")
        return data

    def build_ids(self) -> list[str]:
        found = [p.parent.name for p in self._builds_dir.glob("*/manifest.json")]
        created = {b: (self.manifest(b) or {}).get("created_at", 0) for b in found}
        return sorted(found, key=lambda b: (created[b], b), reverse=True)

    def live_history(self) -> list[str]:
        path = self._root / "live-history.json"
        if not path.exists():
            live = self.alias(LIVE)
            return [live] if live else []
        return [str(b) for b in json.loads(path.read_text())]

    def create(self, build_id: str, manifest: dict[str, Any]) -> None:
        folder = self._builds_dir / build_id
        folder.mkdir(parents=True, exist_ok=False)
        atomic_write(folder / "manifest.json", json.dumps(manifest, indent=2))

    def update_manifest(self, build_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            current = self.manifest(build_id)
            if current is None:
                raise UnknownBuildError(f"no build {build_id!r}")
            manifest = current | fields
            atomic_write(
                self._builds_dir / build_id / "manifest.json", json.dumps(manifest, indent=2)
            )
            return manifest

    def set_alias(self, alias: str, build_id: str, *, only_if_absent: bool = False) -> bool:
        with self._lock:
            if not self.has_build(build_id):
                raise UnknownBuildError(f"no build {build_id!r}")
            aliases = self.aliases()
            if only_if_absent and alias in aliases:
                return False
            aliases[alias] = build_id
            self._write_aliases(aliases)
            return True

    def promote(self, build_id: str, expected_live: str) -> str:
        with self._lock:
            if not self.has_build(build_id):
                raise UnknownBuildError(f"no build {build_id!r}")
            aliases = self.aliases()
            previous = aliases.get(LIVE, "")
            if expected_live and previous != expected_live:
                raise moved(previous, expected_live)
            if previous == build_id:
                raise BuildStateError(f"build {build_id} is already live")
            history = self.live_history()
            aliases[LIVE] = build_id
            if aliases.get(CANDIDATE) == build_id:
                del aliases[CANDIDATE]
            # History first: a crash between the two writes leaves an extra
            # entry that rollback skips, never a live build missing from it.
            atomic_write(self._root / "live-history.json", json.dumps([*history, build_id]))
            self._write_aliases(aliases)
            return previous

    def rollback(self, expected_live: str) -> tuple[str, str]:
        with self._lock:
            aliases = self.aliases()
            current = aliases.get(LIVE, "")
            if expected_live and current != expected_live:
                raise moved(current, expected_live)
            history = trim_history(self.live_history(), current)
            if len(history) < 2:
                raise no_earlier(current)
            history.pop()
            target = history[-1]
            if not self.has_build(target):
                raise BuildStateError(f"the previous live build {target} was deleted")
            aliases[LIVE] = target
            self._write_aliases(aliases)
            atomic_write(self._root / "live-history.json", json.dumps(history))
            return current, target

    def delete(self, build_id: str) -> None:
        with self._lock:
            if not self.has_build(build_id):
                raise UnknownBuildError(f"no build {build_id!r}")
            named = sorted(a for a, b in self.aliases().items() if b == build_id)
            if named:
                raise still_named(build_id, named)
            if build_id in self.live_history():
                raise rollback_step(build_id)
            # The manifest only: the catalog closes the build's indexes, then
            # removes its folder. A folder without a manifest is no build.
            (self._builds_dir / build_id / "manifest.json").unlink()
            (self._builds_dir / build_id / "touched.json").unlink(missing_ok=True)

    def touched_log(self, build_id: str) -> TouchedLog:
        return FileTouchedLog(self._builds_dir / build_id / "touched.json")

    def close(self) -> None:
        """Nothing held open: every method reads and writes its files whole."""

    def _write_aliases(self, aliases: dict[str, str]) -> None:
        atomic_write(self._root / "aliases.json", json.dumps(aliases, indent=2, sort_keys=True))


class FileTouchedLog:
    """Read once, then kept in memory: this process is the only writer of its data root."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._keys: set[DocKey] = (
            {(str(t), str(d)) for t, d in json.loads(path.read_text())} if path.exists() else set()
        )

    def members(self) -> set[DocKey]:
        return set(self._keys)

    def add(self, keys: set[DocKey]) -> None:
        new = keys - self._keys
        if not new:
            return
        self._keys |= new
        atomic_write(self._path, json.dumps(sorted(list(k) for k in self._keys)))


def atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
