from __future__ import annotations

from ragway.text import content_terms, split_sentences, stem, words


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


def test_a_word_with_accents_is_the_word_without_them() -> None:
    # Read as ASCII letters only, "Tūī" was the word "t" (too short to count) and
    # "Kōwhai" the words "k" and "whai": a camper the pages name had no term at all.
    assert words("Tūī 4 or Kōwhai 2") == ["tui", "4", "or", "kowhai", "2"]
    assert content_terms("Service en français") == content_terms("Service en francais")
    assert content_terms("How high is the Tui 4?") <= content_terms("How high is the Tūī 4?")
    # Only accents: a superscript or a footnote mark is no digit.
    assert words("38 m² in New Zealand¹") == ["38", "m", "in", "new", "zealand"]
