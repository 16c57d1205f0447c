from __future__ import annotations

from ragway.text import content_terms, numbers, split_sentences


def test_sentences_split_at_terminators_and_lines_but_skip_code_and_headings() -> None:
    text = (
        "# Title\nFirst sentence here. Second one follows!\n"
        "- a list item stands alone\n```\ncode. not a sentence.\n```\n| a | b |\n|---|---|"
    )
    assert split_sentences(text) == [
        "First sentence here.",
        "Second one follows!",
        "a list item stands alone",
        "| a | b |",
    ]


def test_content_terms_drop_function_words_and_share_stems_with_bm25() -> None:
    assert content_terms("How do I resume the streams?") == {"resum", "stream"}
    assert content_terms("Resuming a stream") == {"resum", "stream"}


def test_numbers_keep_units_and_decimals() -> None:
    assert numbers("Limit 180 euros, 2.5% and 10ms; v1 ignored") == ["180", "2.5%", "10ms"]
