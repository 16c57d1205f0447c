"""The index contract: every sparse and dense backend honours the same access rule and writes.

Not collected itself; ``tests/unit/test_engines.py`` (embedded engines) and
``tests/integration/backends/test_contract.py`` (OpenSearch, qdrant-client) import
the tests and supply an ``engine`` fixture.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import cast

import pytest

from ragway.embedding import OnnxMiniLMEmbedder
from ragway.unit_vectors import embed_chunks, unit_texts, unpack
from services.retriever.indexes import (
    ChunkSource,
    DenseIndex,
    DenseReplacer,
    DocumentReplacer,
    SparseIndex,
)
from services.retriever.model import OPEN_END, AccessScope, Candidate, ChunkRecord, Status

EMBEDDER = OnnxMiniLMEmbedder()
NOW = 1_800_000_000


def rec(cid: str, text: str, **kw: object) -> ChunkRecord:
    base = ChunkRecord(
        chunk_id=cid,
        document_id=cid.split("#")[0],
        tenant="acme",
        access_groups=("staff",),
        status=Status.CURRENT,
        effective_from=0,
        effective_to=OPEN_END,
        version="1",
        url="",
        title="Hotel policy",
        section="",
        text=text,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


CORPUS = [
    rec("visible#1", "Employees may book hotels up to 180 euros per night."),
    rec("other-tenant#1", "Hotels up to 310 euros per night for hotel bookings.", tenant="globex"),
    rec(
        "restricted#1",
        "Hotel booking limit per night: 500 euros for executives.",
        access_groups=("hr",),
    ),
    rec("deprecated#1", "Hotels up to 120 euros per night, hotel rule.", status=Status.DEPRECATED),
    rec("future#1", "Hotels up to 240 euros per night from next year.", effective_from=NOW + 100),
    rec("expired#1", "Hotels up to 90 euros per night, hotel per night.", effective_to=NOW - 100),
    rec("unrelated#1", "The cafeteria opens at eight.", title="Cafeteria"),
]
SCOPE = AccessScope("acme", frozenset({"staff"}), as_of=NOW)
QUERY = "hotel limit per night euros"


class Engine:
    """One index behind the contract: opened (and reopened) by ``opener``."""

    def __init__(self, opener: Callable[[], SparseIndex | DenseIndex], *, dense: bool) -> None:
        self.opener = opener
        self.dense = dense
        self.index = opener()

    def upsert(self, chunks: list[ChunkRecord]) -> None:
        if self.dense:
            vectors = EMBEDDER.embed([c.embedding_text for c in chunks])
            cast(DenseIndex, self.index).upsert(chunks, vectors.tolist())
        else:
            cast(SparseIndex, self.index).upsert(chunks)

    def search(self, query: str, scope: AccessScope, limit: int) -> list[Candidate]:
        if self.dense:
            vector = EMBEDDER.embed([query])[0].tolist()
            return cast(DenseIndex, self.index).search(vector, scope, limit)
        return cast(SparseIndex, self.index).search(query, scope, limit)

    def reopen(self) -> None:
        self.index.close()
        self.index = self.opener()


def ids(cands: list[Candidate]) -> list[str]:
    return [c.chunk.chunk_id for c in cands]


def test_only_chunks_the_scope_admits_are_candidates(engine: Engine) -> None:
    found = ids(engine.search(QUERY, SCOPE, limit=10))
    admitted = {c.chunk_id for c in CORPUS if SCOPE.admits(c)}
    assert set(found) <= admitted
    assert found[0] == "visible#1"


def test_a_forbidden_best_match_never_takes_a_top_k_slot(engine: Engine) -> None:
    # limit=1: were the filter applied after the search, a better forbidden
    # match would fill the only slot and the caller would get nothing.
    assert ids(engine.search(QUERY, SCOPE, limit=1)) == ["visible#1"]


def test_groups_widen_what_a_caller_sees(engine: Engine) -> None:
    hr = AccessScope("acme", frozenset({"staff", "hr"}), as_of=NOW)
    assert "restricted#1" in ids(engine.search(QUERY, hr, limit=10))


def test_the_effective_window_follows_as_of(engine: Engine) -> None:
    later = AccessScope("acme", frozenset({"staff"}), as_of=NOW + 200)
    assert "future#1" in ids(engine.search(QUERY, later, limit=10))
    earlier = AccessScope("acme", frozenset({"staff"}), as_of=NOW - 200)
    assert "expired#1" in ids(engine.search(QUERY, earlier, limit=10))


def test_upsert_replaces_by_chunk_id_and_delete_removes_a_document(engine: Engine) -> None:
    engine.upsert([rec("visible#1", "Employees may book hotels up to 200 euros per night.")])
    hits = engine.search(QUERY, SCOPE, limit=10)
    assert ids(hits).count("visible#1") == 1
    assert "200 euros" in hits[0].chunk.text
    assert engine.index.delete_documents("acme", ["visible"]) == 1
    assert "visible#1" not in ids(engine.search(QUERY, SCOPE, limit=10))
    assert engine.index.delete_documents("acme", ["visible"]) == 0  # idempotent


def test_delete_is_scoped_to_the_tenant(engine: Engine) -> None:
    assert engine.index.delete_documents("acme", ["other-tenant"]) == 0
    globex = AccessScope("globex", frozenset({"staff"}), as_of=NOW)
    assert ids(engine.search(QUERY, globex, limit=10)) == ["other-tenant#1"]


def test_the_index_survives_a_reopen(engine: Engine) -> None:
    before = ids(engine.search(QUERY, SCOPE, limit=10))
    engine.reopen()
    assert ids(engine.search(QUERY, SCOPE, limit=10)) == before
    assert engine.index.count() == len(CORPUS)


def test_ranks_start_at_one_and_scores_do_not_increase(engine: Engine) -> None:
    hits = engine.search(QUERY, AccessScope("acme", frozenset({"staff", "hr"}), as_of=NOW), 10)
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_the_same_chunk_id_in_another_tenant_is_another_chunk(engine: Engine) -> None:
    # Chunk ids are the document's id and section: two tenants may well share one.
    engine.upsert(
        [
            rec(
                "visible#1",
                "Globex staff may book hotels up to 400 euros per night.",
                tenant="globex",
            )
        ]
    )
    globex = AccessScope("globex", frozenset({"staff"}), as_of=NOW)
    mine = engine.search(QUERY, SCOPE, limit=10)
    assert ids(mine)[0] == "visible#1" and "180 euros" in mine[0].chunk.text
    theirs = [c for c in engine.search(QUERY, globex, limit=10) if c.chunk.chunk_id == "visible#1"]
    assert len(theirs) == 1 and "400 euros" in theirs[0].chunk.text
    assert engine.index.count() == len(CORPUS) + 1
    # Deleting the document in one tenant leaves the other's alone.
    assert engine.index.delete_documents("globex", ["visible"]) == 1
    assert "180 euros" in engine.search(QUERY, SCOPE, limit=10)[0].chunk.text


def test_a_sparse_index_hands_back_a_documents_chunks_within_its_tenant(engine: Engine) -> None:
    # UpdateAccess rewrites a document's groups or status from the chunks read
    # back here; a sparse backend without it loses access changes.
    if engine.dense:
        pytest.skip("only sparse indexes hand chunks back (ChunkSource)")
    index = engine.index
    assert isinstance(index, ChunkSource)
    second = rec("visible#2", "Hotel bookings need a receipt.")
    engine.upsert([second, rec("visible#1", "Globex hotels: 400 euros.", tenant="globex")])
    assert index.document_chunks("acme", "visible") == [CORPUS[0], second]
    assert [c.text for c in index.document_chunks("globex", "visible")] == [
        "Globex hotels: 400 euros."
    ]
    assert index.document_chunks("acme", "no-such-document") == []
    assert index.document_chunks("globex", "restricted") == []  # acme's, not globex's


def test_only_a_dense_index_keeps_each_chunks_unit_vectors(engine: Engine) -> None:
    # The generator scores answer units with the vectors stored at write time
    # (ragway/unit_vectors.py); a dense engine that dropped them would leave every
    # cold question to embed its units again.
    chunk = CORPUS[0]
    blob = embed_chunks(EMBEDDER, [(chunk.title, chunk.section, chunk.text)])[0]
    assert blob
    engine.upsert([replace(chunk, unit_vectors=blob)])
    if not engine.dense:
        # The sparse schemas are fixed per build (tantivy's version, OpenSearch's
        # strict mapping): they keep none, and fusion takes the dense record.
        hits = engine.search(QUERY, SCOPE, limit=10)
        assert [c.chunk.unit_vectors for c in hits if c.chunk.chunk_id == "visible#1"] == [b""]
        return
    engine.reopen()
    found = {c.chunk.chunk_id: c.chunk for c in engine.search(QUERY, SCOPE, limit=10)}
    assert found["visible#1"].unit_vectors == blob
    texts = unit_texts(chunk.title, chunk.section, chunk.text)
    vectors = unpack(found["visible#1"].unit_vectors, EMBEDDER.model_id, texts)
    assert vectors is not None and vectors.shape == (len(texts), EMBEDDER.dim)
    # A chunk written without unit vectors reads back without them.
    assert found["unrelated#1"].unit_vectors == b""


def test_an_index_replaces_a_documents_chunks_within_its_tenant(engine: Engine) -> None:
    # A webhook's write (UpsertRequest.replace_documents): the document's other
    # chunks go and the new ones come in one call, and a reopened index has the same.
    engine.upsert([rec("visible#2", "Hotel bookings need a receipt per night.")])
    new = rec("visible#1", "Employees may book hotels up to 200 euros per night.")
    index = engine.index
    if engine.dense:
        assert isinstance(index, DenseReplacer)
        index.replace_documents(
            [("acme", "visible")], [new], EMBEDDER.embed([new.embedding_text]).tolist()
        )
    else:
        assert isinstance(index, DocumentReplacer)
        index.replace_documents([("acme", "visible")], [new])
    for _ in range(2):  # as written, then reopened
        found = engine.search(QUERY, SCOPE, limit=10)
        assert [c.chunk.text for c in found if c.chunk.document_id == "visible"] == [new.text]
        globex = AccessScope("globex", frozenset({"staff"}), as_of=NOW)
        assert ids(engine.search(QUERY, globex, limit=10)) == ["other-tenant#1"]
        assert engine.index.count() == len(CORPUS)
        engine.reopen()
    if engine.dense:
        with pytest.raises(ValueError, match="1 chunks but 0 vectors"):
            cast(DenseReplacer, engine.index).replace_documents([("acme", "visible")], [new], [])
