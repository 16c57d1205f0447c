"""A quote led by its passage's heading where the heading says what is asked.

Release notes keep the version and date in the heading, error-code pages the code
and its meaning; the chunker gives each heading's section its own passage, so the
heading is the passage's ``section`` and the sentences under it say neither.
"""

from __future__ import annotations

from services.generator.backends.base import Passage, Verdict
from tests.unit.services.generator.test_extractive import answer_of

RELEASES = [
    Passage(
        1,
        "changelog#4-2",
        "changelog",
        "Changelog",
        "Releases > 4.2 — 12 March 2026",
        "- Added dark mode to the web app.\n- Exports now include comments.",
    ),
    Passage(
        2,
        "changelog#4-1",
        "changelog",
        "Changelog",
        "Releases > 4.1 — 3 February 2026",
        "- Removed the legacy API v1. Use v2 instead.\n- Faster search on large workspaces.",
    ),
]
# A changelog in the "Keep a Changelog" way: the date is on the version's heading and
# the change under "Added".
SUBSECTIONS = [
    Passage(
        1,
        "app-release-notes#added",
        "app-release-notes",
        "Mobile app release notes",
        "5.3.0 — November 18, 2025 > Added",
        "- Sign in with **passkeys** on devices that support them.",
    ),
    Passage(
        2,
        "app-release-notes#changed",
        "app-release-notes",
        "Mobile app release notes",
        "5.3.0 — November 18, 2025 > Changed",
        "- The app now needs iOS 16 or later.",
    ),
]
ERRORS = [
    Passage(
        3,
        "sync-errors#qp-402",
        "sync-errors",
        "Sync errors",
        "Error codes > `QP-402` — Storage limit reached",
        "Your workspace has used all of its storage, so new images and files can't be "
        "uploaded.\n\nTo fix it: Go to Settings → Plans → Storage to see which pages use "
        "the most space.",
    ),
    Passage(
        4,
        "sync-errors#qp-415",
        "sync-errors",
        "Sync errors",
        "Error codes > `QP-415` — File type not supported",
        "The file you tried to attach isn't one we can store. Convert it to PDF, PNG or "
        "JPG and try again.",
    ),
]


def test_asked_when_a_release_note_is_quoted_after_its_dated_heading() -> None:
    # Before: "Added dark mode to the web app. [1]", without the date asked for.
    final = answer_of("When was dark mode added?", RELEASES)
    assert final.answer == "4.2 — 12 March 2026: Added dark mode to the web app. [1]"


def test_an_error_code_the_question_gives_brings_its_headings_meaning() -> None:
    # Before: the sentence under the heading, without "Storage limit reached".
    final = answer_of("I get QP-402 when I add an image. What's wrong?", ERRORS)
    assert final.verdict is Verdict.GROUNDED
    assert final.answer.startswith("QP-402 — Storage limit reached: ")
    assert "QP-415" not in final.answer


def test_a_heading_is_not_quoted_where_the_question_asks_nothing_it_holds() -> None:
    final = answer_of("The file I tried to attach is not one you can store. What do I do?", ERRORS)
    # Answered from the QP-415 section, by its own sentence: no code asked, no value.
    assert final.verdict is Verdict.GROUNDED and final.cited_passages == [4]
    assert "QP-415" not in final.answer and "not supported" not in final.answer


def test_a_release_note_under_added_is_quoted_after_its_versions_dated_heading() -> None:
    # Before: only the last heading, "Added", was read, and the answer had no date.
    final = answer_of("When did the app start supporting passkeys?", SUBSECTIONS)
    assert final.answer == (
        "5.3.0 — November 18, 2025: Sign in with passkeys on devices that support them. [1]"
    )
