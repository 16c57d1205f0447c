"""Knowledge builds on disk and the aliases that point at them.

    <root>/aliases.json            {"live": "b-20261130-061500-3f2a"}
    <root>/builds/<id>/manifest.json
    <root>/builds/<id>/sparse/     tantivy index
    <root>/builds/<id>/dense/      qdrant-edge shard

An alias file is replaced with write-to-temp + rename, so readers see either the
old or the new mapping, never a torn one. (Promotion, rollback and the build
CLI arrive with ingestion; this module is the seam they extend.)
"""

from __future__ import annotations

import json
import os
import re
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from services.retriever.backends import EmbeddedEngines, Engines
from services.retriever.engines.tantivy_sparse import SCHEMA_VERSION
from services.retriever.indexes import DenseIndex, SparseIndex

LIVE = "live"
_BUILD_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


class UnknownBuildError(LookupError):
    pass


@dataclass
class Build:
    build_id: str
    sparse: SparseIndex
    dense: DenseIndex
    write_lock: threading.Lock

    def close(self) -> None:
        self.sparse.close()
        self.dense.close()


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

    def create(self, build_id: str | None = None) -> str:
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
        }
        _atomic_write(folder / "manifest.json", json.dumps(manifest, indent=2))
        return build_id

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
                build = Build(
                    build_id=build_id,
                    sparse=self._engines.open_sparse(build_id, folder),
                    dense=self._engines.open_dense(build_id, folder, self._dim),
                    write_lock=threading.Lock(),
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
