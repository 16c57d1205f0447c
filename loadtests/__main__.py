"""``python -m loadtests SCENARIO``: run a load scenario on a private stack and report it."""

from __future__ import annotations

import logging
import signal
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

app = typer.Typer(add_completion=False)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    # SIGTERM would end Python without running ``finally``: the stack's processes
    # (each in its own session) would outlive us. Unwind like Ctrl-C instead.
    raise KeyboardInterrupt


@app.command()
def main(
    scenario: Annotated[Path, typer.Argument(help="Scenario YAML (loadtests/scenarios/)")],
    output: Annotated[Path, typer.Option(help="Report folder")] = Path("var/loadtest"),
    keep_data: Annotated[
        Path | None, typer.Option(help="Keep the stack's data (Redis AOF, logs) here")
    ] = None,
) -> None:
    """Start a private stack, run the scenario's load and faults, check the invariants.

    Exits 1 when an invariant is broken, 2 when the scenario file is invalid."""
    from loadtests import runner
    from loadtests.report import summary
    from loadtests.scenario import ScenarioError, load
    from ragway_tools.launcher import LaunchError

    signal.signal(signal.SIGTERM, _interrupt)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not one line per request
    try:
        sc = load(scenario)
    except ScenarioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(
        f"{sc.name}: {sc.streams} streams, {sc.replicas} replicas, {sc.duration_s:g} s, "
        f"faults: {', '.join(sc.fault_kinds) or 'none'}"
    )
    try:
        result = runner.run(sc, output, keep_data)
    except LaunchError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    s = summary(result)
    for c in result.checks:
        typer.echo(
            f"  {'ok  ' if c.holds else 'FAIL'} {c.description} "
            f"({c.checked} checked, {len(c.violations)} violations)"
        )
    for key in ("time_to_first_event_ms", "completion_ms"):
        typer.echo(f"  {key}: {s[key]}")
    typer.echo(
        f"  throughput: {s['throughput_runs_per_s']} runs/s; errors: "
        f"{sum(result.errors.counts.values())}"
    )
    typer.echo(f"report: {output / sc.name}.md (.json, .png)")
    if not result.passed:
        raise typer.Exit(1)


if __name__ == "__main__":
    app()
