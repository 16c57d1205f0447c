"""One load run: start the stack, drive the users and the faults, check, report, stop."""

from __future__ import annotations

import asyncio
import logging
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import redis

from loadtests import invariants, report, stored
from loadtests.clients import Clock, User, load_questions
from loadtests.faults import FaultInjector
from loadtests.model import ErrorLog, RunTrace
from loadtests.report import LoadResult
from loadtests.scenario import Scenario
from loadtests.stack import ROOT, LoadStack

log = logging.getLogger(__name__)
QUESTIONS = ROOT / "tests" / "fixtures" / "demo-qa.yaml"
# Shorter than the defaults so a killed replica's runs are taken over in seconds
# and a dead connection shows within a few; a scenario's env overrides them.
STACK_ENV = {"RAGWAY_RUN_LEASE_S": "5", "RAGWAY_HEARTBEAT_S": "2"}


def run(scenario: Scenario, out_dir: Path, data_dir: Path | None = None) -> LoadResult:
    """Run the scenario on a private stack; write the report under ``out_dir``."""
    command = shlex.join([Path(sys.executable).name, "-m", "loadtests", *sys.argv[1:]])
    command += f"  (code {revision()})"
    with tempfile.TemporaryDirectory(prefix="ragway-load-") as tmp:
        where = data_dir or Path(tmp)
        stack = LoadStack(where, scenario.replicas, STACK_ENV | scenario.env)
        try:
            stack.start()
            result = asyncio.run(drive(scenario, stack, command))
        finally:
            stack.stop()
        result.tracebacks = {
            name: path.read_text(errors="replace").count("Traceback")
            for name, path in stack.log_files().items()
            if path.exists()
        }
        # Keep the service logs (their tails) beside the report: they explain what broke.
        logs = out_dir / f"{scenario.name}-logs"
        logs.mkdir(parents=True, exist_ok=True)
        for path in stack.log_files().values():
            if path.exists():
                (logs / path.name).write_bytes(path.read_bytes()[-2_000_000:])
    report.write(result, out_dir)
    return result


async def drive(scenario: Scenario, stack: LoadStack, command: str) -> LoadResult:
    loop = asyncio.get_running_loop()
    clock = Clock(loop, loop.time(), scenario.duration_s, scenario.duration_s + scenario.drain_s)
    errors = ErrorLog()
    traces: list[RunTrace] = []
    questions = load_questions(str(QUESTIONS))
    limits = httpx.Limits(max_connections=4 * scenario.streams + 16, max_keepalive_connections=None)
    # Reads wait at most a few heartbeats: a stream that goes silent is dead.
    timeout = httpx.Timeout(10.0, pool=30.0)
    started = time.monotonic()
    async with httpx.AsyncClient(limits=limits, timeout=timeout) as http:
        users = [
            User(i, http, stack.urls, questions, scenario, clock, errors, traces)
            for i in range(scenario.streams)
        ]
        injector = FaultInjector(stack, scenario.faults, clock)
        faults = asyncio.create_task(injector.run())
        await asyncio.gather(*(u.run() for u in users))
        load_s = min(clock.now(), scenario.duration_s)
        await faults  # every fault ends within the load phase (the scenario checks)
    wall_s = time.monotonic() - started
    # Let executors finish runs nobody follows any more (a POST answered too late).
    await _settle(stack, clock)
    client = redis.Redis.from_url(stack.redis_url)
    try:
        ids = set(stored.run_ids(client)) | {t.run_id for t in traces}
        runs = await asyncio.to_thread(stored.read_runs, client, ids)
    finally:
        client.close()
    checks = invariants.check_all(traces, runs, injector.snapshots)
    return LoadResult(
        scenario=scenario,
        command=command,
        load_s=load_s,
        wall_s=wall_s,
        traces=traces,
        stored=runs,
        errors=errors,
        faults=injector.windows,
        checks=checks,
        tracebacks={},
    )


def revision() -> str:
    """The commit under test, marked when the work tree differs from it."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "ragway", "services", "loadtests"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return "unknown"
    return f"{head or 'unknown'}{' + local changes' if dirty else ''}"


async def _settle(stack: LoadStack, clock: Clock) -> None:
    """Wait (within the drain deadline) until no run in Redis is queued or running."""
    client = redis.Redis.from_url(stack.redis_url)
    try:
        while clock.now() < clock.follow_until_s:
            statuses = await asyncio.to_thread(stored.statuses, client)
            if all(status in invariants.FINAL_STATUSES for status in statuses.values()):
                return
            await asyncio.sleep(1.0)
    finally:
        client.close()
