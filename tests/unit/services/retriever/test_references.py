"""A passage that sends the reader to another page brings that page into the context."""

from __future__ import annotations

from services.retriever.model import OPEN_END, ChunkRecord, Status
from services.retriever.search import Hit, _insert_followed, _references


def record(cid: str, text: str = "text") -> ChunkRecord:
    doc = cid.split("#")[0]
    return ChunkRecord(cid, doc, "t", ("g",), Status.CURRENT, 0, OPEN_END, "1", "", doc, "", text)


def hits(*records: ChunkRecord) -> list[Hit]:
    return [Hit(chunk=r, score=1.0 / (n + 1), fused=1.0 / (n + 1)) for n, r in enumerate(records)]


def test_a_reference_is_the_capitalised_name_after_see() -> None:
    found = _references(
        hits(
            record("huddles#size", "The number of people depends on the plan: see the Huddle "
                   "participants column in Plans and pricing."),
            record("faq#max", "That depends on your plan; see Lumen plans and pricing."),
            record("trash#a", "Files stay in the trash for 30 days (see [Deleted files](https://x/y))."),
        )
    )  # fmt: skip
    assert found == [
        (0, "Huddle participants column in Plans and pricing"),
        (1, "Lumen plans and pricing"),
    ]  # at most two references are followed


def test_a_reference_written_in_markdown_is_read_as_its_plain_words() -> None:
    # As the page is written: emphasis, a link and a line break inside the reference.
    found = _references(
        hits(
            record(
                "huddles#size",
                "The number of people who can be in one huddle depends on the plan: see the\n"
                "**Huddle participants** column in\n"
                "[Plans and pricing](https://help.northwind.example/plans-and-pricing). A huddle\n"
                "can last up to **8 hours**.",
            )
        )
    )
    assert found == [(0, "Huddle participants column in Plans and pricing")]


def test_lower_case_see_is_not_a_reference() -> None:
    assert _references(hits(record("a#1", "You will see a banner with the error code."))) == []


def test_the_referenced_page_lands_right_after_the_passage_naming_it() -> None:
    ranked = hits(record("huddles#size"), record("huddles#start"), record("guests#intro"))
    followed = {0: [record("huddles#start"), record("plans#intro")]}
    out = _insert_followed(ranked, [(0, "Plans and pricing")], followed, top_k=3)
    # The same document's chunk and chunks already shown are skipped; the page joins.
    assert [h.chunk.chunk_id for h in out] == [
        "huddles#size", "plans#intro", "huddles#start", "guests#intro",
    ]  # fmt: skip


def test_a_page_already_in_the_context_is_not_moved() -> None:
    ranked = hits(record("faq#max"), record("plans#intro"))
    out = _insert_followed(ranked, [(0, "Plans and pricing")], {0: [record("plans#intro")]}, 2)
    assert [h.chunk.chunk_id for h in out] == ["faq#max", "plans#intro"]
