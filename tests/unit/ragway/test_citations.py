from __future__ import annotations

import pytest

from ragway.citations import cited, escape_literals, unescape, without_markers


def test_markers_are_single_numbers_or_lists_in_order_of_first_citation() -> None:
    assert cited("Heartbeats every 15 s [2]. Resume with Last-Event-ID [1, 2].") == [2, 1]


@pytest.mark.parametrize(
    ("page", "quoted"),
    [
        ('"steps": [5, 25, 50]', '"steps": \\[5, 25, 50]'),
        ("see note [3]", "see note \\[3]"),
        ("[ 7 ]", "\\[ 7 ]"),
    ],
)
def test_a_pages_bracketed_numbers_are_escaped_and_cite_nothing(page: str, quoted: str) -> None:
    assert escape_literals(page) == quoted
    assert cited(quoted) == []
    assert without_markers(quoted) == quoted
    assert unescape(quoted) == page


@pytest.mark.parametrize("text", ["[draft]", "a[i] = 1", "[1a]", "\\[4] already escaped", "[]"])
def test_brackets_that_could_not_be_a_citation_are_left_as_they_are(text: str) -> None:
    assert escape_literals(text) == text


def test_an_escaped_group_beside_a_real_marker_leaves_only_the_marker() -> None:
    answer = escape_literals('Send "steps": [5, 25, 50].') + " [1]"
    assert cited(answer) == [1]
    assert without_markers(answer, "") == 'Send "steps": \\[5, 25, 50]. '
