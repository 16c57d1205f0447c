"""``make profile``: where each process's CPU goes during a closed-loop load run.

Starts a private stack (one gateway), warms it (every question once), then drives
``--users`` closed-loop users (as ``make bench-capacity``) for ``--seconds`` while
py-spy samples the gateway, the retriever and the generator (``py-spy record
--format raw --nonblocking``: on-CPU stacks only, the process is not paused).

Writes under --output, per process: ``<name>.txt`` (collapsed stacks; speedscope
and flamegraph.pl open it) and ``summary.md``: the functions with the most samples
on CPU, by their own time (the frame at the top of the stack) and in total (any
frame of the stack), so "where a run's CPU goes" reads off one page.

py-spy is a development tool, not a dependency: the make target installs it into
the project's venv first (``--py-spy`` takes another binary).
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from loadtests import runner
from loadtests.capacity import closed_loop, warm
from loadtests.stack import LoadStack

log = logging.getLogger(__name__)
PROCESSES = ("gateway", "retriever", "generator")
TOP = 25

app = typer.Typer(add_completion=False)


def collapsed(path: Path) -> Counter[str]:
    """py-spy's raw output: 'frame;frame;...;leaf COUNT' per line."""
    stacks: Counter[str] = Counter()
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            stacks[stack] += int(count)
    return stacks


# Leaves where a thread sleeps rather than computes (py-spy's --nonblocking mode cannot
# always tell): an event loop's select, a pool thread waiting for work.
WAITS = (
    "select (selectors.py)",
    "Condition.wait (threading.py)",
    "Event.wait (threading.py)",
    "_worker (thread.py)",
    "Thread.run (threading.py)",
    "Queue.get (queue.py)",
)


def summarise(name: str, stacks: Counter[str], seconds: float, rate: int) -> list[str]:
    waiting = sum(c for s, c in stacks.items() if _frame(s.split(";")[-1]).endswith(WAITS))
    stacks = Counter(
        {s: c for s, c in stacks.items() if not _frame(s.split(";")[-1]).endswith(WAITS)}
    )
    total = sum(stacks.values())
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    for stack, count in stacks.items():
        frames = stack.split(";")
        own[_frame(frames[-1])] += count
        for frame in {_frame(f) for f in frames if _ours(f)}:
            inclusive[frame] += count
    cpu_s = total / rate
    lines = [
        f"## {name}",
        "",
        f"{total} samples on CPU at {rate}/s over {seconds:.0f} s: about {cpu_s:.1f} CPU-s "
        f"({100 * cpu_s / seconds:.0f} % of one core), not counting {waiting} samples of"
        " threads waiting (select, a pool thread waiting for work).",
        "",
        "Own: the function on top of the stack (mostly libraries and the runtime)."
        " Total: ragway's own functions with everything they call.",
        "",
        "| own % | function | | total % | ragway function |",
        "| ---: | --- | --- | ---: | --- |",
    ]
    by_own, by_total = own.most_common(TOP), inclusive.most_common(TOP)
    for i in range(max(len(by_own), len(by_total))):
        left = by_own[i] if i < len(by_own) else ("", 0)
        right = by_total[i] if i < len(by_total) else ("", 0)
        lines.append(
            f"| {_pct(left[1], total)} | `{left[0]}` | | {_pct(right[1], total)} | `{right[0]}` |"
        )
    return [*lines, ""]


def _frame(frame: str) -> str:
    # "function (path/to/module.py:LINE)" -> "function (module.py)": lines apart, one row.
    func, _, where = frame.partition(" (")
    module = where.rsplit("/", 1)[-1].split(":", 1)[0].rstrip(")")
    return f"{func} ({module})" if module else func


def _ours(frame: str) -> bool:
    return frame.partition(" (")[2].startswith(("ragway/", "services/"))


def _pct(count: int, total: int) -> str:
    return f"{100 * count / total:.1f}" if total and count else ""


@app.command()
def main(
    output: Annotated[Path, typer.Option(help="Profile folder")] = Path("var/profile"),
    users: Annotated[int, typer.Option(help="Closed-loop virtual users")] = 50,
    seconds: Annotated[float, typer.Option(help="Seconds of load, all sampled")] = 30.0,
    rate: Annotated[int, typer.Option(help="Samples a second")] = 100,
    py_spy: Annotated[str, typer.Option(help="The py-spy binary")] = "py-spy",
) -> None:
    """Profile the gateway, retriever and generator under closed-loop load."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    binary = shutil.which(py_spy)
    if binary is None:
        raise typer.BadParameter(f"{py_spy!r} not found; `make profile` installs py-spy")
    output.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ragway-profile-") as tmp:
        stack = LoadStack(Path(tmp), 1, runner.STACK_ENV)
        recorders: list[tuple[str, subprocess.Popen[bytes]]] = []
        try:
            stack.start()
            asyncio.run(warm(stack))
            for name in PROCESSES:
                pid = stack.stack.part(name).process.pid
                args = [binary, "record", "--pid", str(pid), "--format", "raw"]
                args += ["--rate", str(rate), "--nonblocking", "--duration", str(int(seconds))]
                args += ["--output", str(output / f"{name}.txt")]
                recorders.append((name, subprocess.Popen(args, stdout=subprocess.DEVNULL)))
            loop = closed_loop(stack, users, seconds)
            for _name, process in recorders:
                process.wait(timeout=60)
        finally:
            for _name, process in recorders:
                if process.poll() is None:
                    process.terminate()
            stack.stop()
    lines = [
        "# Where the CPU goes under load",
        "",
        f"{users} closed-loop users (think 1-2 s) for {seconds:.0f} s on one gateway, after a"
        f" warm-up: {loop['finished_runs_per_s']} finished runs/s, completion ms "
        f"{loop['completion_ms']}.",
        "",
    ]
    for name in PROCESSES:
        path = output / f"{name}.txt"
        if path.exists():
            lines += summarise(name, collapsed(path), seconds, rate)
    (output / "summary.md").write_text("\n".join(lines))
    typer.echo("\n".join(lines))


if __name__ == "__main__":
    app()
