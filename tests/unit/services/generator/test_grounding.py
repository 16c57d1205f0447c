"""The output checks every answer passes: citations, numbers, sentence ends in a stream."""

from __future__ import annotations

import pytest

from services.generator.backends.base import Passage
from services.generator.grounding import (
    SentenceSplitter,
    attribute,
    check_answer,
    check_sentence,
    citations,
    numbers,
)

PASSAGES = {
    1: Passage(1, "policy#hotels", "policy", "Travel policy", "Hotels",
               "Hotels cost at most 180 euros per night, or 1,250 euros per week."),
    2: Passage(2, "policy#meals", "policy", "Travel policy", "Meals 2025",
               "The daily meal allowance is 45.50 euros."),
}  # fmt: skip


def test_citations_in_order_of_first_use_with_lists() -> None:
    assert citations("A [2]. B [1, 2] and [3][2].") == [2, 1, 3]
    assert citations("no citation here") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("180 euros [1]", {"180"}),  # the citation marker is not a number
        ("1,250 euros", {"1250"}),  # thousands separators
        ("45.50 or 45.5", {"45.5"}),  # trailing zeros
        ("in 2025.", {"2025"}),  # a full stop is not a decimal point
        ("3, 4 and 007", {"3", "4", "7"}),
        ("v1 and MiniLM-L6", set()),  # digits inside words are names, not numbers
    ],
)
def test_numbers_are_normalised_for_comparison(text: str, expected: set[str]) -> None:
    assert numbers(text) == expected


def test_a_sentence_with_its_numbers_in_the_cited_passage_is_grounded() -> None:
    check = check_sentence("A hotel costs at most 180 euros a night [1].", PASSAGES)
    assert check.grounded
    assert check.cited == [1]


def test_a_number_from_the_title_or_section_counts_as_evidence() -> None:
    assert check_sentence("In 2025 meals get 45.5 euros [2].", PASSAGES).grounded


def test_a_number_in_no_cited_passage_is_unsupported() -> None:
    check = check_sentence("Meals get 180 euros a day [2].", PASSAGES)
    assert not check.grounded
    assert check.unsupported == ["180"]


def test_a_number_only_in_a_passage_the_sentence_does_not_cite_is_unsupported() -> None:
    assert check_sentence("Hotels cost 45.50 euros [1].", PASSAGES).unsupported == ["45.5"]


def test_unknown_citations_are_removed_from_the_sentence_and_reported() -> None:
    check = check_sentence("Hotels cost at most 180 euros [1, 7] [9].", PASSAGES)
    assert check.text == "Hotels cost at most 180 euros [1]."
    assert check.unknown == [7, 9]
    assert check.cited == [1]
    assert check.grounded


def test_a_sentence_citing_only_unknown_passages_is_not_grounded() -> None:
    check = check_sentence("Hotels are cheap [9].", PASSAGES)
    assert check.text == "Hotels are cheap."
    assert check.cited == []
    assert not check.grounded


def test_the_splitter_waits_for_a_citation_that_follows_the_full_stop() -> None:
    splitter = SentenceSplitter()
    out: list[str] = []
    for piece in ["Hotels cost 18", "0.5", " euros.", " ", "[1", "]", " Meals", " are 45 [2]."]:
        out.extend(splitter.feed(piece))
    assert out == ["Hotels cost 180.5 euros. [1]"]
    assert splitter.flush() == "Meals are 45 [2]."


def test_the_splitter_ends_sentences_at_line_breaks_and_question_marks() -> None:
    splitter = SentenceSplitter()
    assert splitter.feed("- first item [1]\n- second item [2]\nWhy? Because [1]. ") == [
        "- first item [1]",
        "- second item [2]",
        "Why?",
    ]
    assert splitter.feed("x") == ["Because [1]."]


def test_check_answer_reads_an_uncited_sentence_with_the_next_one() -> None:
    # An extractive answer copies whole passage sentences; one may contain a full stop.
    checks = check_answer("Limit: 180 euros. per night [1]. Meals 45.50 euros [2].", PASSAGES)
    assert [(c.cited, c.grounded) for c in checks] == [([1], True), ([2], True)]
    (bad,) = check_answer("It costs 999 euros.", PASSAGES)
    assert bad.unsupported == ["999"]


def test_a_list_number_neither_ends_a_sentence_nor_counts_as_a_number() -> None:
    splitter = SentenceSplitter()
    assert splitter.feed("Steps:\n1. Reconnect with the header [1].\n2. Wait") == [
        "Steps:",
        "1. Reconnect with the header [1].",
    ]
    assert check_sentence("1. Hotels cost at most 180 euros [1].", PASSAGES).grounded


def test_an_uncited_sentence_is_attributed_to_the_passage_holding_its_terms() -> None:
    assert attribute("Hotels cost at most 180 euros per night.", PASSAGES, 0.8) == (1, 1.0)
    assert attribute("The meal allowance is daily.", PASSAGES, 0.8) == (2, 1.0)
    # Too little of it is in any passage, or too short to tell.
    assert attribute("Hotels in Paris have pools and spas.", PASSAGES, 0.8) is None
    assert attribute("Hotels cost.", PASSAGES, 0.8) is None
