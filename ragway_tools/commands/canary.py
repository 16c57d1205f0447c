"""``ragway paths ...`` and ``ragway canary ...``: release units and experiments, through
the gateway's admin API (``/v1/admin``, admin keys only)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import httpx
import typer
import yaml
from rich.console import Console
from rich.table import Table

paths_app = typer.Typer(
    help="Paths (release units): build, retriever and generator options, prompt label.",
    no_args_is_help=True,
)
canary_app = typer.Typer(
    help="Canary and shadow experiments of a candidate path, gated, with rollback.",
    no_args_is_help=True,
)
console = Console()
err = Console(stderr=True)

Url = Annotated[str, typer.Option("--url", envvar="RAGWAY_GATEWAY_URL", help="Gateway URL")]
Key = Annotated[str, typer.Option("--key", envvar="RAGWAY_ADMIN_KEY", help="Admin API key")]
AsJson = Annotated[bool, typer.Option("--json", help="Print the JSON the gateway answered")]
DEFAULT_URL = "http://127.0.0.1:8000"
DEFAULT_KEY = "rgw-demo-admin-key"


def _call(
    method: str, url: str, key: str, path: str, body: dict[str, Any] | None = None,
    params: dict[str, Any] | None = None,
) -> Any:  # fmt: skip
    """The admin API's JSON answer; an error is one line and exit status 1."""
    try:
        reply = httpx.request(
            method,
            f"{url.rstrip('/')}/v1/admin{path}",
            json=body,
            params=params,
            headers={"Authorization": f"Bearer {key}"},
            timeout=30,
        )
    except httpx.HTTPError as exc:
        err.print(f"[bold red]error:[/] cannot reach the gateway at {url}: {exc}")
        raise typer.Exit(1) from None
    try:
        data = reply.json()
    except ValueError:
        data = {"error": {"code": "http_error", "message": reply.text[:200]}}
    if reply.status_code >= 400:
        e = data.get("error", {}) if isinstance(data, dict) else {}
        err.print(
            f"[bold red]error:[/] {reply.status_code} {e.get('code', '')}: {e.get('message', '')}",
            soft_wrap=True,
        )
        raise typer.Exit(1)
    return data


def _print_json(data: Any) -> None:
    console.print_json(json.dumps(data))


# Paths


@paths_app.command("list")
def paths_list(url: Url = DEFAULT_URL, key: Key = DEFAULT_KEY, as_json: AsJson = False) -> None:
    """The latest version of every path."""
    rows = _call("GET", url, key, "/paths")
    if as_json:
        _print_json(rows)
        return
    table = Table("path", "version", "build", "build id", "mode", "top_k", "depth", "rerank",
                  "weight", "skip margin", "max tokens", "threshold", "prompt")  # fmt: skip
    for p in rows:
        table.add_row(
            p["name"], str(p["version"]), p["build"] or "(live)", p["build_id"],
            p["mode"] or "-", str(p["top_k"] or "-"), str(p["candidate_depth"] or "-"),
            p["rerank"] + (f" ({p['reranker']})" if p.get("reranker") else ""),
            _fmt(p.get("rerank_weight")), _fmt(p.get("rerank_skip_margin")),
            str(p["max_output_tokens"] or "-"), _fmt(p["min_support"]),
            p["prompt_label"] or "-",
        )  # fmt: skip
    console.print(table)


@paths_app.command("show")
def paths_show(
    name: Annotated[str, typer.Argument(help="Path name")],
    version: Annotated[int | None, typer.Option(help="Default: the latest")] = None,
    url: Url = DEFAULT_URL,
    key: Key = DEFAULT_KEY,
) -> None:
    """One version of a path, as JSON."""
    params = {"version": version} if version is not None else None
    _print_json(_call("GET", url, key, f"/paths/{name}", params=params))


@paths_app.command("set")
def paths_set(
    name: Annotated[str, typer.Argument(help="Path name, e.g. candidate")],
    build: Annotated[str, typer.Option(help="Build id or alias (default: live)")] = "",
    mode: Annotated[
        str | None, typer.Option(help="hybrid, sparse or dense (default: the request's)")
    ] = None,
    top_k: Annotated[int | None, typer.Option(help="Passages for the generator")] = None,
    candidate_depth: Annotated[int | None, typer.Option(help="Candidates per retriever")] = None,
    rerank: Annotated[str, typer.Option(help="default, on or off")] = "default",
    reranker: Annotated[
        str, typer.Option(help="Reranker artifact version ('ragway paths rerankers')")
    ] = "",
    rerank_weight: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Reranker share of the final score, 0 to 1 (default: the retriever's; "
            "fit it with 'ragway eval qa-retrieval --fit-weight')",
        ),
    ] = None,
    rerank_skip_margin: Annotated[
        float | None,
        typer.Option(
            min=-1.0,
            max=1.0,
            help="Skip the default rerank at this fused lead, -1 to 1 (default: the retriever's; "
            "fit it with 'ragway eval qa-retrieval --fit-skip')",
        ),
    ] = None,
    max_output_tokens: Annotated[int | None, typer.Option(help="Generator output bound")] = None,
    min_support: Annotated[
        float | None, typer.Option(help="Refusal threshold 0-1 (default: the generator's)")
    ] = None,
    generator_backend: Annotated[
        str, typer.Option(help="extractive, openai or llama: the generator must serve it")
    ] = "",
    generator_model: Annotated[
        str, typer.Option(help="Model the generator must serve (e.g. extractive-v2)")
    ] = "",
    prompt_label: Annotated[str, typer.Option(help="Prompt version label")] = "",
    note: Annotated[str, typer.Option(help="Why this version")] = "",
    url: Url = DEFAULT_URL,
    key: Key = DEFAULT_KEY,
) -> None:
    """Store the next version of a path (build and reranker checked with the retriever first)."""
    body = {
        "build": build, "mode": mode, "top_k": top_k, "candidate_depth": candidate_depth,
        "rerank": rerank, "reranker": reranker, "rerank_weight": rerank_weight,
        "rerank_skip_margin": rerank_skip_margin, "max_output_tokens": max_output_tokens,
        "min_support": min_support,
        "generator_backend": generator_backend, "generator_model": generator_model,
        "prompt_label": prompt_label, "note": note,
    }  # fmt: skip
    stored = _call("PUT", url, key, f"/paths/{name}", body=body)
    console.print(
        f"path [cyan]{stored['name']}[/] version {stored['version']} "
        f"(build {stored['build'] or 'live'} → {stored['build_id'] or 'live'})"
    )


@paths_app.command("rerankers")
def paths_rerankers(
    url: Url = DEFAULT_URL, key: Key = DEFAULT_KEY, as_json: AsJson = False
) -> None:
    """The reranker artifacts the retriever has loaded, which a path's --reranker may name."""
    rows = _call("GET", url, key, "/rerankers")
    if as_json:
        _print_json(rows)
        return
    table = Table("version", "role", "tenant", "served as", "tokens", "created")
    for r in rows:
        table.add_row(
            r["version"], r["role"], r["tenant"] or "(any)", r["model_id"],
            str(r["max_length"]), r["created"],
        )  # fmt: skip
    console.print(table)


# Canary


def _gates(path: Path | None, min_samples: int | None) -> dict[str, Any]:
    gates: dict[str, Any] = {}
    if path is not None:
        try:
            loaded = yaml.safe_load(path.read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            err.print(f"[bold red]error:[/] cannot read the gates file {path}: {exc}")
            raise typer.Exit(2) from None
        if not isinstance(loaded, dict):
            err.print(f"[bold red]error:[/] the gates file {path} is not a mapping")
            raise typer.Exit(2)
        gates.update(loaded)
    if min_samples is not None:
        gates["min_samples"] = min_samples
    return gates


Candidate = Annotated[str, typer.Option(help="The candidate path")]
GatesFile = Annotated[
    Path | None, typer.Option("--gates", help="Guardrails (YAML, see config/canary-gates.yaml)")
]
MinSamples = Annotated[int | None, typer.Option(help="Override the gates' min_samples")]


def _start(
    mode: Literal["canary", "shadow"], candidate: str, percent: float | None,
    gates: dict[str, Any], url: str, key: str, retrieval_only: bool = False,
    steps: list[float] | None = None,
) -> None:  # fmt: skip
    body: dict[str, Any] = {"mode": mode, "candidate": candidate, "percent": percent,
                            "gates": gates, "retrieval_only": retrieval_only}  # fmt: skip
    if steps is not None:
        body["steps"] = steps
    state = _call("POST", url, key, "/canary", body=body)
    line = (
        f"{mode} [cyan]{state['experiment']}[/] started: {candidate} v{state['candidate_version']}"
        f" for {state['percent']:g} % of users, against baseline v{state['baseline_version']}"
    )
    if state.get("steps"):
        line += f"; steps {_steps(state['steps'])} %, then promote"
    console.print(line, soft_wrap=True)


def _steps(steps: list[float]) -> str:
    return " → ".join(f"{p:g}" for p in steps)


def _parse_steps(text: str | None) -> list[float] | None:
    """``5,25,50`` → [5, 25, 50]; the gateway checks the values (rising, in (0, 100])."""
    if text is None:
        return None
    try:
        return [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        err.print(f"[bold red]error:[/] --steps {text!r} is not a comma-separated list of numbers")
        raise typer.Exit(2) from None


@canary_app.command("start")
def canary_start(
    percent: Annotated[
        float | None,
        typer.Option(help="Share of users served the candidate (0-100); with --steps: its first"),
    ] = None,
    candidate: Candidate = "candidate",
    steps: Annotated[
        str | None,
        typer.Option(
            help="Automatic steps, e.g. 5,25,50: each step's pass moves on, the last one's "
            "promotes, a breach rolls back"
        ),
    ] = None,
    gates_file: GatesFile = None,
    min_samples: MinSamples = None,
    url: Url = DEFAULT_URL,
    key: Key = DEFAULT_KEY,
) -> None:
    """Serve the candidate to a sticky share of users; a gate breach rolls it back."""
    parsed = _parse_steps(steps)
    if percent is None and parsed is None:
        err.print("[bold red]error:[/] give --percent N, or --steps A,B,C")
        raise typer.Exit(2)
    gates = _gates(gates_file, min_samples)
    _start("canary", candidate, percent, gates, url, key, steps=parsed)


@canary_app.command("shadow")
def canary_shadow(
    percent: Annotated[float, typer.Option(help="Share of users whose runs are shadowed")] = 100,
    candidate: Candidate = "candidate",
    gates_file: GatesFile = None,
    min_samples: MinSamples = None,
    retrieval_only: Annotated[
        bool, typer.Option(help="Compare ranked sources only: no second generator call")
    ] = False,
    url: Url = DEFAULT_URL,
    key: Key = DEFAULT_KEY,
) -> None:
    """Run the candidate beside the baseline, never serving it; its records are compared."""
    gates = _gates(gates_file, min_samples)
    _start("shadow", candidate, percent, gates, url, key, retrieval_only)


@canary_app.command("stop")
def canary_stop(url: Url = DEFAULT_URL, key: Key = DEFAULT_KEY) -> None:
    """End the experiment: everyone is served by the baseline at their next run."""
    state = _call("POST", url, key, "/canary/stop")
    console.print(f"experiment [cyan]{state['experiment']}[/] stopped")


@canary_app.command("percent")
def canary_percent(
    percent: Annotated[float, typer.Argument(help="The new share of users (0-100)")],
    url: Url = DEFAULT_URL,
    key: Key = DEFAULT_KEY,
) -> None:
    """A step of the rollout (e.g. 5 → 25 → 50): users already in stay in."""
    state = _call("POST", url, key, "/canary/percent", body={"percent": percent})
    console.print(f"experiment [cyan]{state['experiment']}[/] now at {state['percent']:g} %")


@canary_app.command("pause")
def canary_pause(url: Url = DEFAULT_URL, key: Key = DEFAULT_KEY) -> None:
    """Serve everyone from the baseline, counting nothing, until 'ragway canary resume'."""
    state = _call("POST", url, key, "/canary/pause")
    console.print(f"experiment [cyan]{state['experiment']}[/] paused")


@canary_app.command("resume")
def canary_resume(url: Url = DEFAULT_URL, key: Key = DEFAULT_KEY) -> None:
    """Resume a paused experiment at its percentage."""
    state = _call("POST", url, key, "/canary/resume")
    console.print(f"experiment [cyan]{state['experiment']}[/] resumed at {state['percent']:g} %")


@canary_app.command("rollback")
def canary_rollback(url: Url = DEFAULT_URL, key: Key = DEFAULT_KEY) -> None:
    """Stop the experiment, recorded as rolled back."""
    state = _call("POST", url, key, "/canary/rollback")
    console.print(f"experiment [cyan]{state['experiment']}[/] rolled back")


@canary_app.command("promote")
def canary_promote(url: Url = DEFAULT_URL, key: Key = DEFAULT_KEY) -> None:
    """Make the candidate's tested version the baseline, and end the experiment."""
    baseline = _call("POST", url, key, "/canary/promote")
    console.print(f"baseline is now version {baseline['version']} ({baseline['note']})")


def report_table(report: dict[str, Any]) -> Table:
    b, c = report["baseline"], report["candidate"]
    table = Table(
        "metric", "baseline", c["path"], "interval", "gate", "verdict",
        title=f"{report['mode']} {report['experiment']}: {report['verdict']} "
        f"(sequential, alpha {report.get('alpha', 0.05):g})",
    )  # fmt: skip
    for metric in ("runs", "latency_p50_ms", "latency_p95_ms"):
        table.add_row(metric, _fmt(b[metric]), _fmt(c[metric]), "", "", "")
    shadow = report.get("shadow")
    if shadow:
        for metric in ("pairs", "refusal_agreement", "cited_agreement",
                       "latency_delta_p50_ms", "dropped"):  # fmt: skip
            table.add_row(f"shadow {metric}", "", _fmt(shadow.get(metric)), "", "", "")
    feedback = report.get("feedback")
    if feedback:
        bf, cf = feedback["baseline"], feedback["candidate"]
        table.add_row(
            "not helpful (feedback)", _share(bf), _share(cf), "",
            "gated" if feedback["gated"] else "reported only", _verdict(feedback["status"]),
        )  # fmt: skip
    for g in report["gates"]:
        interval = f"[{_fmt(g['lower'])}, {_fmt(g['upper'])}]" if g.get("lower") is not None else ""
        table.add_row(
            g["metric"], _fmt(g["baseline"]), _fmt(g["candidate"]), interval, g["limit"],
            _verdict(g["verdict"]),
        )  # fmt: skip
    return table


def flagged_lines(report: dict[str, Any]) -> list[str]:
    shadow = report.get("shadow") or {}
    return [
        f"changed answer: {f['served']} -> shadow {f['shadow']}: {f['reason']}"
        for f in shadow.get("flagged", [])
    ]


def _share(side: dict[str, Any]) -> str:
    """``0.1 of 40 [0.03, 0.24]``: the share of `down` ratings, its sample, its interval."""
    if not side["rated"]:
        return "no ratings"
    return (
        f"{_fmt(side['not_helpful_share'])} of {side['rated']} "
        f"[{_fmt(side['lower'])}, {_fmt(side['upper'])}]"
    )


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _verdict(v: str) -> str:
    colours = {"pass": "[green]pass[/]", "breach": "[bold red]breach[/]", "measured": "measured"}
    return colours.get(v, f"[yellow]{v}[/]")


@canary_app.command("status")
def canary_status(url: Url = DEFAULT_URL, key: Key = DEFAULT_KEY, as_json: AsJson = False) -> None:
    """The experiment's state, and its report."""
    status = _call("GET", url, key, "/canary")
    if as_json:
        _print_json(status)
        return
    s = status["state"]
    if s["experiment"] is None:
        console.print("no experiment has run: the baseline serves everyone")
        return
    line = f"{s['mode']} {s['experiment']}: {s['candidate']} v{s['candidate_version']}"
    line += f" at {s['percent']:g} %"
    if s["stopped_reason"]:
        line += f"; ended ({'rolled back: ' if s['rolled_back'] else ''}{s['stopped_reason']})"
    console.print(line, soft_wrap=True)
    if s.get("steps"):
        console.print(steps_table(s))
    if status["report"]:
        console.print(report_table(status["report"]))
        for line in flagged_lines(status["report"]):
            console.print(line, soft_wrap=True)


def steps_table(state: dict[str, Any]) -> Table:
    table = Table(
        "step", "percent", "started", "ended", "verdict", "baseline runs", "candidate runs",
        title=f"steps {_steps(state['steps'])} %",
    )  # fmt: skip
    for n, step in enumerate(state["step_history"], start=1):
        table.add_row(
            f"{n}/{len(state['steps'])}", f"{step['percent']:g}", _when(step["started_at_ms"]),
            _when(step["ended_at_ms"]), _verdict(step["verdict"]), str(step["baseline_runs"]),
            str(step["candidate_runs"]),
        )  # fmt: skip
    return table


def _when(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


@canary_app.command("report")
def canary_report(
    since_ms: Annotated[int, typer.Option(help="Only runs finished after (unix ms)")] = 0,
    url: Url = DEFAULT_URL,
    key: Key = DEFAULT_KEY,
    as_json: AsJson = False,
) -> None:
    """Baseline against candidate for the running (else the last) experiment.
    Exit status 1 when a gate is breached."""
    report = _call("GET", url, key, "/canary/report", params={"since_ms": since_ms})
    if as_json:
        _print_json(report)
    else:
        console.print(report_table(report))
        for line in flagged_lines(report):
            console.print(line, soft_wrap=True)
    if report["verdict"] == "breach":
        raise typer.Exit(1)
