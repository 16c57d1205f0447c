"""Feature tables answered by their yes and no marks, and steps asked by their number.

Written the way help centres write them: a plan matrix of ✓ and ✗ with alignment
colons in its delimiter row, and numbered steps with a nested list of choices.
"""

from __future__ import annotations

from services.generator.backends.base import Passage, Verdict
from tests.unit.services.generator.test_extractive import answer_of

MATRIX = Passage(
    1,
    "plans#compare",
    "plans",
    "Plans and pricing",
    "Compare plans",
    "| Plan | Price per seat | Storage | SSO | Audit log |\n"
    "|:-|-:|:-:|:-:|:-:|\n"
    "| Free | $0 | 5 GB | ✗ | ✗ |\n"
    "| Team | $8 | 100 GB | ✗ | ✓ |\n"
    "| Business | $15 | 1 TB | ✓ | ✓ |\n"
    "| Enterprise | Custom | Unlimited | ✓ | ✓ |\n\n"
    "Prices are per seat per month, billed annually. Monthly billing costs 20% more.",
)
EXPORT = Passage(
    2,
    "export#workspace",
    "export",
    "Exporting data",
    "Export your workspace",
    "Only Owners can export. To export your workspace:\n\n"
    "1. Go to **Settings → Data**.\n"
    "2. Click **Export** and pick a format:\n"
    "   - JSON (all messages and files)\n"
    "   - CSV (messages only)\n"
    "3. Wait for the email with your download link. The link is valid for 7 days.\n",
)


def test_which_rows_say_yes_is_answered_with_those_rows_only() -> None:
    # Before: "Free — SSO: ✗. Business — SSO: ✓. Enterprise — SSO: ✓.", the first
    # row of the table listed among the plans that include SSO.
    final = answer_of("Which plans include SSO?", [MATRIX, EXPORT])
    assert final.answer == "Business — SSO: ✓. [1] Enterprise — SSO: ✓. [1]"


def test_which_rows_say_no_is_answered_with_the_rows_that_say_no() -> None:
    # Before: "Business — Audit log: ✓", a plan that has one.
    final = answer_of("Which plans don't have an audit log?", [MATRIX, EXPORT])
    assert final.answer == "Free — Audit log: ✗. [1]"


def test_a_yes_or_no_question_about_one_row_keeps_its_own_mark() -> None:
    final = answer_of("Does the Team plan include SSO?", [MATRIX, EXPORT])
    assert final.answer == "Team — SSO: ✗. [1]"


def test_a_step_asked_by_its_ordinal_is_answered_not_refused() -> None:
    # "second" and "step" are in no passage: counted as words the pages lack, they
    # sank the evidence below the bar and the question was refused.
    final = answer_of("What's the second step of exporting?", [MATRIX, EXPORT])
    assert final.verdict is Verdict.GROUNDED
    assert final.answer.startswith("To export your workspace: Click Export and pick a format:")
    assert "Go to Settings" not in final.answer


def test_a_step_that_ends_in_a_colon_leads_into_its_nested_items() -> None:
    # Joined by "; ", the nested choices read "pick a format:; JSON".
    final = answer_of("What formats can I export my workspace in?", [MATRIX, EXPORT])
    assert "pick a format: JSON (all messages and files); CSV (messages only)" in final.answer
    assert ":;" not in final.answer
