"""The canary drill: planted regressions rolled back, a good candidate stepped and promoted,
and a shadow comparison, on a private demo stack (``make canary-drill``).

    python -m loadtests.canary_drill [--output var/canary-drill] [--seed 7]

One stack (Redis, retriever, generator, gateway on free loopback ports, the demo
knowledge base), then four experiments in turn, each driven by live traffic: the
public, answerable questions of eval/demo-qa.yaml, each from a random user, a few
at a time, until the experiment ends or its request budget is spent.

    A1  a candidate build missing 10 % of the documents (the two whose loss leaves the most
        questions without any gold source), canary at 50 %: first on the whole question mix
        (reported: other pages repeat most facts, so the served outcomes may not move), then
        on the questions about the missing pages (a topic burst): must be rolled back by
        its gates within 200 requests
    A2  a broken refusal threshold (min_support 0.999), canary at 50 %: the same
    B   a candidate as good as the baseline (the live build), --steps 25,50,75: must pass
        each step and be promoted on its own
    C   a shadow of the A1 candidate at 100 %: the comparison table of its pairs

Every report is printed and written under ``--output`` (report.md, and each
experiment's state and report as JSON). Exit status 1 when an expectation fails.
"""

from __future__ import annotations

import itertools
import json
import random
import signal
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import httpx
import typer
from rich.console import Console

from ragway.kb import Defaults, discover, parse_document
from ragway_tools import build_client
from ragway_tools.commands.canary import flagged_lines, report_table, steps_table
from ragway_tools.demo import DEMO_KB, ROOT, demo_stack
from ragway_tools.evaluation.qa import QAItem, load_qa

ADMIN_KEY = "rgw-demo-admin-key"
PUBLIC_KEY = "rgw-demo-public-key"
QA = ROOT / "eval/demo-qa.yaml"
# The drill sends a few hundred runs a minute from one key: above the default limits.
STACK_ENV = {
    "RAGWAY_RUNS_PER_MINUTE": "100000",
    "RAGWAY_REQUESTS_PER_MINUTE": "100000",
    "RAGWAY_TENANT_RUNS_PER_MINUTE": "100000",
    "RAGWAY_TENANT_REQUESTS_PER_MINUTE": "100000",
}
# Looser than config/canary-gates.yaml, so that a candidate as good as the baseline passes
# a step within a few hundred requests (the defaults need ~160 clean runs a side per step,
# and a step is read over the span in which either side reaches 500 runs: docs/canary.md);
# the same gates judge the regressions, so they are no easier to catch than the good one.
GATES: dict[str, Any] = {
    "min_samples": 20,
    "alpha": 0.1,
    "max_error_rate_increase": 0.1,
    "max_refusal_rate_increase": 0.15,
    "max_citation_validity_drop": 0.15,
    "max_p95_latency_ratio": 3.0,
    "max_latency_exceedance_increase": 0.15,
}
ROLLBACK_BUDGET = 200  # the bar: a worse candidate is rolled back within this
CONCURRENCY = 4
MISSING_SHARE = 0.10

app = typer.Typer(add_completion=False)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # unwind through ``finally``: the stack's processes stop


@dataclass
class Drive:
    """Requests sent in one experiment, with when each was answered."""

    sent: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    answered_at_ms: list[int] = field(default_factory=list)

    def before(self, ms: int | None) -> int:
        """Requests answered by ``ms`` (the experiment's end)."""
        return self.sent if ms is None else sum(t <= ms for t in self.answered_at_ms)


class Drill:
    def __init__(self, url: str, questions: list[str], seed: int, console: Console) -> None:
        self.admin = httpx.Client(
            base_url=url, timeout=60, headers={"Authorization": f"Bearer {ADMIN_KEY}"}
        )
        self.public = httpx.Client(
            base_url=url, timeout=60, headers={"Authorization": f"Bearer {PUBLIC_KEY}"}
        )
        self.questions = questions
        self.rng = random.Random(seed)
        self.console = console
        self.failures: list[str] = []

    def close(self) -> None:
        self.admin.close()
        self.public.close()

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        reply = self.admin.request(method, f"/v1/admin{path}", json=body)
        if reply.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {reply.status_code} {reply.text[:300]}")
        return reply.json()

    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = self.call("GET", "/canary")["state"]
        return state

    def _ask(self, question: str, user: str) -> tuple[int, int]:
        reply = self.public.post("/v1/ask", json={"question": question, "user_id": user})
        return reply.status_code, int(time.time() * 1000)

    def drive(self, budget: int, questions: list[str] | None = None) -> Drive:
        """Send questions from random users until the experiment ends or ``budget`` is spent."""
        drive = Drive()
        pool_of = questions or self.questions
        with ThreadPoolExecutor(CONCURRENCY) as pool:
            while drive.sent < budget and self.state()["mode"] != "off":
                batch = [
                    (self.rng.choice(pool_of), f"user-{self.rng.randrange(1_000_000)}")
                    for _ in range(min(CONCURRENCY, budget - drive.sent))
                ]
                for status, at in pool.map(lambda qu: self._ask(*qu), batch):
                    drive.sent += 1
                    drive.statuses[status] += 1
                    drive.answered_at_ms.append(at)
        return drive

    def expect(self, ok: bool, what: str) -> None:
        self.console.print(
            f"  [{'green' if ok else 'bold red'}]{'ok' if ok else 'FAILED'}[/] {what}"
        )
        if not ok:
            self.failures.append(what)

    def show(self, name: str, state: dict[str, Any], report: dict[str, Any], out: Path) -> None:
        if state.get("steps"):
            self.console.print(steps_table(state))
        self.console.print(report_table(report))
        for line in flagged_lines(report)[:5]:
            self.console.print(f"  {line}", soft_wrap=True)
        (out / f"{name}.json").write_text(json.dumps({"state": state, "report": report}, indent=2))


def traffic_items() -> list[QAItem]:
    """The public, answerable items of the demo QA set: the drill's question mix."""
    return [i for i in load_qa(QA).items if i.caller == "public" and i.answerable]


def orphaned(items: list[QAItem], missing: set[str]) -> list[str]:
    """The questions all of whose gold sources are missing."""
    return [i.question for i in items if set(i.sources) <= missing]


def build_missing(addr: str, token: str, items: list[QAItem]) -> tuple[str, list[str], int]:
    """A build of the demo KB less 10 % of its documents: the set whose loss leaves the
    most questions of the mix with no gold source (the worst 10 % to lose)."""
    files = discover(list(DEMO_KB))
    docs = [(path, parse_document(path, root, Defaults())) for path, root in files]
    count = max(1, round(len(docs) * MISSING_SHARE))
    ids = sorted(d.document_id for _, d in docs)
    missing = set(
        max(itertools.combinations(ids, count), key=lambda c: len(orphaned(items, set(c))))
    )
    kept = [path for path, d in docs if d.document_id not in missing]
    created = build_client.create_build(
        addr, kept, Defaults(), build_id="b-drill-missing-10pct", candidate=False, token=token
    )
    return created.info.build_id, sorted(missing), len(docs)


def rollback_scenario(
    drill: Drill, name: str, title: str, path: dict[str, Any], out: Path, *,
    questions: list[str] | None = None, expect: bool = True, label: str = "",
) -> None:  # fmt: skip
    """A canary at 50 % of a worse candidate; ``expect``: it must be rolled back in time."""
    console = drill.console
    console.rule(title)
    drill.call("PUT", f"/paths/{name}", path)
    started = drill.call("POST", "/canary", {"candidate": name, "percent": 50, "gates": GATES})
    drive = drill.drive(ROLLBACK_BUDGET * 2 if expect else ROLLBACK_BUDGET, questions)
    state = drill.state()
    report = drill.call("GET", "/canary/report")
    within = drive.before(state.get("stopped_at_ms"))
    console.print(
        f"{name} v{started['candidate_version']} at 50 %: {within} requests until "
        f"{'rolled back' if state['rolled_back'] else state['stopped_reason'] or 'still running'}"
        f" ({drive.sent} sent; HTTP {dict(drive.statuses)}); "
        f"runs judged: baseline {report['baseline']['runs']}, {name} {report['candidate']['runs']}",
        soft_wrap=True,
    )
    console.print(f"stopped_reason: {state['stopped_reason']}", soft_wrap=True)
    drill.show(label or name, state, report, out)
    if expect:
        drill.expect(bool(state["rolled_back"]), f"{name} rolled back automatically")
        drill.expect(
            within <= ROLLBACK_BUDGET, f"{name} within {ROLLBACK_BUDGET} requests ({within})"
        )
    else:
        console.print(
            f"  (reported, not expected) verdict after {drive.sent} requests: {report['verdict']}"
        )
    if state["mode"] != "off":
        drill.call("POST", "/canary/stop")


def steps_scenario(drill: Drill, out: Path, budget: int) -> None:
    console = drill.console
    console.rule("B: a candidate as good as the baseline, --steps 25,50,75")
    drill.call("PUT", "/paths/candidate", {"note": "the live build again: as good as baseline"})
    before = drill.call("GET", "/paths/baseline")
    started = drill.call("POST", "/canary", {"steps": [25, 50, 75], "gates": GATES})
    drive = drill.drive(budget)
    state = drill.state()
    report = drill.call("GET", "/canary/report")
    after = drill.call("GET", "/paths/baseline")
    console.print(
        f"candidate v{started['candidate_version']}: {drive.before(state.get('stopped_at_ms'))} "
        f"requests until {state['stopped_reason'] or 'still running'} (HTTP "
        f"{dict(drive.statuses)}); baseline v{before['version']} -> v{after['version']} "
        f"({after['note']})",
        soft_wrap=True,
    )
    drill.show("promoted", state, report, out)
    verdicts = [s["verdict"] for s in state["step_history"]]
    drill.expect(verdicts == ["pass", "pass", "pass"], f"every step passed ({verdicts})")
    drill.expect(
        (state["stopped_reason"] or "").startswith("promoted after steps"),
        "promoted on its own after the last step",
    )
    if state["mode"] != "off":
        drill.call("POST", "/canary/stop")
    # The baseline back on the live build with default options, for the shadow.
    drill.call("PUT", "/paths/baseline", {"note": "reset after the drill's promotion"})


def shadow_scenario(drill: Drill, out: Path, requests: int) -> None:
    console = drill.console
    console.rule("C: shadow of the build missing 10 % of the documents, 100 %")
    drill.call("POST", "/canary", {"mode": "shadow", "candidate": "missing", "percent": 100,
                                   "gates": GATES})  # fmt: skip
    drive = drill.drive(requests)
    deadline = time.monotonic() + 60
    report = drill.call("GET", "/canary/report")
    while report["shadow"]["pairs"] < drive.sent and time.monotonic() < deadline:
        time.sleep(0.5)  # the last shadows run after their served runs
        report = drill.call("GET", "/canary/report")
    state = drill.state()
    console.print(
        f"{drive.sent} requests shadowed; {report['shadow']['pairs']} pairs compared, "
        f"{report['shadow']['dropped']} dropped; "
        f"experiment {'rolled back' if state['rolled_back'] else state['mode']}",
        soft_wrap=True,
    )
    drill.show("shadow", state, report, out)
    drill.expect(report["shadow"]["pairs"] > 0, "shadow pairs compared")
    if state["mode"] != "off":
        drill.call("POST", "/canary/stop")


@app.command()
def main(
    output: Annotated[Path, typer.Option(help="Report folder")] = Path("var/canary-drill"),
    seed: Annotated[int, typer.Option(help="Seed of the traffic (questions, users)")] = 7,
    steps_budget: Annotated[
        int, typer.Option(help="Requests at most for the stepped candidate")
    ] = 3000,
    shadow_requests: Annotated[int, typer.Option(help="Requests shadowed")] = 120,
) -> None:
    """Roll back two planted regressions, step a good candidate to promotion, shadow one."""
    signal.signal(signal.SIGTERM, _interrupt)
    output.mkdir(parents=True, exist_ok=True)
    console = Console(record=True, width=150)
    items = traffic_items()
    questions = [i.question for i in items]
    started = time.monotonic()
    with demo_stack(STACK_ENV) as stack:
        drill = Drill(stack.config.gateway_url, questions, seed, console)
        try:
            build, missing, total = build_missing(
                stack.config.retriever_addr, stack.config.service_token, items
            )
            burst = orphaned(items, set(missing))
            console.print(
                f"demo stack up; traffic: {len(questions)} public answerable questions of "
                f"{QA.relative_to(ROOT)}, random users, {CONCURRENCY} at a time; gates: {GATES}",
                soft_wrap=True,
            )
            path = {"build": build, "note": "drill: 10 % of the documents missing"}
            lost = (
                f"build {build} missing {len(missing)} of {total} documents ({', '.join(missing)})"
            )
            rollback_scenario(
                drill, "missing", f"A1a: {lost}, canary at 50 %, the whole question mix",
                path, output, expect=False, label="missing-mix",
            )  # fmt: skip
            rollback_scenario(
                drill, "missing",
                f"A1b: the same build, canary at 50 %, traffic on the {len(burst)} questions "
                "whose every gold source is missing",
                path, output, questions=burst,
            )  # fmt: skip
            rollback_scenario(
                drill, "strict", "A2: broken refusal threshold (min_support 0.999), canary at 50 %",
                {"min_support": 0.999, "note": "drill: broken threshold"}, output,
            )  # fmt: skip
            steps_scenario(drill, output, steps_budget)
            shadow_scenario(drill, output, shadow_requests)
        finally:
            drill.close()
    console.print(f"drill took {time.monotonic() - started:.0f} s; reports in {output}/")
    (output / "report.md").write_text(console.export_text())
    if drill.failures:
        console.print(f"[bold red]{len(drill.failures)} expectation(s) failed[/]")
        raise typer.Exit(1)


if __name__ == "__main__":
    app()
