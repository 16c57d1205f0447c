"""The saturated closed loop, with each process's CPU per finished run.

    PYTHONPATH=$PWD .venv/bin/python scripts/bench_saturated.py --output /tmp/sat/<name> \\
        [--env RAGWAY_QUERY_VECTOR_CACHE_ENTRIES=0] [--unique] [--users 50] [--seconds 20]

One private stack (``loadtests/stack.py``: one gateway, the demo knowledge base), the
capacity bench's warm-up (every question of the load suite asked once), then
``closed_loop(stack, users, seconds, think_s=(0, 0))``: every user submits again as soon
as its run ended. Each part's CPU is read from ``/proc/<pid>/stat`` around the loop, the
load clients' (this process) from ``getrusage``, and each is divided by the runs that
finished. ``--env`` sets a setting of every part (repeatable).

The load suite asks 36 questions, so after the warm-up every question has been asked
before. ``--unique`` appends `` #<n>`` (a new n each time) to every question the users
ask: no text repeats, so nothing keyed by the question (the retriever's query vectors,
the generator's per-question work) is ever found again.

Writes ``<output>/saturated.json`` and prints it. A report, never an assertion.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from unittest.mock import patch

from loadtests import runner
from loadtests.capacity import closed_loop, warm
from loadtests.clients import load_questions
from loadtests.stack import LoadStack

TICK = os.sysconf("SC_CLK_TCK")


class Unique(list[str]):
    """The questions, each handed out with a number no other has (``random.choice`` reads
    ``seq[i]``)."""

    def __init__(self, questions: Iterable[str]) -> None:
        super().__init__(questions)
        self._next = itertools.count(1)

    def __getitem__(self, index: Any) -> Any:
        found = super().__getitem__(index)
        return f"{found} #{next(self._next)}" if isinstance(found, str) else found


def cpu_s(pid: int) -> float:
    """User and system CPU of a process and its reaped children, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # After the command: state is field 3, utime 14, stime 15, cutime 16, cstime 17.
    return sum(int(f) for f in fields[11:15]) / TICK


def clients_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--unique", action="store_true", help="no question text repeats")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    settings = dict(item.split("=", 1) for item in args.env)
    os.environ.update(settings)  # the parts inherit this process's environment
    if args.unique:  # runner.drive reads the questions through its module's name
        asking = patch.object(runner, "load_questions", lambda path: Unique(load_questions(path)))
        asking.start()
    load_before = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="ragway-saturated-") as tmp:
        stack = LoadStack(Path(tmp), 1, runner.STACK_ENV)
        try:
            stack.start()
            warm_s = asyncio.run(warm(stack))
            pids = {part.name: part.process.pid for part in stack.stack.parts}
            before = {name: cpu_s(pid) for name, pid in pids.items()}
            clients_before, t0 = clients_cpu_s(), time.perf_counter()
            loop = closed_loop(stack, args.users, args.seconds, think_s=(0.0, 0.0))
            wall_s = time.perf_counter() - t0
            spent = {name: cpu_s(pid) - before[name] for name, pid in pids.items()}
            spent["clients"] = clients_cpu_s() - clients_before
        finally:
            stack.stop()
    runs = round(loop["finished_runs_per_s"] * loop["load_s"])
    report = {
        "when": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "revision": runner.revision(),
        "settings": settings,
        "unique_questions": args.unique,
        "load_before": load_before,
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "warm_up_s": round(warm_s, 1),
        "finished_runs": runs,
        "runs_per_s": loop["finished_runs_per_s"],
        "completion_ms": loop["completion_ms"],
        "outcomes": loop["outcomes"],
        "invariant_failures": loop["invariant_failures"],
        "cpu_ms_per_run": {k: round(1000 * v / max(runs, 1), 2) for k, v in spent.items()}
        | {"all": round(1000 * sum(spent.values()) / max(runs, 1), 2)},
        "busy_cores": round(sum(spent.values()) / wall_s, 2),
    }
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "saturated.json").write_text(json.dumps(report, indent=2) + "\n")
    sys.stdout.write(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
