from __future__ import annotations

from ragway.v1 import retriever_pb2
from services.gateway.runs.context import pack


def hit(cid: str, text: str) -> retriever_pb2.SearchHit:
    return retriever_pb2.SearchHit(chunk_id=cid, document_id=cid, text=text)


def test_duplicates_are_dropped_and_passages_numbered_in_rank_order() -> None:
    hits = [hit("a", "Same  text."), hit("b", "same text."), hit("c", "Other text.")]
    packed = pack(hits, token_budget=1000, limit=10)
    assert [(p.number, p.hit.chunk_id) for p in packed] == [(1, "a"), (2, "c")]


def test_the_token_budget_bounds_the_context_but_a_shorter_passage_may_still_fit() -> None:
    hits = [hit("a", "w " * 50), hit("b", "w " * 80), hit("c", "x " * 10)]
    packed = pack(hits, token_budget=85, limit=10)
    assert [p.hit.chunk_id for p in packed] == ["a", "c"]


def test_the_first_passage_is_kept_even_when_it_alone_exceeds_the_budget() -> None:
    assert [p.hit.chunk_id for p in pack([hit("a", "w " * 500)], token_budget=100, limit=5)] == [
        "a"
    ]


def test_the_limit_caps_the_number_of_passages() -> None:
    hits = [hit(str(i), f"text {i}") for i in range(10)]
    assert len(pack(hits, token_budget=10_000, limit=3)) == 3
