"""Pseudo-queries from a knowledge base's own structure, and their held-out split."""

from __future__ import annotations

import pytest

from ragway_tools.training import pseudo
from ragway_tools.training.pseudo import SourceChunk

TABLE = """| Plan | Storage | Price per seat |
|------|---------|----------------|
| **Free** | 5 GB | $0 |
| Business | 100 GB per seat | $9 |"""

CHUNKS = [
    SourceChunk(
        "nw", "nw/deleted-files", "nw/deleted-files#restore", "Deleted files", "Restore a file",
        "Deleted files stay in the trash for 30 days before they are purged. "
        "Owners can restore them from the admin console.",
    ),
    SourceChunk("nw", "nw/plans", "nw/plans#compare", "Plans and pricing", "Compare plans", TABLE),
    SourceChunk(
        "nw", "nw/sso", "nw/sso#intro", "Single sign-on", "",
        "SAML certificates rotate yearly. Owners get an email 21 days before expiry.",
    ),
]  # fmt: skip


def by_kind(queries: list[pseudo.PseudoQuery], kind: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for q in queries:
        if q.kind == kind:
            out.setdefault(q.chunk_id, []).append(q.query)
    return out


def test_headings_become_search_box_queries() -> None:
    headings = by_kind(pseudo.generate(CHUNKS), "heading")
    assert headings["nw/deleted-files#restore"] == ["Deleted files Restore a file"]
    assert headings["nw/sso#intro"] == ["Single sign-on"]


def test_a_first_sentence_asks_for_the_rest_of_its_section() -> None:
    firsts = by_kind(pseudo.generate(CHUNKS), "first-sentence")
    assert firsts["nw/deleted-files#restore"] == [
        "Deleted files stay in the trash for 30 days before they are purged."
    ]
    assert "nw/plans#compare" not in firsts  # a table has no first sentence
    # The positive the model sees for that query no longer holds the sentence.
    rendered = pseudo.render(CHUNKS[0], "first-sentence")
    assert "30 days" not in rendered and "admin console" in rendered
    assert rendered.startswith("Deleted files > Restore a file\n")
    # Every other kind sees the passage exactly as the retriever reranks it.
    assert pseudo.render(CHUNKS[0], "keyphrase") == CHUNKS[0].passage


def test_table_rows_are_asked_by_row_key_and_column() -> None:
    rows = by_kind(pseudo.generate(CHUNKS), "table-row")["nw/plans#compare"]
    assert rows == ["Free Storage", "Free Price per seat", "Business Storage",
                    "Business Price per seat"]  # fmt: skip


def test_a_terse_delimiter_row_is_no_table_row() -> None:
    terse = SourceChunk(
        "nw", "nw/limits", "nw/limits#a", "Limits", "", "| Plan | Seats |\n|-|:-:|\n| Pro | 50 |"
    )
    assert pseudo.table_row_queries(terse) == ["Pro Seats"]


def test_key_phrases_prefer_words_distinctive_to_the_chunk() -> None:
    phrases = by_kind(pseudo.generate(CHUNKS), "keyphrase")
    words = phrases["nw/sso#intro"][0].split()
    assert 2 <= len(words) <= 4
    # "owners" is in two of three chunks: weaker evidence than the SSO-only words.
    assert "owners" not in words
    assert {"saml", "certificates"} & set(words)


def test_pseudo_queries_are_made_for_one_tenant_at_a_time() -> None:
    other = SourceChunk("lumen", "l/x", "l/x#a", "Webinars", "", "Webinars have 500 seats.")
    with pytest.raises(ValueError, match="per tenant"):
        pseudo.generate([*CHUNKS, other])
    with pytest.raises(ValueError, match="unknown pseudo-query kind"):
        pseudo.generate(CHUNKS, kinds=["questions"])


def test_the_held_out_slice_is_by_chunk_and_stable() -> None:
    queries = pseudo.generate(CHUNKS * 1)
    many = [
        pseudo.PseudoQuery("nw", f"c{i}", kind, f"q{i} {kind}")
        for i in range(400)
        for kind in ("heading", "keyphrase")
    ]
    train, heldout = pseudo.split(many, 0.2)
    assert 0.12 < len(heldout) / len(many) < 0.28
    held_chunks = {q.chunk_id for q in heldout}
    assert not held_chunks & {q.chunk_id for q in train}  # no chunk on both sides
    assert pseudo.split(many, 0.2) == (train, heldout)  # deterministic
    assert pseudo.split(queries, 0.0) == (queries, [])
