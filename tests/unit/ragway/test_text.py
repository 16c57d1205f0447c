from __future__ import annotations

from ragway.text import content_terms, split_sentences, stem


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


def test_the_plural_of_an_acronym_meets_its_singular() -> None:
    # Snowball leaves "pdfs" alone (no vowel before the s): "PDFs up to 300 pages"
    # never covered a question about "a PDF".
    for plural, singular in (("pdfs", "pdf"), ("sdks", "sdk"), ("sres", "sre"), ("apis", "api")):
        assert stem(plural) == stem(singular), plural
    for kept in ("status", "access", "class"):
        assert stem(kept) == kept, kept
