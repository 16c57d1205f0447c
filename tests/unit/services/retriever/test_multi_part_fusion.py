"""A multi-part question's rankings take turns, each giving its best passage not yet taken."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from services.retriever.model import Candidate
from services.retriever.search import HybridSearcher
from tests.engine_contract import rec
from tests.unit.services.retriever.fakes import FakeEmbedder


def ranked(*chunk_ids: str) -> list[Candidate]:
    return [Candidate(rec(c, f"text of {c}"), 1.0 / n, n) for n, c in enumerate(chunk_ids, 1)]


def test_a_part_whose_best_passages_the_whole_question_took_still_gets_its_turns() -> None:
    # The whole question and part 1 both rank the storage page first; part 1's
    # second passage (the plans table, which holds its answer) must not lose its
    # turn to that duplicate.
    lists = {
        "sparse": ranked("storage#1", "guests#1", "roles#1"),
        "dense": ranked("storage#1", "guests#1", "roles#1"),
        "sparse.part1": ranked("storage#1", "plans#1", "guests#1"),
        "dense.part1": ranked("storage#1", "plans#1", "guests#1"),
        "sparse.part2": ranked("trash#1", "retention#1"),
        "dense.part2": ranked("trash#1", "retention#1"),
    }
    with ThreadPoolExecutor(1) as pool:
        searcher = HybridSearcher(FakeEmbedder(), pool)
        hits = searcher._fuse(lists, ["", ".part1", ".part2"], {})
    order = [h.chunk.chunk_id for h in hits]
    assert order[:3] == ["storage#1", "plans#1", "trash#1"]
    assert order == ["storage#1", "plans#1", "trash#1", "guests#1", "retention#1", "roles#1"]


def test_after_its_first_turn_the_whole_question_waits_for_the_parts() -> None:
    # Top 6 of a two-part question: the whole question's second hit was vaguely about
    # both parts and took the slot of a part's second passage, where that part's
    # answer often is ("how long are deleted files kept": the trash page's files
    # section, after its messages section).
    lists = {
        "sparse": ranked("whole#1", "whole#2", "whole#3"),
        "sparse.part1": ranked("plans#1", "plans#2", "plans#3"),
        "sparse.part2": ranked("trash#messages", "trash#files", "trash#restore"),
    }
    with ThreadPoolExecutor(1) as pool:
        searcher = HybridSearcher(FakeEmbedder(), pool)
        hits = searcher._fuse(lists, ["", ".part1", ".part2"], {})
    order = [h.chunk.chunk_id for h in hits]
    assert order[:6] == [
        "whole#1",
        "plans#1",
        "trash#messages",
        "plans#2",
        "trash#files",
        "plans#3",
    ]
    # Once the parts run dry, the whole question's other hits still come.
    assert order[6:] == ["trash#restore", "whole#2", "whole#3"]
