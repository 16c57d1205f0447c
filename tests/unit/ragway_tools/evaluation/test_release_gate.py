"""The evaluation gate: floors, ceilings, baseline tolerances, and missing data as breaches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragway_tools.evaluation.release_gate import GateConfigError, apply, load_config


def write(tmp_path: Path, gates: str, report: dict[str, object], baseline: object = None) -> Path:
    (tmp_path / "report.json").write_text(json.dumps(report))
    if baseline is not None:
        (tmp_path / "baseline.json").write_text(json.dumps(baseline))
    path = tmp_path / "gates.yaml"
    path.write_text(gates)
    return path


REPORT = {"summary": {"correct": 0.9, "halluc": 0.02}, "modes": {"hybrid": {"ndcg@10": 0.70}}}


def test_floors_and_ceilings(tmp_path: Path) -> None:
    gates = write(tmp_path, """
reports: {a: report.json}
checks:
  - {metric: a.summary.correct, min: 0.85}
  - {metric: a.summary.halluc, max: 0.05}
  - {metric: a.modes.hybrid.ndcg@10, min: 0.75}
""", REPORT)  # fmt: skip
    outcomes = apply(load_config(gates))
    assert [o.passed for o in outcomes] == [True, True, False]
    assert "below the floor 0.75" in outcomes[2].detail


def test_tolerance_against_a_baseline(tmp_path: Path) -> None:
    baseline = {"summary": {"correct": 0.95, "halluc": 0.0}}
    gates = write(tmp_path, """
reports: {a: report.json}
baseline: {a: baseline.json}
checks:
  - {metric: a.summary.correct, min: 0.5, tolerance: 0.03}
  - {metric: a.summary.halluc, max: 0.5, tolerance: 0.03}
""", REPORT, baseline)  # fmt: skip
    first, second = apply(load_config(gates))
    assert not first.passed and "0.0500 worse than the baseline" in first.detail
    assert second.passed  # 0.02 worse, within 0.03


def test_a_missing_metric_or_report_is_a_breach(tmp_path: Path) -> None:
    gates = write(tmp_path, """
reports: {a: report.json, b: nowhere.json}
checks:
  - {metric: a.summary.recall, min: 0.1}
  - {metric: b.x, min: 0.1}
""", REPORT)  # fmt: skip
    outcomes = apply(load_config(gates))
    assert not any(o.passed for o in outcomes)
    assert outcomes[0].detail == "metric missing from the report"


def test_bad_gate_files_are_refused(tmp_path: Path) -> None:
    gates = write(tmp_path, "reports: {a: report.json}\nchecks:\n  - {metric: a.x}\n", REPORT)
    with pytest.raises(GateConfigError, match="set at least one of min, max, tolerance"):
        load_config(gates)
    gates.write_text("reports: {a: report.json}\nchecks:\n  - {metric: z.x, min: 1}\n")
    with pytest.raises(GateConfigError, match="report 'z' is not in 'reports'"):
        load_config(gates)
    gates.write_text("reports: {a: report.json}\nchecks:\n  - {metric: a.x, floor: 1}\n")
    with pytest.raises(GateConfigError, match="unknown field"):
        load_config(gates)
