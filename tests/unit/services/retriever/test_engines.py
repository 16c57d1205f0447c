"""Contract tests on the embedded engines: tantivy BM25 and the qdrant-edge shard."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from services.retriever.engines.edge_dense import EdgeDenseIndex
from services.retriever.engines.tantivy_sparse import TantivySparseIndex, sanitize_query
from services.retriever.model import AccessScope
from tests.engine_contract import (  # noqa: F401  (collected here with this module's fixture)
    CORPUS,
    EMBEDDER,
    QUERY,
    SCOPE,
    Engine,
    ids,
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


@pytest.fixture(params=["sparse", "dense"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    if request.param == "sparse":
        e = Engine(lambda: TantivySparseIndex(tmp_path / "sparse"), dense=False)
    else:
        e = Engine(lambda: EdgeDenseIndex(tmp_path / "dense", dim=EMBEDDER.dim), dense=True)
    e.upsert(CORPUS)
    yield e
    e.index.close()


def test_query_syntax_in_questions_is_neutralised() -> None:
    assert sanitize_query('title:"hotel" AND (night OR -euros)') == "title hotel and night or euros"


def test_tantivy_replaces_a_documents_chunks_in_one_commit(tmp_path: Path) -> None:
    index = TantivySparseIndex(tmp_path / "sparse")
    index.upsert(
        [
            rec("policy#1", "Hotels up to 180 euros per night."),
            rec("policy#2", "Hotel rule for executives per night."),
            rec(
                "policy#9", "Hotels up to 310 euros per night for hotel bookings.", tenant="globex"
            ),
        ]
    )
    commits: list[int] = []
    real_commit = index._commit

    def counted() -> None:
        commits.append(1)
        real_commit()

    index._commit = counted  # type: ignore[method-assign]
    index.replace_documents(
        [("acme", "policy")], [rec("policy#1", "Hotels up to 200 euros per night.")]
    )
    assert commits == [1]
    hits = index.search(QUERY, SCOPE, limit=10)
    assert ids(hits) == ["policy#1"] and "200 euros" in hits[0].chunk.text
    globex = AccessScope("globex", frozenset({"staff"}), as_of=SCOPE.as_of)
    assert ids(index.search(QUERY, globex, limit=10)) == ["policy#9"]
    index.close()


class _CountedFlushes:
    """The qdrant-edge shard (a Rust object: its methods cannot be patched) with its
    flushes counted."""

    def __init__(self, shard: object) -> None:
        self.shard = shard
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        self.shard.flush()  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self.shard, name)


def test_qdrant_edge_replaces_a_documents_points_with_one_flush(tmp_path: Path) -> None:
    def opener() -> EdgeDenseIndex:
        return EdgeDenseIndex(tmp_path / "dense", dim=EMBEDDER.dim)

    engine = Engine(opener, dense=True)
    engine.upsert(
        [
            rec("policy#1", "Hotels up to 180 euros per night."),
            rec("policy#2", "Hotel rule for executives per night."),
            rec("other#1", "Meals up to 40 euros a day."),
            rec("policy#9", "Hotels up to 310 euros per night.", tenant="globex"),
        ]
    )
    index = engine.index
    assert isinstance(index, EdgeDenseIndex)
    counted = _CountedFlushes(index._shard)
    index._shard = counted  # type: ignore[assignment]
    new = rec("policy#1", "Hotels up to 200 euros per night.")
    index.replace_documents(
        [("acme", "policy")], [new], EMBEDDER.embed([new.embedding_text]).tolist()
    )
    assert counted.flushes == 1
    index._shard = counted.shard  # type: ignore[assignment]
    globex = AccessScope("globex", frozenset({"staff"}), as_of=SCOPE.as_of)
    for _ in range(2):  # as written, and as the flush left it on disk
        hits = engine.search(QUERY, SCOPE, limit=10)
        assert sorted(ids(hits)) == ["other#1", "policy#1"]
        assert "200 euros" in next(h for h in hits if ids([h]) == ["policy#1"]).chunk.text
        assert ids(engine.search(QUERY, globex, limit=10)) == ["policy#9"]
        engine.reopen()
    engine.index.close()
