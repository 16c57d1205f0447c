"""`ragway eval compare`: paired deltas per segment, the exact test, sides, the exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragway_tools.cli import app
from ragway_tools.evaluation.compare import (
    CompareError,
    Outcome,
    compare,
    mcnemar_p,
    parse_side,
    render,
)
from ragway_tools.evaluation.qa import QAItem, QASet

ITEMS = tuple(
    QAItem(id=f"q{n}", question=f"question {n}?", facts=("fact",) if n % 5 else (),
           sources=("doc",), segment="lookup" if n < 20 else "refusal")
    for n in range(40)
)  # fmt: skip
QA = QASet(name="t", items=ITEMS)
GOOD = Outcome(refused=False, correct=True, faithful=True, verdict="ok", latency_ms=100)
WRONG = Outcome(refused=False, correct=False, faithful=False, verdict="changed_number")


RIGHT_REFUSAL = Outcome(refused=True, correct=True, faithful=None, verdict="refused")


def ideal(item: QAItem) -> Outcome:
    return GOOD if item.answerable else RIGHT_REFUSAL


def test_the_exact_mcnemar_test_on_discordant_pairs() -> None:
    assert mcnemar_p(0, 0) == 1.0
    assert mcnemar_p(5, 5) == 1.0
    assert mcnemar_p(0, 6) == pytest.approx(2 / 64)  # 6 of 6 discordant pairs one way
    assert mcnemar_p(1, 10) == pytest.approx(mcnemar_p(10, 1))


def test_a_candidate_that_breaks_one_segment_is_worse_there_and_overall() -> None:
    a = {item.id: ideal(item) for item in ITEMS}
    b = {item.id: (WRONG if item.segment == "lookup" else ideal(item)) for item in ITEMS}
    result = compare(QA, a, b, a_name="live", b_name="candidate")
    by = {(d.segment, d.metric): d for d in result.deltas}
    lookup = by[("lookup", "correct")]
    assert (lookup.pairs, lookup.a_only, lookup.b_only, lookup.direction) == (20, 20, 0, "worse")
    assert lookup.delta == -1.0
    assert by[("refusal", "correct")].direction == "same"  # untouched segment
    assert by[("all", "hallucinated")].direction == "worse"
    assert {d.metric for d in result.worse} >= {"correct", "hallucinated"}
    text = render(result)
    assert "| lookup | correct | 20 | 1.000 | 0.000 | -1.000 | 20 | 0 |" in text
    assert "**B is worse: correct" in text


def test_a_few_scattered_differences_are_not_significant() -> None:
    a = {item.id: ideal(item) for item in ITEMS}
    b = dict(a)
    b["q1"], b["q2"] = WRONG, WRONG  # two of 40 items changed
    result = compare(QA, a, b, a_name="a", b_name="b")
    assert result.worse == []
    assert "not significantly worse" in render(result)


def test_items_a_side_did_not_answer_are_named_not_counted() -> None:
    a = {item.id: ideal(item) for item in ITEMS}
    b = {k: v for k, v in a.items() if k != "q3"}
    result = compare(QA, a, b, a_name="a", b_name="b")
    assert result.missing == ["q3"]
    assert next(d for d in result.deltas if d.segment == "all").pairs == 39
    with pytest.raises(CompareError, match="no QA item in common"):
        compare(QA, a, {}, a_name="a", b_name="b")


def test_sides_are_a_report_a_build_or_a_path_file(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"items": []}))
    assert parse_side(str(report)).report == report
    assert parse_side("build:b-1").options == {"build": "b-1"}
    path = tmp_path / "strict.yaml"
    path.write_text("min_support: 0.9\nrerank: 'off'\n")
    assert parse_side(f"path:{path}").options == {"min_support": 0.9, "rerank": "off"}
    with pytest.raises(CompareError, match="expected a report"):
        parse_side("nonsense")


def _report(path: Path, outcomes: dict[str, Outcome]) -> Path:
    items = [
        {"id": k, "refused": o.refused, "correct": o.correct, "faithful": o.faithful,
         "verdict": o.verdict, "latency_ms": o.latency_ms}
        for k, o in outcomes.items()
    ]  # fmt: skip
    path.write_text(json.dumps({"items": items}))
    return path


def test_the_command_compares_two_reports_and_exits_1_when_b_is_worse(tmp_path: Path) -> None:
    qa = tmp_path / "qa.yaml"
    qa.write_text(
        "name: t\nitems:\n"
        + "".join(
            f"  - id: q{n}\n    question: q{n}?\n    fact: fact\n    sources: [doc]\n"
            f"    segment: s{n % 2}\n"
            for n in range(12)
        )
    )
    a = _report(tmp_path / "a.json", {f"q{n}": GOOD for n in range(12)})
    b = _report(tmp_path / "b.json", {f"q{n}": WRONG for n in range(12)})
    out = tmp_path / "out"
    args = ["eval", "compare", "--qa", str(qa), "--output", str(out)]
    worse = CliRunner().invoke(app, [*args, "--a", str(a), "--b", str(b)])
    assert worse.exit_code == 1, worse.output
    assert "B is worse" in worse.output
    assert json.loads((out / "report.json").read_text())["verdict"] == "worse"
    same = CliRunner().invoke(app, [*args, "--a", str(a), "--b", str(a)])
    assert same.exit_code == 0, same.output
    bad = CliRunner().invoke(app, [*args, "--a", str(a), "--b", "path:/no/such.yaml"])
    assert bad.exit_code == 2 and "cannot read the path file" in bad.output
