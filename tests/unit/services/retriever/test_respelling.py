"""A misspelt question is searched again as the candidates spell it (retriever search)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from services.retriever.catalog import BuildCatalog
from services.retriever.model import AccessScope, Candidate
from services.retriever.search import HybridSearcher, Mode, SearchOptions, _respelt
from tests.engine_contract import rec
from tests.unit.services.retriever.fakes import DIM, FakeEmbedder, MemoryEngines

SCOPE = AccessScope("acme", frozenset({"staff"}))


def test_a_misspelt_word_is_spelt_as_the_candidates_spell_it() -> None:
    lists = {
        "sparse": [Candidate(rec("keys#1", "Disabled keys get the error code key_disabled."), 1, 1)]
    }
    assert _respelt("which code does a disabeld api key get", lists) == (
        "which code does a disabled api key get"
    )
    # Spelt right already, or no candidate spells it: no second search.
    assert _respelt("which code does a disabled api key get", lists) is None
    assert _respelt("which code does a frobnicatd api key get", lists) is None
    # No candidate spells it, but it is one slip from one English word: searched as
    # that word, which a passage outside the candidates may hold.
    assert _respelt("which code does a revokd api key get", lists) == (
        "which code does a revoked api key get"
    )


def test_a_passage_only_the_right_spelling_reaches_joins_the_hits(tmp_path: Path) -> None:
    catalog = BuildCatalog(tmp_path, embedding_model="fake", dim=DIM, engines=MemoryEngines())
    build = catalog.open(catalog.ensure_live("b-first"))
    build.sparse.upsert(
        [
            rec("keys#list", "the keys page lists every api key"),
            rec("keys#codes", "disabled keys get the code key_disabled"),
            # No word of the misspelt question: only "disabled" reaches it.
            rec("accounts#off", "a disabled account cannot sign in"),
        ]
    )
    options = SearchOptions(top_k=5, mode=Mode.SPARSE, rerank=False)
    with ThreadPoolExecutor(2) as pool:
        searcher = HybridSearcher(FakeEmbedder(), pool)
        misspelt = asyncio.run(searcher.search(build, "disabeld api code", SCOPE, options))
        right = asyncio.run(searcher.search(build, "api code", SCOPE, options))
    assert "accounts#off" in [h.chunk.chunk_id for h in misspelt.hits]
    assert "sparse_respelt" in misspelt.timings_ms
    # A question with nothing to respell is searched once.
    assert "accounts#off" not in [h.chunk.chunk_id for h in right.hits]
    assert "sparse_respelt" not in right.timings_ms
