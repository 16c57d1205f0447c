"""``ragway eval gate``: block a change (CI) or a rollout (canary) on evaluation numbers.

A gates file names the reports to read and the checks to apply::

    reports:                     # name -> report.json (paths relative to the gates file)
      answers: ../var/eval/demo-qa/report.json
      retrieval: ../var/eval/beir-tiny/all/report.json
    baseline:                    # optional: the same names, for tolerance checks
      retrieval: baseline/retrieval.json
    checks:
      - metric: answers.summary.answer_correctness   # <report>.<key>.<key>...
        min: 0.90                                    # floor
      - metric: answers.summary.hallucination_rate
        max: 0.05                                    # ceiling
      - metric: retrieval.modes.hybrid.metrics.ndcg@10
        min: 0.60
        tolerance: 0.01          # and no worse than the baseline by more than this

A missing report, or a metric missing from a report, is a breach (a gate that
silently passes on absent data is no gate).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


class GateConfigError(ValueError):
    """A gates file that cannot be applied; says which entry and why."""


@dataclass(frozen=True)
class Check:
    metric: str
    min: float | None = None
    max: float | None = None
    tolerance: float | None = None


@dataclass(frozen=True)
class Outcome:
    check: Check
    value: float | None
    baseline: float | None
    passed: bool
    detail: str


@dataclass(frozen=True)
class GateConfig:
    reports: dict[str, Path]
    baseline: dict[str, Path]
    checks: tuple[Check, ...]


def load_config(path: Path, overrides: dict[str, Path] | None = None) -> GateConfig:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GateConfigError(f"{path}: cannot read: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise GateConfigError(f"{path}: invalid YAML: {exc}") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("checks"), list) or not raw["checks"]:
        raise GateConfigError(f"{path}: needs a non-empty 'checks' list")
    base = path.parent

    def paths(key: str) -> dict[str, Path]:
        value = raw.get(key) or {}
        if not isinstance(value, dict):
            raise GateConfigError(f"{path}: '{key}' maps report names to files")
        return {str(k): (base / str(v)) for k, v in value.items()}

    reports = paths("reports") | (overrides or {})
    checks = []
    for n, entry in enumerate(raw["checks"], start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("metric"), str):
            raise GateConfigError(f"{path}: check {n}: needs a 'metric' (report.key.key...)")
        unknown = set(entry) - {"metric", "min", "max", "tolerance"}
        if unknown:
            raise GateConfigError(f"{path}: check {n}: unknown field(s) {sorted(unknown)}")
        try:
            check = Check(
                entry["metric"],
                *(
                    float(entry[k]) if entry.get(k) is not None else None
                    for k in ("min", "max", "tolerance")
                ),
            )
        except (TypeError, ValueError):
            raise GateConfigError(f"{path}: check {n}: min, max, tolerance are numbers") from None
        if check.min is None and check.max is None and check.tolerance is None:
            raise GateConfigError(f"{path}: check {n}: set at least one of min, max, tolerance")
        if check.metric.split(".", 1)[0] not in reports:
            raise GateConfigError(
                f"{path}: check {n}: report {check.metric.split('.', 1)[0]!r} is not in "
                f"'reports' ({sorted(reports)})"
            )
        checks.append(check)
    return GateConfig(reports, paths("baseline"), tuple(checks))


def _lookup(doc: Any, keys: list[str]) -> float | None:
    for key in keys:
        if not isinstance(doc, dict) or key not in doc:
            return None
        doc = doc[key]
    return float(doc) if isinstance(doc, int | float) and not isinstance(doc, bool) else None


def _read(files: dict[str, Path]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, file in files.items():
        try:
            out[name] = json.loads(file.read_text())
        except (OSError, json.JSONDecodeError):
            out[name] = None
    return out


def apply(config: GateConfig) -> list[Outcome]:
    reports, baselines = _read(config.reports), _read(config.baseline)
    outcomes = []
    for check in config.checks:
        name, *keys = check.metric.split(".")
        if reports.get(name) is None:
            outcomes.append(
                Outcome(check, None, None, False, f"report {config.reports[name]} unreadable")
            )
            continue
        value = _lookup(reports[name], keys)
        if value is None:
            outcomes.append(Outcome(check, None, None, False, "metric missing from the report"))
            continue
        base = _lookup(baselines[name], keys) if baselines.get(name) is not None else None
        problems = []
        if check.min is not None and value < check.min:
            problems.append(f"below the floor {check.min:g}")
        if check.max is not None and value > check.max:
            problems.append(f"above the ceiling {check.max:g}")
        if check.tolerance is not None:
            if base is None:
                problems.append("no baseline value to compare with")
            else:
                # Direction from the bound: a ceiling means lower is better.
                worse = value - base if check.max is not None else base - value
                if worse > check.tolerance:
                    problems.append(
                        f"{worse:.4f} worse than the baseline {base:.4f} "
                        f"(tolerance {check.tolerance:g})"
                    )
        outcomes.append(Outcome(check, value, base, not problems, "; ".join(problems) or "ok"))
    return outcomes


def render(outcomes: list[Outcome]) -> str:
    lines = ["| metric | value | min | max | baseline | result |", "|---|---:|---:|---:|---:|---|"]

    def f(x: float | None) -> str:
        return "-" if x is None else f"{x:.4f}"

    for o in outcomes:
        verdict = "pass" if o.passed else f"**BREACH**: {o.detail}"
        lines.append(
            f"| {o.check.metric} | {f(o.value)} | {f(o.check.min)} | {f(o.check.max)} | "
            f"{f(o.baseline)} | {verdict} |"
        )
    return "\n".join(lines) + "\n"
