"""The index contract on the server backends: OpenSearch (live node) and qdrant-client.

The dense contract runs on qdrant-client's local mode: no Qdrant server binary
can be installed here. The engine code is the one a server uses; only the
client's constructor (``QdrantClient(url=...)`` in ``backends.qdrant_client``)
differs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch
from qdrant_client import QdrantClient

from services.retriever.engines.opensearch_sparse import OpenSearchSparseIndex
from services.retriever.engines.qdrant_dense import QdrantDenseIndex
from tests.engine_contract import (  # noqa: F401  (collected here with this module's fixture)
    CORPUS,
    EMBEDDER,
    Engine,
    rec,
    test_a_forbidden_best_match_never_takes_a_top_k_slot,
    test_a_sparse_index_hands_back_a_documents_chunks_within_its_tenant,
    test_an_index_replaces_a_documents_chunks_within_its_tenant,
    test_delete_is_scoped_to_the_tenant,
    test_groups_widen_what_a_caller_sees,
    test_only_a_dense_index_keeps_each_chunks_unit_vectors,
    test_only_chunks_the_scope_admits_are_candidates,
    test_ranks_start_at_one_and_scores_do_not_increase,
    test_the_effective_window_follows_as_of,
    test_the_index_survives_a_reopen,
    test_the_same_chunk_id_in_another_tenant_is_another_chunk,
    test_upsert_replaces_by_chunk_id_and_delete_removes_a_document,
)


class LocalQdrant:
    """qdrant-client local mode on disk; reopening closes and reloads the client."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.client: QdrantClient | None = None

    def open(self) -> QdrantDenseIndex:
        if self.client is not None:
            self.client.close()
        self.client = QdrantClient(path=str(self.path))
        return QdrantDenseIndex(self.client, "contract", dim=EMBEDDER.dim)


@pytest.fixture(params=["opensearch", "qdrant-local"])
def engine(request: pytest.FixtureRequest, tmp_path: Path, unique: str) -> Iterator[Engine]:
    if request.param == "opensearch":
        client: OpenSearch = request.getfixturevalue("opensearch")
        e = Engine(lambda: OpenSearchSparseIndex(client, unique), dense=False)
        e.upsert(CORPUS)
        yield e
        client.indices.delete(index=unique)
    else:
        local = LocalQdrant(tmp_path / "qdrant")
        e = Engine(local.open, dense=True)
        e.upsert(CORPUS)
        yield e
        assert local.client is not None
        local.client.close()


def test_opensearch_replaces_a_document_in_one_bulk_request(
    opensearch: OpenSearch, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No delete-by-query, and so no refresh between the old version and the new."""
    index = OpenSearchSparseIndex(opensearch, unique)
    try:
        index.upsert([rec("policy#1", "Hotels up to 180 euros."), rec("policy#2", "Meals.")])
        calls: list[str] = []
        for name in ("bulk", "delete_by_query"):
            real = getattr(opensearch, name)

            def counted(*args: Any, _name: str = name, _real: Any = real, **kw: Any) -> Any:
                calls.append(_name)
                return _real(*args, **kw)

            monkeypatch.setattr(opensearch, name, counted)
        index.replace_documents([("acme", "policy")], [rec("policy#1", "Hotels up to 200 euros.")])
        assert calls == ["bulk"]
        assert [c.text for c in index.document_chunks("acme", "policy")] == [
            "Hotels up to 200 euros."
        ]
    finally:
        opensearch.indices.delete(index=unique)
