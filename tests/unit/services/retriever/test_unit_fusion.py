"""A hybrid search also fuses its candidates ranked by their best answer unit."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from ragway.embedding import OnnxMiniLMEmbedder
from ragway.kb import Defaults, discover, parse_document
from ragway.unit_vectors import embed_chunks, stored_vectors
from services.retriever.catalog import Build, BuildCatalog
from services.retriever.fusion import unit_ranking
from services.retriever.model import AccessScope, Candidate
from services.retriever.search import Hit, HybridSearcher, Mode, SearchOptions
from services.retriever.servicer import _record
from services.retriever.writes import Origin, upsert
from tests.engine_contract import rec
from tests.unit.services.retriever.fakes import DIM, FakeEmbedder

HELPCENTRE = Path(__file__).parents[4] / "eval" / "helpcentre" / "kb"
LUMEN_PUBLIC = AccessScope("lumen", frozenset({"public"}))


def with_units(embedder: FakeEmbedder, cid: str, text: str) -> Candidate:
    record = rec(cid, text)
    (blob,) = embed_chunks(embedder, [(record.title, record.section, record.text)])
    return Candidate(replace(record, unit_vectors=blob), 1.0, 1)


def test_candidates_rank_by_their_best_unit_and_those_without_vectors_stay_out() -> None:
    embedder = FakeEmbedder()
    pets = with_units(embedder, "pets#1", "Dogs are welcome. Cats stay free.")
    parking = with_units(embedder, "parking#1", "Parking costs 10 EUR a night.")
    plain = Candidate(rec("faq#1", "Ask the front desk."), 2.0, 2)  # the sparse record only
    # The question's vector is one unit's own: that chunk is first, at cosine 1.
    question = np.asarray(embedder.vector("Hotel policy: Cats stay free."), dtype=np.float32)
    ranked = unit_ranking({"sparse": [plain, parking], "dense": [pets]}, question)
    assert [c.chunk.chunk_id for c in ranked] == ["pets#1", "parking#1"]
    assert [c.rank for c in ranked] == [1, 2]
    assert ranked[0].score == pytest.approx(1.0, abs=1e-3)  # float16 storage


def test_the_record_with_vectors_is_read_whichever_list_brought_it_first() -> None:
    embedder = FakeEmbedder()
    dense = with_units(embedder, "pets#1", "Cats stay free.")
    sparse = Candidate(replace(dense.chunk, unit_vectors=b""), 3.0, 1)
    question = np.asarray(embedder.vector("Hotel policy: Cats stay free."), dtype=np.float32)
    (only,) = unit_ranking({"sparse": [sparse], "dense": [dense]}, question)
    assert only.chunk.unit_vectors == dense.chunk.unit_vectors


def test_a_blob_of_another_dimension_or_a_damaged_one_is_not_read() -> None:
    embedder = FakeEmbedder()
    (blob,) = embed_chunks(embedder, [("T", "S", "One sentence. Another one.")])
    vectors = stored_vectors(blob, DIM)
    assert vectors is not None and vectors.shape == (2, DIM)
    assert stored_vectors(blob, DIM * 2) is None
    assert stored_vectors(blob[:-2], DIM) is None
    assert stored_vectors(b"XXX" + blob[3:], DIM) is None
    assert stored_vectors(b"RU1", DIM) is None


@pytest.fixture(scope="module")
def helpcentre(tmp_path_factory: pytest.TempPathFactory) -> tuple[Build, OnnxMiniLMEmbedder]:
    """The help-centre fixture's pages (both tenants), chunked and embedded as a build
    stores them: with the packaged MiniLM, the embedded engines and the units' vectors."""
    embedder = OnnxMiniLMEmbedder()
    catalog = BuildCatalog(
        tmp_path_factory.mktemp("helpcentre"), embedding_model=embedder.model_id, dim=embedder.dim
    )
    build = catalog.open(catalog.ensure_live("b-helpcentre"))
    docs = [parse_document(p, r, Defaults()) for p, r in discover([HELPCENTRE])]
    upsert(build, embedder, [_record(c) for d in docs for c in d.chunks], Origin.BULK)
    return build, embedder


def search(
    helpcentre: tuple[Build, OnnxMiniLMEmbedder], question: str, *, unit_fusion: bool, mode: Mode
) -> list[Hit]:
    build, embedder = helpcentre
    options = SearchOptions(top_k=3, mode=mode, rerank=False)
    with ThreadPoolExecutor(2) as pool:
        searcher = HybridSearcher(embedder, pool, unit_fusion=unit_fusion)
        return asyncio.run(searcher.search(build, question, LUMEN_PUBLIC, options)).hits


def test_the_page_whose_table_row_answers_comes_first(
    helpcentre: tuple[Build, OnnxMiniLMEmbedder],
) -> None:
    # A tuning question of the help-centre QA set: the FAQ talks about meetings and
    # their participants as a whole, and both its BM25 and its chunk vector lead; the
    # plans table's "Participants per meeting" row is the one unit that answers.
    question = "How many participants can join a meeting on Lumen Free?"
    fused = search(helpcentre, question, unit_fusion=True, mode=Mode.HYBRID)
    chunks_only = search(helpcentre, question, unit_fusion=False, mode=Mode.HYBRID)
    assert fused[0].chunk.document_id == "lumen/plans-and-pricing"
    assert chunks_only[0].chunk.document_id == "lumen/meetings-faq"
    assert fused[0].units is not None and fused[0].units[0] == 1
    assert all(h.units is None for h in chunks_only)


def test_a_dense_only_search_stays_a_single_retriever(
    helpcentre: tuple[Build, OnnxMiniLMEmbedder],
) -> None:
    # The modes of one retriever are the baselines `ragway eval retrieval` reports.
    question = "How many participants can join a meeting on Lumen Free?"
    hits = search(helpcentre, question, unit_fusion=True, mode=Mode.DENSE)
    assert hits and all(h.units is None and h.sparse is None for h in hits)
