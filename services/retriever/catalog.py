"""Knowledge builds and the aliases that point at them.

The catalog's state (aliases, manifests, promotion history, touched documents)
lives in a ``CatalogStore`` (catalog_store.py): files under the data root by
default, or Redis shared by every replica (catalog_redis.py). The indexes live
where the engines keep them (backends.py): the embedded ones in the data root,

    <root>/builds/<id>/sparse/     tantivy index
    <root>/builds/<id>/dense/      qdrant-edge shard

and the server ones in OpenSearch and Qdrant. With the file store the data root
also holds

    <root>/aliases.json            {"live": "b-20261130-061500-3f2a", "candidate": ...}
    <root>/live-history.json       ["b-…-old", "b-…-new"]  (promotions; rollback pops)
    <root>/builds/<id>/manifest.json
    <root>/builds/<id>/touched.json  documents changed by incremental (webhook) writes

Life of a build (docs/ingestion.md):

    create (status building, optionally aliased `candidate`)
      ▸ bulk upserts ▸ seal (status ready, counts and checksums)
      ▸ promote: checks, then `live` := build in one atomic step; history += build
      ▸ rollback: history.pop(); `live` := history[-1]
      ▸ delete: only when no alias and no rollback step names it

Every request resolves its build name through the store, so when the store is
shared, a promotion through any replica is served by every replica on its next
request, and a restarted replica comes back on the same ``live``.
"""

from __future__ import annotations

import logging
import re
import secrets
import shutil
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.retriever.backends import EmbeddedEngines, Engines
from services.retriever.catalog_store import (
    CANDIDATE,
    LIVE,
    BuildStateError,
    CatalogStore,
    DocKey,
    FileCatalogStore,
    TouchedLog,
    UnknownBuildError,
)
from services.retriever.engines.tantivy_sparse import SCHEMA_VERSION
from services.retriever.indexes import DenseIndex, SparseIndex

__all__ = [
    "BUILDING",
    "CANDIDATE",
    "LIVE",
    "READY",
    "Build",
    "BuildCatalog",
    "BuildStateError",
    "UnknownBuildError",
]

BUILDING = "building"
READY = "ready"
_BUILD_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")

log = logging.getLogger(__name__)


@dataclass
class Build:
    build_id: str
    sparse: SparseIndex
    dense: DenseIndex
    write_lock: threading.Lock
    folder: Path | None = None
    # (tenant, document id) changed by incremental writes; bulk writes skip them.
    touched_log: TouchedLog | None = None

    @property
    def touched(self) -> set[DocKey]:
        """The touched documents now (read it once per decision: a shared store is asked)."""
        return self.touched_log.members() if self.touched_log is not None else set()

    def close(self) -> None:
        self.sparse.close()
        self.dense.close()

    def mark_touched(self, keys: Iterable[DocKey]) -> None:
        """Record incrementally written documents (call under write_lock)."""
        if self.touched_log is not None:
            self.touched_log.add(set(keys))


class BuildCatalog:
    def __init__(
        self,
        root: Path,
        *,
        embedding_model: str,
        dim: int,
        engines: Engines | None = None,
        store: CatalogStore | None = None,
    ) -> None:
        self._builds_dir = root / "builds"
        self._builds_dir.mkdir(parents=True, exist_ok=True)
        self._embedding_model = embedding_model
        self._dim = dim
        self._open: dict[str, Build] = {}
        self._engines: Engines = engines or EmbeddedEngines()
        self._store: CatalogStore = store or FileCatalogStore(root)
        self._lock = threading.Lock()

    def aliases(self) -> dict[str, str]:
        return self._store.aliases()

    def resolve(self, name: str) -> str:
        name = name or LIVE
        target = self._store.alias(name)
        if target is not None:
            return target
        if self._store.has_build(name):
            return name
        raise UnknownBuildError(f"no build or alias named {name!r}")

    def ensure_live(self, initial_build_id: str | None = None) -> str:
        """Point ``live`` at a build, creating an empty one (named, if given) on first start.

        Replicas sharing a store may start at once: the first to set ``live`` wins,
        and the others serve its build (a replica's own unnamed build is removed)."""
        try:
            return self.resolve(LIVE)
        except UnknownBuildError:
            pass
        try:
            build_id = self.create(initial_build_id)
            own = initial_build_id is None
        except FileExistsError:
            if initial_build_id is None:
                raise
            build_id, own = initial_build_id, False  # another replica created it
        if not self._store.set_alias(LIVE, build_id, only_if_absent=True) and own:
            self.delete(build_id)
        live = self.resolve(LIVE)
        self._engines.publish_alias(LIVE, live)
        return live

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
        self._store.create(build_id, manifest)
        return build_id

    def manifest(self, build_id: str) -> dict[str, Any]:
        manifest = self._store.manifest(build_id)
        if manifest is None:
            raise UnknownBuildError(f"no build {build_id!r}")
        return manifest

    def update_manifest(self, build_id: str, **fields: Any) -> dict[str, Any]:
        return self._store.update_manifest(build_id, fields)

    def build_ids(self) -> list[str]:
        """Every build in the catalog, newest first."""
        return self._store.build_ids()

    def aliases_of(self, build_id: str) -> list[str]:
        return sorted(a for a, b in self.aliases().items() if b == build_id)

    def live_history(self) -> list[str]:
        return self._store.live_history()

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
            previous = self._store.promote(build_id, expected_live)
            self._engines.publish_alias(LIVE, build_id)
        self.update_manifest(build_id, promoted_at=int(time.time()), gate=gate or {})
        return previous, build_id

    def rollback(self, *, expected_live: str = "") -> tuple[str, str]:
        """``live`` := the build it named before the last promotion. Returns (previous, new)."""
        with self._lock:
            current, target = self._store.rollback(expected_live)
            self._engines.publish_alias(LIVE, target)
        return current, target

    def delete(self, build_id: str) -> None:
        with self._lock:
            self._store.delete(build_id)
            build = self._open.pop(build_id, None)
            if build is not None:
                with build.write_lock:
                    build.close()
            shutil.rmtree(self._builds_dir / build_id, ignore_errors=True)

    def set_alias(self, alias: str, build_id: str) -> None:
        with self._lock:
            self._store.set_alias(alias, build_id)
            self._engines.publish_alias(alias, build_id)

    def open(self, name: str) -> Build:
        build_id = self.resolve(name)
        with self._lock:
            build = self._open.get(build_id)
            if build is None:
                build = self._open_build(build_id)
                self._open[build_id] = build
            return build

    def _open_build(self, build_id: str) -> Build:
        folder = self._builds_dir / build_id
        manifest = self.manifest(build_id)
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
        embedded_with = manifest.get("embedding_model")
        if embedded_with and embedded_with != self._embedding_model:
            # Served, not refused: the vectors of one MiniLM in another precision
            # still meet (cosine 0.99), and refusing would stop a retriever whose
            # live build predates an upgrade. The generator recomputes the unit
            # vectors stored under the other model's id.
            log.warning(
                "build %s was embedded with %s; this retriever embeds with %s: rebuild "
                "it so that questions and passages meet in one model's space",
                build_id,
                embedded_with,
                self._embedding_model,
            )
        # A shared catalog can name a build whose embedded indexes were written on
        # another replica's data root: serving it here would serve an empty index.
        missing = [
            role
            for role in self._engines.in_folder()
            if not (folder / role).is_dir() or not any((folder / role).iterdir())
        ]
        if missing and "sealed_at" in manifest:
            raise BuildStateError(
                f"build {build_id} is in the catalog but its {' and '.join(missing)} index "
                f"is not in this retriever's data root ({folder}): embedded engines keep a "
                f"build's files where it was written (docs/deployment.md)"
            )
        folder.mkdir(parents=True, exist_ok=True)
        return Build(
            build_id=build_id,
            sparse=self._engines.open_sparse(build_id, folder),
            dense=self._engines.open_dense(build_id, folder, self._dim),
            write_lock=threading.Lock(),
            folder=folder,
            touched_log=self._store.touched_log(build_id),
        )

    def close(self) -> None:
        with self._lock:
            for build in self._open.values():
                build.close()
            self._open.clear()
            self._engines.close()
            self._store.close()
