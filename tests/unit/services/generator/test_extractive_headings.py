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


# An error-code table, with the pages a search for an upload problem also brings.
CODE_TABLE = [
    Passage(
        1,
        "app-error-codes#intro",
        "app-error-codes",
        "App error codes",
        "",
        "| Code | Message | What to do |\n| --- | --- | --- |\n"
        "| TW-404 | Upload failed | Each photo or document must be under 15 MB, in JPG, PNG, "
        "HEIC or PDF format. |\n"
        "| TW-409 | Upload limit reached | A claim can hold 30 files. Send anything else to "
        "your adjuster by email. |\n"
        "| TW-500 | Something went wrong on our end | Try again in a few minutes. |",
    ),
    Passage(
        2,
        "privacy#how-long",
        "privacy",
        "Privacy notice",
        "How long we keep it",
        "We keep information only as long as we need it:\n\n- quotes you didn't buy: 13 "
        "months from the quote date;\n- claim files: 10 years after the claim is closed;\n"
        "- app sign-in logs: 12 months.",
    ),
    Passage(
        3,
        "making-a-claim#upload",
        "making-a-claim",
        "How to make a claim",
        "Steps",
        "4. Upload your photos and documents. In the app you can add up to 30 photos and "
        "documents to your claim, each up to 15 MB.",
    ),
]


def test_an_error_code_the_question_gives_is_answered_by_its_own_row() -> None:
    # Before: refused ("does not answer this question clearly enough"): the support of
    # a long row against a statement is low, though the row is keyed by the very code.
    final = answer_of("Getting TW-409 when I add another receipt to my claim", CODE_TABLE)
    assert final.verdict is Verdict.GROUNDED
    assert final.answer.startswith("TW-409 — Message: Upload limit reached")
    # A code no row has is not answered by another code's row.
    other = answer_of("Getting TW-777 when I add another receipt to my claim", CODE_TABLE)
    assert "TW-409" not in other.answer


def test_a_code_row_the_answer_leads_with_answers_though_a_sentence_says_more() -> None:
    # Before: refused. The row keyed TH-412 ranked first and leads the answer, but a
    # sentence of another page had more support, and only that sentence was asked
    # whether it is keyed by the code.
    codes = Passage(
        1, "booking-errors#codes", "booking-errors", "Booking error codes", "",
        "| Code | What it means | What to do |\n| --- | --- | --- |\n"
        "| TH-409 | The gear is already booked for those dates | Pick other dates. |\n"
        "| TH-412 | A rider doesn't meet the age limit for this gear | See Sizing, age "
        "and weight limits. |\n",
    )  # fmt: skip
    riders = Passage(
        2, "reservations#riders", "reservations", "Reservations", "Adding riders",
        "Every rider needs a waiver. Add their name to the reservation first, then send "
        "them the waiver link.",
    )  # fmt: skip
    question = "I get TH-412 when I add my son to the reservation. Why?"
    final = answer_of(question, [codes, riders])
    assert final.verdict is Verdict.GROUNDED
    assert "A rider doesn't meet the age limit" in final.answer


def test_an_error_code_with_a_letter_in_its_number_is_a_code_too() -> None:
    # Before: "HB-E804" was no identifier (a letter after the hyphen), so its own row
    # went to the answerability model, which refused the statement-shaped question.
    codes = [
        Passage(
            1, "app-error-codes#codes", "app-error-codes", "App error codes", "Codes",
            "When something goes wrong, the app shows a code starting with HB-E.\n\n"
            "| Code | Message | What to do |\n| --- | --- | --- |\n"
            "| HB-E203 | We couldn't read your health card | Retake the photo in good light. |\n"
            "| HB-E720 | Too many sign-in attempts | Wait 15 minutes, then try again. |\n"
            "| HB-E804 | This app version is no longer supported | Update the app from the "
            "App Store or Google Play. |",
        ),
        Passage(
            2, "health-cards#verify", "health-cards", "Adding your health card", "Steps",
            "3. Take a photo of the front of the card. We verify most cards within a few "
            "seconds; if we can't, you'll see error HB-E203.",
        ),
    ]  # fmt: skip
    final = answer_of("My phone shows error HB-E804 when I open Healthbridge.", codes)
    assert final.verdict is Verdict.GROUNDED
    assert "Update the app" in final.answer
