"""Knowledge builds on disk and the aliases that point at them.

    <root>/aliases.json            {"live": "b-20261130-061500-3f2a", "candidate": ...}
    <root>/live-history.json       ["b-…-old", "b-…-new"]  (promotions; rollback pops)
    <root>/builds/<id>/manifest.json
    <root>/builds/<id>/touched.json  documents changed by incremental (webhook) writes
    <root>/builds/<id>/sparse/     tantivy index
    <root>/builds/<id>/dense/      qdrant-edge shard

Every file is replaced with write-to-temp + rename, so readers see either the
old or the new content, never a torn one.

Life of a build (docs/ingestion.md):

    create (status building, optionally aliased `candidate`)
      ▸ bulk upserts ▸ seal (status ready, counts and checksums)
      ▸ promote: checks, then `live` := build in one rename; history += build
      ▸ rollback: history.pop(); `live` := history[-1]
      ▸ delete: only when no alias and no rollback step names it
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.retriever.backends import EmbeddedEngines, Engines
from services.retriever.engines.tantivy_sparse import SCHEMA_VERSION
from services.retriever.indexes import DenseIndex, SparseIndex

LIVE = "live"
CANDIDATE = "candidate"
BUILDING = "building"
READY = "ready"
_BUILD_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


class UnknownBuildError(LookupError):
    pass


class BuildStateError(RuntimeError):
    """The operation does not fit the build's state (unsealed, still aliased, raced)."""


@dataclass
class Build:
    build_id: str
    sparse: SparseIndex
    dense: DenseIndex
    write_lock: threading.Lock
    folder: Path | None = None
    # (tenant, document id) changed by incremental writes; bulk writes skip them.
    touched: set[tuple[str, str]] = field(default_factory=set)

    def close(self) -> None:
        self.sparse.close()
        self.dense.close()

    def mark_touched(self, keys: Iterable[tuple[str, str]]) -> None:
        """Record incrementally written documents (call under write_lock)."""
        new = set(keys) - self.touched
        if not new or self.folder is None:
            return
        self.touched |= new
        _atomic_write(
            self.folder / "touched.json", json.dumps(sorted(list(k) for k in self.touched))
        )


class BuildCatalog:
    def __init__(
        self, root: Path, *, embedding_model: str, dim: int, engines: Engines | None = None
    ) -> None:
        self._root = root
        self._builds_dir = root / "builds"
        self._builds_dir.mkdir(parents=True, exist_ok=True)
        self._embedding_model = embedding_model
        self._dim = dim
        self._open: dict[str, Build] = {}
        self._engines: Engines = engines or EmbeddedEngines()
        self._lock = threading.Lock()

    def aliases(self) -> dict[str, str]:
        path = self._root / "aliases.json"
        if not path.exists():
            return {}
        data = json.loads(path.read_text())
        if not isinstance(data, dict):
            raise ValueError(f"{path} must hold a JSON object")
        return {str(k): str(v) for k, v in data.items()}

    def resolve(self, name: str) -> str:
        name = name or LIVE
        aliases = self.aliases()
        if name in aliases:
            return aliases[name]
        if (self._builds_dir / name / "manifest.json").exists():
            return name
        raise UnknownBuildError(f"no build or alias named {name!r}")

    def ensure_live(self, initial_build_id: str | None = None) -> str:
        """Point ``live`` at a build, creating an empty one (named, if given) on first start."""
        try:
            return self.resolve(LIVE)
        except UnknownBuildError:
            build_id = self.create(initial_build_id)
            self.set_alias(LIVE, build_id)
            return build_id

    def create(
        self,
        build_id: str | None = None,
        *,
        config: dict[str, Any] | None = None,
        source: str = "",
        status: str = READY,
    ) -> str:
        build_id = build_id or time.strftime("b-%Y%m%d-%H%M%S-", time.gmtime()) + secrets.token_hex(
            2
        )
        if not _BUILD_ID.match(build_id):
            raise ValueError(
                f"invalid build id {build_id!r}: use [a-z0-9._-], at most 64 characters"
            )
        folder = self._builds_dir / build_id
        folder.mkdir(parents=True, exist_ok=False)
        manifest = {
            "build_id": build_id,
            "created_at": int(time.time()),
            "embedding_model": self._embedding_model,
            "embedding_dim": self._dim,
            "sparse_schema": SCHEMA_VERSION,
            "status": status,
            "config": config or {},
            "source": source,
        }
        _atomic_write(folder / "manifest.json", json.dumps(manifest, indent=2))
        return build_id

    def manifest(self, build_id: str) -> dict[str, Any]:
        path = self._builds_dir / build_id / "manifest.json"
        if not path.exists():
            raise UnknownBuildError(f"no build {build_id!r}")
        data = json.loads(path.read_text())
        if not isinstance(data, dict):
            raise ValueError(f"{path} must hold a JSON object")
        return data

    def update_manifest(self, build_id: str, **fields: Any) -> dict[str, Any]:
        with self._lock:
            manifest = self.manifest(build_id) | fields
            _atomic_write(
                self._builds_dir / build_id / "manifest.json", json.dumps(manifest, indent=2)
            )
            return manifest

    def build_ids(self) -> list[str]:
        """Every build on disk, newest first."""
        found = [p.parent.name for p in self._builds_dir.glob("*/manifest.json")]
        return sorted(found, key=lambda b: (self.manifest(b).get("created_at", 0), b), reverse=True)

    def aliases_of(self, build_id: str) -> list[str]:
        return sorted(a for a, b in self.aliases().items() if b == build_id)

    def live_history(self) -> list[str]:
        path = self._root / "live-history.json"
        if not path.exists():
            live = self.aliases().get(LIVE)
            return [live] if live else []
        data = json.loads(path.read_text())
        return [str(b) for b in data]

    def counts(self, build_id: str) -> tuple[int, int]:
        """(BM25 documents, dense points) in the build right now."""
        build = self.open(build_id)
        with build.write_lock:
            return build.sparse.count(), build.dense.count()

    def seal(self, build_id: str, summary: dict[str, Any]) -> dict[str, Any]:
        """Record what a bulk load put in; refuse when the indexes disagree with it."""
        sparse, dense = self.counts(build_id)
        chunks = int(summary.get("chunks", -1))
        if not sparse == dense == chunks:
            raise BuildStateError(
                f"build {build_id} holds {sparse} BM25 and {dense} dense chunks; "
                f"the load reported {chunks}"
            )
        return self.update_manifest(build_id, **summary, status=READY, sealed_at=int(time.time()))

    def check(self, build_id: str) -> list[str]:
        """Why the build may not serve yet (empty list: it may)."""
        manifest = self.manifest(build_id)
        problems = []
        if manifest.get("status") != READY:
            problems.append(f"build {build_id} is {manifest.get('status')!r}, not sealed ready")
        sparse, dense = self.counts(build_id)
        if sparse == 0:
            problems.append(f"build {build_id} is empty")
        if sparse != dense:
            problems.append(f"build {build_id}: {sparse} BM25 chunks but {dense} dense points")
        touched = self.open(build_id).touched
        if not touched and "chunks" in manifest and sparse != manifest["chunks"]:
            problems.append(
                f"build {build_id} holds {sparse} chunks; its manifest records "
                f"{manifest['chunks']} and no incremental update explains the difference"
            )
        return problems

    def promote(
        self, build_id: str, *, expected_live: str = "", gate: dict[str, Any] | None = None
    ) -> tuple[str, str]:
        """Checks, then ``live`` := build_id atomically. Returns (previous, new)."""
        problems = self.check(build_id)
        if problems:
            raise BuildStateError("; ".join(problems))
        with self._lock:
            aliases = self.aliases()
            previous = aliases.get(LIVE, "")
            if expected_live and previous != expected_live:
                raise BuildStateError(
                    f"live moved to {previous!r} since you checked {expected_live!r}; look again"
                )
            if previous == build_id:
                raise BuildStateError(f"build {build_id} is already live")
            history = self.live_history()
            aliases[LIVE] = build_id
            if aliases.get(CANDIDATE) == build_id:
                del aliases[CANDIDATE]
            # History first: a crash between the two writes leaves an extra
            # entry that rollback skips, never a live build missing from it.
            _atomic_write(self._root / "live-history.json", json.dumps([*history, build_id]))
            _atomic_write(
                self._root / "aliases.json", json.dumps(aliases, indent=2, sort_keys=True)
            )
            self._engines.publish_alias(LIVE, build_id)
        self.update_manifest(build_id, promoted_at=int(time.time()), gate=gate or {})
        return previous, build_id

    def rollback(self, *, expected_live: str = "") -> tuple[str, str]:
        """``live`` := the build it named before the last promotion. Returns (previous, new)."""
        with self._lock:
            aliases = self.aliases()
            current = aliases.get(LIVE, "")
            if expected_live and current != expected_live:
                raise BuildStateError(
                    f"live moved to {current!r} since you checked {expected_live!r}; look again"
                )
            history = self.live_history()
            while history and history[-1] != current:
                history.pop()  # entries of a promotion that crashed half-way
            if len(history) < 2:
                raise BuildStateError(
                    f"live ({current or 'none'}) has no earlier build to return to"
                )
            history.pop()
            target = history[-1]
            if not (self._builds_dir / target / "manifest.json").exists():
                raise BuildStateError(f"the previous live build {target} was deleted")
            aliases[LIVE] = target
            _atomic_write(
                self._root / "aliases.json", json.dumps(aliases, indent=2, sort_keys=True)
            )
            self._engines.publish_alias(LIVE, target)
            _atomic_write(self._root / "live-history.json", json.dumps(history))
        return current, target

    def delete(self, build_id: str) -> None:
        with self._lock:
            if not (self._builds_dir / build_id / "manifest.json").exists():
                raise UnknownBuildError(f"no build {build_id!r}")
            named = [a for a, b in self.aliases().items() if b == build_id]
            if named:
                raise BuildStateError(f"build {build_id} is {', '.join(named)}; it stays")
            if build_id in self.live_history():
                raise BuildStateError(
                    f"build {build_id} is a rollback step of live; it stays while live can "
                    f"roll back to it"
                )
            build = self._open.pop(build_id, None)
            if build is not None:
                with build.write_lock:
                    build.close()
            shutil.rmtree(self._builds_dir / build_id)

    def set_alias(self, alias: str, build_id: str) -> None:
        if not (self._builds_dir / build_id / "manifest.json").exists():
            raise UnknownBuildError(f"no build {build_id!r}")
        with self._lock:
            aliases = self.aliases()
            aliases[alias] = build_id
            _atomic_write(
                self._root / "aliases.json", json.dumps(aliases, indent=2, sort_keys=True)
            )
            self._engines.publish_alias(alias, build_id)

    def open(self, name: str) -> Build:
        build_id = self.resolve(name)
        with self._lock:
            build = self._open.get(build_id)
            if build is None:
                folder = self._builds_dir / build_id
                manifest = json.loads((folder / "manifest.json").read_text())
                found = manifest.get("sparse_schema", 1)
                if found != SCHEMA_VERSION:
                    raise ValueError(
                        f"build {build_id} has sparse index schema v{found}; "
                        f"this retriever needs v{SCHEMA_VERSION}: rebuild it, e.g. delete {folder} "
                        f"(for the demo: 'make clean' and 'make up' again)"
                    )
                if manifest.get("embedding_dim") != self._dim:
                    raise ValueError(
                        f"build {build_id} was embedded with dim {manifest.get('embedding_dim')}, "
                        f"the retriever's model has {self._dim}"
                    )
                touched_file = folder / "touched.json"
                touched = (
                    {(str(t), str(d)) for t, d in json.loads(touched_file.read_text())}
                    if touched_file.exists()
                    else set()
                )
                build = Build(
                    build_id=build_id,
                    sparse=self._engines.open_sparse(build_id, folder),
                    dense=self._engines.open_dense(build_id, folder, self._dim),
                    write_lock=threading.Lock(),
                    folder=folder,
                    touched=touched,
                )
                self._open[build_id] = build
            return build

    def close(self) -> None:
        with self._lock:
            for build in self._open.values():
                build.close()
            self._open.clear()
            self._engines.close()


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
