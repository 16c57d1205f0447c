"""Answer scoring: fact matching, faithfulness, citations and every audit verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragway_tools.evaluation.answers import (
    cited_sentences,
    fact_matches,
    numbers,
    score_answer,
    summarize,
)
from ragway_tools.evaluation.qa import QAFileError, QAItem, QASet, load_qa
from tests.conftest import ROOT

QA = QASet("t", (), {"public": "k"}, frozenset({"archive/old"}))
PORT = QAItem("port", "Which port?", ("7101",), ("architecture",), "identifier")
NONE = QAItem("none", "Capital of France?", (), (), "unanswerable")
PASSAGE = "The retriever listens on port 7101 and owns the search indexes."


def body(answer: str, *, refused: bool = False, cites: list[int] | None = None,
         sources: list[tuple[str, str]] | None = None) -> dict[str, Any]:  # fmt: skip
    srcs = sources if sources is not None else [("architecture", PASSAGE)]
    return {
        "answer": answer,
        "refused": refused,
        "reason": "weak_evidence" if refused else None,
        "citations": [{"number": n} for n in (cites or [])],
        "sources": [
            {"number": i, "document_id": d, "text": t} for i, (d, t) in enumerate(srcs, start=1)
        ],
    }


def test_numbers_are_values_not_strings() -> None:
    assert numbers("port 7,101 and 1.50 s") == {7101.0, 1.5}
    # List markers are layout; a number that ends a sentence is still a number.
    assert numbers("four conditions: [1] 1. The tenant. [1] 2. The groups.") == set()
    assert numbers("1. First\n2) Second, and the limit is 5. Then stop.") == {5.0}
    # Citation markers, version strings and identifiers carry no numbers.
    assert numbers("see [2]; version 0.0.9; MiniLM-L6; v2") == set()


def test_fact_match_needs_every_number_and_word() -> None:
    assert fact_matches("7101", "It listens on port 7,101. [1]")
    assert not fact_matches("7101", "It listens on port 7102. [1]")
    assert fact_matches("ORCHID-7", "The code word is ORCHID-7. [1]")
    assert fact_matches("Last-Event-ID header", "Send the `Last-Event-ID` headers again.")
    assert not fact_matches("Last-Event-ID header", "Send the after query parameter.")


def test_citation_markers_after_the_full_stop_belong_to_the_sentence_before() -> None:
    claims = cited_sentences("Port 7101 is used. [1] It owns indexes. [2][3] Streams resume.")
    assert claims == [
        ("Port 7101 is used.", {1}),
        ("It owns indexes.", {2, 3}),
        ("Streams resume.", set()),
    ]


def test_a_grounded_cited_answer_is_ok() -> None:
    s = score_answer(PORT, body("The retriever listens on port 7101. [1]", cites=[1]), QA)
    assert (s.correct, s.faithful, s.verdict) == (True, True, "ok")
    assert s.citation_precision == 1.0 and s.citation_coverage == 1.0


def test_an_answer_without_citations() -> None:
    s = score_answer(PORT, body("The retriever listens on port 7101."), QA)
    assert s.verdict == "no_citation"
    assert s.correct  # right fact, but the audit still flags it


def test_a_citation_to_a_passage_that_was_not_given() -> None:
    s = score_answer(PORT, body("The retriever listens on port 7101. [3]", cites=[3]), QA)
    assert s.verdict == "unknown_id"


def test_a_quoted_bracket_of_the_page_is_no_citation_and_its_numbers_are_supported() -> None:
    page = "Set the limit to [3] or more to start a canary."
    answer = "Set the limit to \\[3] or more to start a canary. [1]"
    s = score_answer(PORT, body(answer, cites=[1], sources=[("canary", page)]), QA)
    assert s.verdict != "unknown_id"
    assert s.unsupported_numbers == []


def test_a_footnote_mark_against_a_number_is_no_digit_of_it() -> None:
    # Before: NFKC read the table cell "$0.015²" as 0.0152, so an answer quoting the
    # fee as "$0.015" was scored as changing the page's number.
    assert numbers("Extra label fee: $0.015²; Online card rate¹: 2.9%") == {0.015, 2.9}
    page = "| Enterprise | Custom | $0.015² | 2,000 |"
    answer = "Enterprise — Extra label fee: $0.015; API requests / min: 2,000. [1]"
    s = score_answer(PORT, body(answer, cites=[1], sources=[("architecture", page)]), QA)
    assert s.unsupported_numbers == [] and s.verdict != "changed_number"


def test_a_changed_number_is_unfaithful() -> None:
    s = score_answer(PORT, body("The retriever listens on port 7102. [1]", cites=[1]), QA)
    assert s.verdict == "changed_number"
    assert s.unsupported_numbers == [7102.0]
    assert not s.correct and s.faithful is False


def test_citing_a_deprecated_document_or_repeating_its_stale_fact() -> None:
    old = body("The retriever listens on port 7101. [1]", cites=[1],
               sources=[("archive/old", PASSAGE)])  # fmt: skip
    assert score_answer(PORT, old, QA).verdict == "deprecated_source"
    trap = QAItem("hb", "Heartbeat?", ("15 seconds",), ("streaming",), "trap", trap="45 seconds")
    stale = body("A heartbeat every 45 seconds. [1]", cites=[1],
                 sources=[("streaming", "A heartbeat every 45 seconds.")])  # fmt: skip
    assert score_answer(trap, stale, QA).verdict == "deprecated_source"


def test_citing_only_other_documents_is_wrong_topic() -> None:
    other = body("The retriever listens on port 7101. [1]", cites=[1],
                 sources=[("operations", PASSAGE)])  # fmt: skip
    s = score_answer(PORT, other, QA)
    assert s.verdict == "wrong_topic" and s.citation_precision == 0.0


def test_a_sentence_its_citation_does_not_support() -> None:
    s = score_answer(
        PORT,
        body("The retriever listens on port 7101. [1] Bananas grow on tall plants. [1]", cites=[1]),
        QA,
    )
    assert s.faithful is False
    assert s.unsupported == ["Bananas grow on tall plants."]


def test_refusals_score_by_whether_the_item_is_answerable() -> None:
    refused = body("", refused=True)
    assert score_answer(NONE, refused, QA).correct
    assert score_answer(NONE, refused, QA).abstention_correct
    false_refusal = score_answer(PORT, refused, QA)
    assert not false_refusal.correct and not false_refusal.abstention_correct
    answered = score_answer(NONE, body("Paris is the capital. [1]", cites=[1]), QA)
    assert not answered.correct and not answered.abstention_correct


def test_summary_rates() -> None:
    scores = [
        score_answer(PORT, body("The retriever listens on port 7101. [1]", cites=[1]), QA),
        score_answer(PORT, body("", refused=True), QA),
        score_answer(NONE, body("", refused=True), QA),
        score_answer(NONE, body("It listens on port 9. [1]", cites=[1]), QA),
    ]
    s = summarize(scores)
    assert s["answer_correctness"] == pytest.approx(0.5)
    assert s["false_refusals"] == pytest.approx(0.5)
    assert s["correct_refusals"] == pytest.approx(0.5)
    assert s["hallucination_rate"] == pytest.approx(0.5)
    assert {k: v for k, v in s["verdicts"].items() if v} == {
        "ok": 1,
        "refused": 2,
        "changed_number": 1,
    }
    assert s["verdicts"]["deprecated_source"] == 0


def test_qa_files_are_validated(tmp_path: Path) -> None:
    bad = tmp_path / "qa.yaml"
    bad.write_text("items:\n  - question: Where?\n    sources: [a]\n")
    with pytest.raises(QAFileError, match="item 1: 'fact' is required"):
        load_qa(bad)
    bad.write_text("items:\n  - question: Where?\n    fact: x\n")
    with pytest.raises(QAFileError, match="needs gold 'sources'"):
        load_qa(bad)
    bad.write_text("items:\n  - question: Where?\n    fact: x\n    sources: a\n    caller: hr\n")
    with pytest.raises(QAFileError, match="caller 'hr' is not in 'callers'"):
        load_qa(bad)


def test_the_shipped_demo_qa_set_loads_as_a_tuning_and_a_held_out_part() -> None:
    tuning = load_qa(ROOT / "eval" / "demo-qa.yaml")
    heldout = load_qa(ROOT / "eval" / "demo-qa-heldout.yaml")
    assert len(tuning.items) + len(heldout.items) >= 60
    assert not {i.id for i in tuning.items} & {i.id for i in heldout.items}
    for part in (tuning, heldout):
        segments = {i.segment for i in part.items}
        for needed in ("exact", "paraphrase", "typo", "keyword", "identifier", "unanswerable",
                       "forbidden", "deprecated-trap"):  # fmt: skip
            assert needed in segments


def test_an_answer_to_a_question_that_must_be_refused_is_flagged() -> None:
    answered = score_answer(NONE, body("The retriever listens on port 7101. [1]", cites=[1]), QA)
    assert answered.faithful  # grounded in its passage, yet it answers what it should not
    assert answered.verdict == "should_have_refused"
    assert summarize([answered])["hallucination_rate"] == 1.0


def test_units_written_against_numbers() -> None:
    assert numbers("waits 30s, then 250ms, 64KiB and 1.5s") == {30.0, 250.0, 64.0, 1.5}
    assert fact_matches("250 ms", "a 250ms budget")  # "250ms" is one word; the number decides


def test_the_refusal_sweep_prices_a_wrong_answer_above_a_needless_refusal() -> None:
    from ragway_tools.evaluation.answer_run import best_threshold, sweep_point

    good = body("The retriever listens on port 7101. [1]", cites=[1])
    refused = body("", refused=True)
    # Low threshold: everything answered (the unanswerable one too); high: all refused.
    low = sweep_point(0.3, [score_answer(PORT, good, QA), score_answer(NONE, good, QA)])
    mid = sweep_point(0.5, [score_answer(PORT, good, QA), score_answer(NONE, refused, QA)])
    high = sweep_point(0.7, [score_answer(PORT, refused, QA), score_answer(NONE, refused, QA)])
    assert (low.cost, mid.cost, high.cost) == (2.0, 0.0, 1.0)
    assert low.hallucination_rate == 0.5 and mid.hallucination_rate == 0.0
    assert best_threshold([low, mid, high]) == mid
    assert best_threshold([low, high]) == high  # one needless refusal beats one wrong answer


def test_a_number_that_ends_a_sentence_after_a_colon_is_a_value_not_a_list_marker() -> None:
    # Regression: "Files per message: 25. [1]" was read as list item "25." and the fact lost.
    answer = "Enterprise — Max size per file: 5 GB; Files per message: 25. [1]"
    assert fact_matches("25", answer)
    assert numbers("Do this: 1. Open the console") == set()


def test_a_cell_value_followed_by_its_footnote_is_a_value_not_a_list_marker() -> None:
    # Regression: a row quoted with its footnote ("Guests — Plus: 50. Guests are people
    # outside your workspace") lost its value as list item "50.". After a colon only a
    # list's first marker, "1.", is layout.
    answer = "Guests — Plus: 50. Guests are people outside your workspace. [2]"
    assert fact_matches("50", answer)
    assert numbers("The roles: 1. Owner") == set()


def test_a_number_the_cited_passages_heading_holds_is_supported() -> None:
    # The generator quotes a release's heading with its notes ("4.2 — 12 March 2026:
    # Added dark mode…"), and its grounding check reads title, heading and text alike;
    # scored against the text alone, the date was an unsupported number.
    item = QAItem("dark", "When was dark mode added?", ("12 March 2026",), ("changelog",), "exact")
    answer = "4.2 — 12 March 2026: Added dark mode to the web app. [1]"
    src = body(answer, cites=[1], sources=[("changelog", "- Added dark mode to the web app.")])
    src["sources"][0] |= {"title": "Changelog", "section": "4.2 — 12 March 2026"}
    score = score_answer(item, src, QA)
    assert score.correct and score.faithful and score.unsupported_numbers == []
    src["sources"][0]["section"] = "Releases"
    assert score_answer(item, src, QA).unsupported_numbers == [4.2, 12.0, 2026.0]
