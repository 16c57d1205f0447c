from __future__ import annotations

from ragway.text import content_terms, split_sentences


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
