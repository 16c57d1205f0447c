"""The one place that turns settings into search engines.

``BuildCatalog`` asks an ``Engines`` for a build's sparse index and dense index
and tells it when an alias moves; everything backend-specific (clients, index
and collection names, server-side aliases) stays here and in ``engines/``.

    sparse_backend  embedded    tantivy under <index_dir>/builds/<id>/sparse
                    opensearch  index   <opensearch_index_prefix><id>
    dense_backend   embedded    qdrant-edge shard under <index_dir>/builds/<id>/dense
                    qdrant      collection <qdrant_collection_prefix><id>, on the server
                                at qdrant_url, or in local mode when qdrant_url = "local"

Server-side aliases (``<prefix>live`` → the live build's index or collection)
follow the catalog's aliases, each moved in one atomic call, so operators and
other tools can address the live build by name.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from opensearchpy import OpenSearch
from qdrant_client import QdrantClient

from services.retriever.engines import opensearch_sparse, qdrant_dense
from services.retriever.engines.edge_dense import EdgeDenseIndex
from services.retriever.engines.opensearch_sparse import OpenSearchSparseIndex
from services.retriever.engines.qdrant_dense import QdrantDenseIndex
from services.retriever.engines.tantivy_sparse import TantivySparseIndex
from services.retriever.indexes import DenseIndex, SparseIndex
from services.retriever.settings import RetrieverSettings


class Engines(Protocol):
    def open_sparse(self, build_id: str, folder: Path) -> SparseIndex: ...

    def open_dense(self, build_id: str, folder: Path, dim: int) -> DenseIndex: ...

    def publish_alias(self, alias: str, build_id: str) -> None: ...

    def in_folder(self) -> tuple[str, ...]:
        """The roles ("sparse", "dense") whose index lives in the build's local folder."""
        ...

    def close(self) -> None: ...


class EmbeddedEngines:
    """tantivy + qdrant-edge in the build's folder: the default, one process owns them."""

    def open_sparse(self, build_id: str, folder: Path) -> SparseIndex:
        return TantivySparseIndex(folder / "sparse")

    def open_dense(self, build_id: str, folder: Path, dim: int) -> DenseIndex:
        return EdgeDenseIndex(folder / "dense", dim=dim)

    def publish_alias(self, alias: str, build_id: str) -> None:
        """Embedded builds have no server-side names: the catalog store's is the only mapping."""

    def in_folder(self) -> tuple[str, ...]:
        return ("sparse", "dense")

    def close(self) -> None:
        """Each index closes itself through its build."""


@dataclass
class ConfiguredEngines:
    """Each role on its configured backend; server clients are made once and shared."""

    settings: RetrieverSettings
    dim: int
    _embedded: EmbeddedEngines = field(default_factory=EmbeddedEngines)
    _opensearch: OpenSearch | None = None
    _qdrant: QdrantClient | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def open_sparse(self, build_id: str, folder: Path) -> SparseIndex:
        s = self.settings
        if s.sparse_backend == "embedded":
            return self._embedded.open_sparse(build_id, folder)
        return self._opensearch_index(build_id)

    def open_dense(self, build_id: str, folder: Path, dim: int) -> DenseIndex:
        s = self.settings
        if s.dense_backend == "embedded":
            return self._embedded.open_dense(build_id, folder, dim)
        return self._qdrant_collection(build_id, dim)

    def publish_alias(self, alias: str, build_id: str) -> None:
        # An alias needs its target to exist: opening creates a missing index or
        # collection (and leaves an existing one alone).
        s = self.settings
        if s.sparse_backend == "opensearch":
            index = self._opensearch_index(build_id)
            opensearch_sparse.swap_alias(
                self.opensearch(), s.opensearch_index_prefix + alias, index.index_name
            )
        if s.dense_backend == "qdrant":
            collection = self._qdrant_collection(build_id, self.dim)
            qdrant_dense.swap_alias(
                self.qdrant(), s.qdrant_collection_prefix + alias, collection.collection
            )

    def in_folder(self) -> tuple[str, ...]:
        s = self.settings
        return tuple(
            role
            for role, backend in (("sparse", s.sparse_backend), ("dense", s.dense_backend))
            if backend == "embedded"
        )

    def _opensearch_index(self, build_id: str) -> OpenSearchSparseIndex:
        s = self.settings
        return OpenSearchSparseIndex(
            self.opensearch(),
            s.opensearch_index_prefix + build_id,
            shards=s.opensearch_shards,
            replicas=s.opensearch_replicas,
        )

    def _qdrant_collection(self, build_id: str, dim: int) -> QdrantDenseIndex:
        prefix = self.settings.qdrant_collection_prefix
        return QdrantDenseIndex(self.qdrant(), prefix + build_id, dim=dim)

    def opensearch(self) -> OpenSearch:
        with self._lock:
            if self._opensearch is None:
                self._opensearch = opensearch_client(self.settings)
            return self._opensearch

    def qdrant(self) -> QdrantClient:
        with self._lock:
            if self._qdrant is None:
                self._qdrant = qdrant_client(self.settings)
            return self._qdrant

    def close(self) -> None:
        with self._lock:
            if self._opensearch is not None:
                self._opensearch.close()
                self._opensearch = None
            if self._qdrant is not None:
                self._qdrant.close()
                self._qdrant = None


def create_engines(settings: RetrieverSettings, *, dim: int) -> Engines:
    if settings.sparse_backend == "embedded" and settings.dense_backend == "embedded":
        return EmbeddedEngines()
    return ConfiguredEngines(settings, dim)


def opensearch_client(settings: RetrieverSettings) -> OpenSearch:
    auth = None
    if settings.opensearch_username is not None:
        password = settings.opensearch_password
        auth = (settings.opensearch_username, password.get_secret_value() if password else "")
    return OpenSearch(
        hosts=[settings.opensearch_url],
        http_auth=auth,
        timeout=settings.opensearch_timeout_s,
        # Bounded: a bulk or search that keeps failing surfaces as an error.
        max_retries=2,
        retry_on_timeout=False,
    )


def qdrant_client(settings: RetrieverSettings) -> QdrantClient:
    if settings.qdrant_url == "local":
        # Local mode keeps every collection under one folder, opened by this process only.
        return QdrantClient(path=str(settings.index_dir / "qdrant-local"))
    key = settings.qdrant_api_key
    return QdrantClient(
        url=settings.qdrant_url,
        api_key=key.get_secret_value() if key else None,
        prefer_grpc=settings.qdrant_prefer_grpc,
        grpc_port=settings.qdrant_grpc_port,
        timeout=int(settings.qdrant_timeout_s),
    )
