"""The load report: throughput, latency percentiles, errors by kind, invariants, a plot."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from loadtests.clients import trace_json
from loadtests.invariants import Check
from loadtests.model import ErrorLog, FaultWindow, RunTrace, StoredRun
from loadtests.scenario import Scenario
from ragway.stats import percentile

PERCENTILES = (50, 95, 99)
SHOWN_VIOLATIONS = 20


@dataclass
class LoadResult:
    scenario: Scenario
    command: str
    load_s: float  # the submitting phase as it really ran
    wall_s: float  # with the drain
    traces: list[RunTrace]
    stored: dict[str, StoredRun]
    errors: ErrorLog
    faults: list[FaultWindow]
    checks: list[Check]
    tracebacks: dict[str, int]

    @property
    def passed(self) -> bool:
        return all(c.holds for c in self.checks)


def latency(values: Sequence[float]) -> dict[str, float | int]:
    if not values:
        return {"n": 0}
    ms = [v * 1000 for v in values]
    return {
        "n": len(ms),
        **{f"p{q}": round(percentile(ms, q), 1) for q in PERCENTILES},
        "max": round(max(ms), 1),
    }


def summary(r: LoadResult) -> dict[str, Any]:
    done = [t for t in r.traces if t.finished_s is not None]
    ok = [t for t in done if t.terminal is not None and t.terminal.type == "run.completed"]
    outcomes: Counter[str] = Counter()
    for run in r.stored.values():
        label = run.status or "no record"
        if run.status == "failed":
            label = f"failed: {run.error_code}"
        outcomes[label] += 1
    return {
        "accepted_runs": len(r.traces),
        "runs_in_redis": len(r.stored),
        "outcomes": dict(outcomes.most_common()),
        "restarted_runs": sum(1 for run in r.stored.values() if run.attempts > 1),
        "throughput_runs_per_s": round(len(done) / r.load_s, 2) if r.load_s else 0.0,
        "throughput_succeeded_per_s": round(len(ok) / r.load_s, 2) if r.load_s else 0.0,
        "events_delivered": sum(len(t.events) for t in r.traces),
        "connections": sum(t.connections for t in r.traces),
        "planned_drops": sum(t.drops for t in r.traces),
        "runs_on_two_or_more_replicas": sum(1 for t in r.traces if len(t.replicas) > 1),
        "time_to_first_event_ms": latency(
            [t.first_event_s - t.submitted_s for t in r.traces if t.first_event_s is not None]
        ),
        "completion_ms": latency([t.finished_s - t.submitted_s for t in done]),  # type: ignore[operator]
        "completion_succeeded_ms": latency([t.finished_s - t.submitted_s for t in ok]),  # type: ignore[operator]
    }


def write(r: LoadResult, out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{r.scenario.name}"
    paths = {
        "markdown": out / f"{stem}.md",
        "json": out / f"{stem}.json",
        "plot": out / f"{stem}.png",
    }
    s = summary(r)
    doc = {
        "scenario": r.scenario.model_dump(mode="json"),
        "command": r.command,
        "machine": {"cpus": os.cpu_count()},
        "load_s": round(r.load_s, 1),
        "wall_s": round(r.wall_s, 1),
        "passed": r.passed,
        "summary": s,
        "errors": dict(r.errors.counts.most_common()),
        "faults": [asdict(w) for w in r.faults],
        "invariants": [
            {
                "name": c.name,
                "description": c.description,
                "holds": c.holds,
                "checked": c.checked,
                "violations": c.violations,
            }
            for c in r.checks
        ],
        "tracebacks_in_logs": r.tracebacks,
        "runs": [trace_json(t) for t in r.traces],
    }
    paths["json"].write_text(json.dumps(doc, indent=1, default=str) + "\n")
    paths["markdown"].write_text(render(r, s, paths["plot"].name))
    plot(r, paths["plot"])
    return paths


def render(r: LoadResult, s: Mapping[str, Any], plot_name: str) -> str:
    sc = r.scenario
    verdict = "all invariants hold" if r.passed else "INVARIANTS BROKEN"
    lines = [
        f"# Load test `{sc.name}`: {verdict}",
        "",
        f"{sc.description.strip()}".strip(),
        "",
        f"Command: `{r.command}`",
        "",
        f"{sc.streams} concurrent streams over {sc.replicas} gateway replicas for "
        f"{r.load_s:.0f} s (then {r.wall_s - r.load_s:.0f} s to finish open runs); "
        f"{os.cpu_count()} CPUs; disconnect probability {sc.disconnects.probability:g} per run "
        f"(up to {sc.disconnects.max_per_run} drops).",
        "",
        "## Invariants",
        "",
        "| invariant | holds | checked | violations |",
        "|---|---|---:|---:|",
    ]
    for c in r.checks:
        lines.append(
            f"| {c.description} | {'yes' if c.holds else '**no**'} | {c.checked} "
            f"| {len(c.violations)} |"
        )
    for c in r.checks:
        if c.violations:
            lines += ["", f"### {c.name}: first violations", ""]
            lines += [f"- {v}" for v in c.violations[:SHOWN_VIOLATIONS]]
    lines += [
        "",
        "## Throughput and latency",
        "",
        f"- accepted runs: {s['accepted_runs']} ({s['throughput_runs_per_s']} finished runs/s, "
        f"{s['throughput_succeeded_per_s']} succeeded/s over the load phase)",
        f"- outcomes: {', '.join(f'{k} {v}' for k, v in s['outcomes'].items())}",
        f"- runs restarted by another executor: {s['restarted_runs']}",
        f"- events delivered: {s['events_delivered']} over {s['connections']} connections; "
        f"{s['planned_drops']} planned drops; {s['runs_on_two_or_more_replicas']} runs "
        "streamed from two or more replicas",
        "",
        "Times from the first POST of a question (retries included).",
        "",
        "| ms | n | p50 | p95 | p99 | max |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, key in (
        ("time to first event", "time_to_first_event_ms"),
        ("completion (any final state)", "completion_ms"),
        ("completion (succeeded)", "completion_succeeded_ms"),
    ):
        st = s[key]
        if st["n"]:
            lines.append(
                f"| {label} | {st['n']} | {st['p50']} | {st['p95']} | {st['p99']} | {st['max']} |"
            )
    lines += ["", "## Faults", "", "| kind | from s | to s | detail |", "|---|---:|---:|---|"]
    for w in r.faults:
        lines.append(f"| {w.kind} | {w.start_s:.1f} | {w.end_s:.1f} | {w.detail} |")
    lines += ["", "## Errors by kind (seen by clients, all retried)", ""]
    if r.errors.counts:
        lines += ["| kind | count |", "|---|---:|"]
        lines += [f"| {k} | {v} |" for k, v in r.errors.counts.most_common()]
    else:
        lines.append("none")
    lines += ["", "## Tracebacks in the service logs", ""]
    lines.append(", ".join(f"{k} {v}" for k, v in r.tracebacks.items()) or "none")
    lines += ["", f"![timeline]({plot_name})", ""]
    return "\n".join(lines)


def plot(r: LoadResult, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display here or in CI
    import matplotlib.pyplot as plt

    fig, (ax_tp, ax_lat, ax_err) = plt.subplots(3, 1, figsize=(12, 9), sharex=True)
    end = max(r.wall_s, 1.0)
    bins = [float(b) for b in range(int(end) + 2)]
    ok = [t.finished_s for t in r.traces if t.finished_s is not None and _succeeded(t)]
    other = [t.finished_s for t in r.traces if t.finished_s is not None and not _succeeded(t)]
    ax_tp.hist(
        [ok, other],
        bins=bins,
        stacked=True,
        label=["succeeded", "failed / cancelled"],
        color=["tab:green", "tab:red"],
    )
    ax_tp.set_ylabel("runs finished / s")
    ax_tp.legend(loc="upper right")
    done = [t for t in r.traces if t.finished_s is not None]
    ax_lat.scatter(
        [t.finished_s for t in done],
        [(t.finished_s - t.submitted_s) * 1000 for t in done],  # type: ignore[operator]
        s=4,
        label="completion",
        color="tab:blue",
    )
    first = [t for t in r.traces if t.first_event_s is not None]
    ax_lat.scatter(
        [t.first_event_s for t in first],
        [(t.first_event_s - t.submitted_s) * 1000 for t in first],  # type: ignore[operator]
        s=4,
        label="first event",
        color="tab:orange",
    )
    ax_lat.set_yscale("log")
    ax_lat.set_ylabel("ms from first POST")
    ax_lat.legend(loc="upper right")
    kinds = Counter(k.split(" ")[0] for _, k in r.errors.timeline)
    series = [[t for t, k in r.errors.timeline if k.split(" ")[0] == kind] for kind in kinds]
    if series:
        ax_err.hist(series, bins=bins, stacked=True, label=list(kinds))
        ax_err.legend(loc="upper right")
    ax_err.set_ylabel("client errors / s")
    ax_err.set_xlabel("seconds since the load started")
    colors = {
        "kill_gateway": "red",
        "pause_retriever": "purple",
        "restart_redis": "black",
        "slow_generator": "orange",
    }
    for w in r.faults:
        for ax in (ax_tp, ax_lat, ax_err):
            ax.axvspan(
                w.start_s,
                max(w.end_s, w.start_s + 0.5),
                alpha=0.15,
                color=colors.get(w.kind, "grey"),
            )
        ax_tp.annotate(
            w.kind,
            (w.start_s, 1.0),
            xycoords=("data", "axes fraction"),
            rotation=90,
            va="top",
            fontsize=7,
        )
    verdict = "invariants hold" if r.passed else "INVARIANTS BROKEN"
    fig.suptitle(
        f"{r.scenario.name}: {r.scenario.streams} streams, "
        f"{r.scenario.replicas} replicas; {verdict}"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _succeeded(t: RunTrace) -> bool:
    return t.terminal is not None and t.terminal.type == "run.completed"
