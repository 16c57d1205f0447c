"""``make bench-capacity``: how much one gateway process carries, with baselines from the same run.

Starts a private stack (one gateway replica), then measures:

1. **Closed loop** (runs per second): ``--users`` virtual users (50) each submit a
   question, stream it to its end, think 1-2 s, repeat, for ``--loop-s`` seconds;
   finished runs/s and completion p50/p95/p99, with the load suite's invariants (no
   gap, no duplicate, no lost run) checked on what the clients saw. A warm-up asks
   every question once first, so the generator's cold start is not counted.
   Then the same users with no think time: the runs/s one gateway carries when
   every user submits again at once (the closed loop above is bounded by its think
   time: 50 users thinking 1.5 s on average cannot exceed ~33 runs/s).
2. **Fan-out**: the generator slowed (``--delta-delay-ms`` before every delta), one
   run nobody watches (the baseline), then one run watched by ``--streams`` SSE
   clients (2,000) that connect while it executes, then another unobserved run. Per
   stream: time to its first event and whether it saw every event; the gateway's
   RSS and Redis connections; the watched run's own latency (its record's total)
   against the mean of the two unobserved ones.
3. **Open streams** (``--open-streams``, 10,000): one run that stays open (written to
   Redis as running, with no queue entry: ``idle_run``), that many SSE clients opened
   on it (at most ``--open-concurrency`` opening at a time: a listen backlog of 2,048
   drops SYNs past it), then held with their heartbeats for a few heartbeat intervals;
   the gateway's RSS and Redis connections with all of them open; then the run's
   terminal event is written and every stream must end with it. The clients are lean
   raw sockets (``hold``), all in this process; when they are the limit the report
   says so (opening errors).

The clients run on the same machine as the stack (as they do in the load suite),
so they take CPU from it; the report says what the machine's load was. Figures
are reported, never asserted. Writes report.md and report.json under --output.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import httpx
import redis
import typer

from loadtests import runner
from loadtests.clients import API_KEY, load_questions
from loadtests.report import latency, summary
from loadtests.scenario import Disconnects, Scenario
from loadtests.stack import LoadStack
from ragway.stats import percentile
from services.gateway.main import REDIS_CLIENT_NAME
from services.gateway.runs.events import RunAcceptedEvent, RunCancelled
from services.gateway.runs.models import RunRecord, RunStatus, new_run_id
from services.gateway.runs.store import events_key, run_key

log = logging.getLogger(__name__)
QUESTION = "How do I resume a stream after a disconnect?"
AUTH = {"Authorization": f"Bearer {API_KEY}"}
TERMINALS = (b"event: run.completed", b"event: run.failed", b"event: run.cancelled")
FINISHED = {"succeeded", "failed", "cancelled"}

app = typer.Typer(add_completion=False)


@dataclass
class StreamSample:
    status: str  # the response's status code, "" when none came
    first_event_ms: float | None
    events: int
    complete: bool  # saw a terminal event


async def watch(host: str, port: int, run_id: str) -> StreamSample:
    """One SSE client on raw asyncio streams (httpx costs more CPU than the gateway's
    side of 2,000 streams): the time to the first event and the events until the end."""
    t0 = time.perf_counter()
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(
        f"GET /v1/runs/{run_id}/events HTTP/1.1\r\nHost: {host}\r\n"
        f"Authorization: {AUTH['Authorization']}\r\nAccept: text/event-stream\r\n\r\n".encode()
    )
    body = bytearray()
    first: float | None = None
    try:
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                break
            body += chunk
            if first is None and b"\nevent: " in body:
                first = (time.perf_counter() - t0) * 1000
            if any(t in body[-4096:] for t in TERMINALS):
                break  # each event arrives whole: the terminal one is in the last chunk
    finally:
        writer.close()
    status = bytes(body[9:12]).decode(errors="replace") if body.startswith(b"HTTP/1.1 ") else ""
    return StreamSample(status, first, body.count(b"\nevent: "), any(t in body for t in TERMINALS))


@dataclass
class Opening:
    """Streams opening at once: their times to the first event, and when all settled."""

    total: int
    gate: asyncio.Semaphore
    opened: list[float] = field(default_factory=list)
    settled: int = 0
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def settle(self) -> None:
        self.settled += 1
        if self.settled >= self.total:
            self.done.set()


async def hold(host: str, port: int, run_id: str, opening: Opening) -> tuple[bool, int]:
    """One lean SSE client: connect (inside the opening gate), wait for the first event,
    then read (heartbeats, events) until the terminal event. Keeps no body: whether the
    stream ended with a terminal event, and the heartbeats it read."""
    async with opening.gate:
        try:
            t0 = time.perf_counter()
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(
                f"GET /v1/runs/{run_id}/events HTTP/1.1\r\nHost: {host}\r\n"
                f"Authorization: {AUTH['Authorization']}\r\n"
                "Accept: text/event-stream\r\n\r\n".encode()
            )
            tail = b""
            while b"\nevent: " not in tail:
                chunk = await reader.read(65536)
                if not chunk:
                    writer.close()
                    return False, 0
                tail = (tail + chunk)[-8192:]
            opening.opened.append((time.perf_counter() - t0) * 1000)
        finally:
            opening.settle()
    beats = 0
    try:
        while not any(t in tail for t in TERMINALS):
            chunk = await reader.read(65536)
            if not chunk:
                return False, beats
            beats += chunk.count(b": heartbeat")
            tail = (tail + chunk)[-4096:]
    finally:
        writer.close()
    return True, beats


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def gateway_connections(client: redis.Redis) -> int:
    return sum(
        1 for c in client.client_list() if str(c.get("name", "")).startswith(REDIS_CLIENT_NAME)
    )


def submit(api: httpx.Client) -> dict[str, Any]:
    resp = api.post("/v1/runs", json={"question": QUESTION}, headers=AUTH)
    resp.raise_for_status()
    accepted: dict[str, Any] = resp.json()
    return accepted


def read_run(api: httpx.Client, run_id: str) -> dict[str, Any]:
    record: dict[str, Any] = api.get(f"/v1/runs/{run_id}", headers=AUTH).json()
    return record


def unobserved_run(api: httpx.Client) -> float:
    """A run nobody streams: submitted, then its record read until it finished."""
    run_id = submit(api)["run_id"]
    while True:
        record = read_run(api, run_id)
        if record["status"] in FINISHED:
            return float(record["timings_ms"]["total"])
        time.sleep(0.2)


async def fan_out(stack: LoadStack, streams: int) -> dict[str, Any]:
    host, port = stack.config.host, stack.replica_ports[0]
    pid = stack.stack.part("gateway").process.pid
    r = redis.Redis.from_url(stack.redis_url)
    with httpx.Client(base_url=stack.urls[0], timeout=120) as api:
        before = await asyncio.to_thread(unobserved_run, api)
        rss_before = rss_mb(pid)
        connections_before = await asyncio.to_thread(gateway_connections, r)
        run_id = (await asyncio.to_thread(submit, api))["run_id"]
        peak = {"rss_mb": rss_before, "connections": connections_before}
        done = asyncio.Event()

        async def sample() -> None:
            while not done.is_set():
                peak["rss_mb"] = max(peak["rss_mb"], rss_mb(pid))
                count = await asyncio.to_thread(gateway_connections, r)
                peak["connections"] = max(peak["connections"], count)
                await asyncio.sleep(0.25)

        sampler = asyncio.create_task(sample())
        results = await asyncio.gather(
            *(watch(host, port, run_id) for _ in range(streams)), return_exceptions=True
        )
        done.set()
        await sampler
        observed = (await asyncio.to_thread(read_run, api, run_id))["timings_ms"]["total"]
        after = await asyncio.to_thread(unobserved_run, api)
    r.close()
    samples = [s for s in results if isinstance(s, StreamSample)]
    firsts = [s.first_event_ms for s in samples if s.first_event_ms is not None]
    event_counts = sorted({s.events for s in samples if s.complete})
    baseline = (before + after) / 2
    return {
        "streams": streams,
        "client_errors": sum(1 for s in results if isinstance(s, BaseException)),
        "complete_streams": sum(1 for s in samples if s.complete),
        "statuses": dict(Counter(s.status for s in samples).most_common()),
        "events_per_complete_stream": event_counts,
        "first_event_ms": {
            "p50": round(percentile(firsts, 50), 1) if firsts else None,
            "p95": round(percentile(firsts, 95), 1) if firsts else None,
            "max": round(max(firsts), 1) if firsts else None,
        },
        "gateway_rss_mb": {"before": round(rss_before, 1), "peak": round(peak["rss_mb"], 1)},
        "gateway_redis_connections": {"before": connections_before, "peak": peak["connections"]},
        "run_ms": {
            "observed": round(float(observed), 1),
            "unobserved_before": round(before, 1),
            "unobserved_after": round(after, 1),
        },
        "observed_vs_unobserved": round(float(observed) / baseline, 3) if baseline else None,
    }


def idle_run(api: httpx.Client, r: redis.Redis) -> str:
    """A run that stays open as long as the bench needs: the record of a finished run of
    the load's key, copied under a new id as running, with its run.accepted event, and no
    queue entry (no executor takes it; ``end_run`` ends it). Streams on it get their
    first event and then heartbeats, whatever the generator's timing."""
    template = RunRecord.model_validate_json(r.get(run_key(unobserved_run_id(api))) or b"{}")
    record = template.model_copy(update={"id": new_run_id(), "status": RunStatus.RUNNING})
    accepted = RunAcceptedEvent(run_id=record.id, question=record.question)
    r.set(run_key(record.id), record.model_dump_json(), ex=3600)
    r.xadd(events_key(record.id), {"type": accepted.TYPE.value, "data": accepted.data()})
    r.expire(events_key(record.id), 3600)
    return record.id


def end_run(r: redis.Redis, run_id: str) -> None:
    """Cancel the idle run as an executor would: the record, then the terminal event."""
    raw = r.get(run_key(run_id))
    assert isinstance(raw, bytes)
    record = RunRecord.model_validate_json(raw).model_copy(update={"status": RunStatus.CANCELLED})
    r.set(run_key(run_id), record.model_dump_json(), ex=3600)
    cancelled = RunCancelled()
    r.xadd(events_key(run_id), {"type": cancelled.TYPE.value, "data": cancelled.data()})


def unobserved_run_id(api: httpx.Client) -> str:
    run_id = str(submit(api)["run_id"])
    while read_run(api, run_id)["status"] not in FINISHED:
        time.sleep(0.2)
    return run_id


async def open_streams(
    stack: LoadStack, streams: int, concurrency: int, hold_s: float
) -> dict[str, Any]:
    """``streams`` SSE clients held open on one idle run; RSS and connections with all open."""
    host, port = stack.config.host, stack.replica_ports[0]
    pid = stack.stack.part("gateway").process.pid
    r = redis.Redis.from_url(stack.redis_url)
    with httpx.Client(base_url=stack.urls[0], timeout=120) as api:
        run_id = await asyncio.to_thread(idle_run, api, r)
    rss_before = rss_mb(pid)
    connections_before = await asyncio.to_thread(gateway_connections, r)
    opening = Opening(streams, asyncio.Semaphore(concurrency))
    opened = opening.opened
    t0 = time.perf_counter()
    tasks = [asyncio.create_task(hold(host, port, run_id, opening)) for _ in range(streams)]
    await opening.done.wait()  # every client opened (or failed to)
    open_s = time.perf_counter() - t0
    await asyncio.sleep(hold_s)  # heartbeats on all of them
    held = {
        "open": sum(1 for t in tasks if not t.done()),
        "rss_mb": round(rss_mb(pid), 1),
        "connections": await asyncio.to_thread(gateway_connections, r),
    }
    await asyncio.to_thread(end_run, r, run_id)
    results = await asyncio.gather(*tasks, return_exceptions=True)
    r.close()
    ended = [x for x in results if isinstance(x, tuple)]
    return {
        "streams": streams,
        "opened": len(opened),
        "open_s": round(open_s, 1),
        "first_event_ms": {
            "p50": round(percentile(opened, 50), 1) if opened else None,
            "p95": round(percentile(opened, 95), 1) if opened else None,
        },
        "open_while_held": held["open"],
        "heartbeats_per_stream": round(sum(b for _, b in ended) / len(ended), 1) if ended else 0,
        "client_errors": sum(1 for x in results if isinstance(x, BaseException)),
        "complete_streams": sum(1 for ok, _ in ended if ok),
        "gateway_rss_mb": {"before": round(rss_before, 1), "held": held["rss_mb"]},
        "rss_kb_per_stream": round((held["rss_mb"] - rss_before) * 1024 / max(1, held["open"]), 1),
        "gateway_redis_connections": {"before": connections_before, "held": held["connections"]},
    }


async def warm(stack: LoadStack, concurrency: int = 2) -> float:
    """Ask every question of the load's set once: the generator embeds the answer units
    of passages it meets for the first time (20-50 ms each), which is a cold start,
    not capacity. Returns the seconds it took."""
    t0 = time.perf_counter()
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=stack.urls[0], timeout=120) as api:

        async def ask(question: str) -> None:
            async with gate:
                # A cold run may fail (generator_timeout): it warmed what it reached.
                await api.post("/v1/ask", json={"question": question}, headers=AUTH)

        await asyncio.gather(*(ask(q) for q in load_questions(str(runner.QUESTIONS))))
    return time.perf_counter() - t0


def closed_loop(
    stack: LoadStack, users: int, loop_s: float, think_s: tuple[float, float] = (1.0, 2.0)
) -> dict[str, Any]:
    scenario = Scenario(
        name="capacity",
        description=f"{users} closed-loop streams on one gateway, think {think_s} s, no faults",
        duration_s=loop_s,
        drain_s=60,
        streams=users,
        replicas=1,
        think_s=think_s,
        disconnects=Disconnects(probability=0.0),
    )
    result = asyncio.run(runner.drive(scenario, stack, "make bench-capacity"))
    s = summary(result)
    done = [t for t in result.traces if t.finished_s is not None]
    return {
        "users": users,
        "load_s": round(result.load_s, 1),
        "finished_runs_per_s": s["throughput_runs_per_s"],
        "outcomes": s["outcomes"],
        "time_to_first_event_ms": s["time_to_first_event_ms"],
        "completion_ms": latency([t.finished_s - t.submitted_s for t in done]),  # type: ignore[operator]
        "invariants": {c.name: c.holds for c in result.checks},
        "invariant_failures": [c.name for c in result.checks if not c.holds],
    }


def render(report: dict[str, Any]) -> str:
    load = report["machine"]
    lines = [
        "# Capacity of one gateway process",
        "",
        f"- when: {report['when']}, code {report['revision']}",
        f"- machine: {load['cpus']} CPUs, load average {load['load_before']} before, "
        f"{load['load_after']} after (1/5/15 min); clients ran on the same machine",
        "- runs executed by "
        + (
            "a process of their own (RAGWAY_RUN_EXECUTORS=false)"
            if report.get("executor_process")
            else "the gateway process"
        ),
        "",
        *_render_loop(report["closed_loop"], report["warm_up_s"]),
        *_render_saturation(report["saturation"]),
        *_render_fan_out(report["fan_out"], report["delta_delay_ms"]),
        *_render_open(report.get("open_streams")),
        "Ingestion (a bulk build and webhooks against a plain sentence-transformers encode"
        " of the same texts) is `ingest.md` beside this report: `make bench-capacity` runs"
        " `scripts/bench_ingest.py` after this one.",
        "",
    ]
    return "\n".join(lines)


def _render_loop(c: dict[str, Any] | None, warm_up_s: float) -> list[str]:
    if c is None:
        return []
    return [
        f"## Closed loop: {c['users']} streams, think 1-2 s, {c['load_s']} s",
        "",
        f"After a warm-up that asked each question once ({warm_up_s} s).",
        "",
        f"- finished runs/s: **{c['finished_runs_per_s']}** ({c['outcomes']})",
        f"- time to first event ms: {_pct(c['time_to_first_event_ms'])}",
        f"- completion ms: **{_pct(c['completion_ms'])}**",
        "- invariants (no gap, no duplicate, no lost run, ...): "
        + ("all held" if not c["invariant_failures"] else f"BROKEN {c['invariant_failures']}"),
        "",
    ]


def _render_saturation(z: dict[str, Any] | None) -> list[str]:
    if z is None:
        return []
    return [
        f"## Saturation: the same {z['users']} streams with no think time, {z['load_s']} s",
        "",
        f"- finished runs/s: **{z['finished_runs_per_s']}** ({z['outcomes']})",
        f"- time to first event ms: {_pct(z['time_to_first_event_ms'])}",
        f"- completion ms: {_pct(z['completion_ms'])}",
        "- invariants: "
        + ("all held" if not z["invariant_failures"] else f"BROKEN {z['invariant_failures']}"),
        "",
    ]


def _render_fan_out(f: dict[str, Any] | None, delta_delay_ms: int) -> list[str]:
    if f is None:
        return []
    return [
        f"## Fan-out: {f['streams']} streams on one slow run "
        f"(generator {delta_delay_ms} ms before every delta)",
        "",
        f"- streams complete: {f['complete_streams']} / {f['streams']} (client errors "
        f"{f['client_errors']}; events per stream {f['events_per_complete_stream']}; "
        f"response statuses {f['statuses']})",
        f"- first event ms: p50 **{f['first_event_ms']['p50']}**, "
        f"p95 **{f['first_event_ms']['p95']}**, max {f['first_event_ms']['max']}",
        f"- gateway RSS MB: {f['gateway_rss_mb']['before']} before, "
        f"{f['gateway_rss_mb']['peak']} peak",
        f"- gateway Redis connections: {f['gateway_redis_connections']['before']} before, "
        f"{f['gateway_redis_connections']['peak']} peak",
        f"- the watched run: {f['run_ms']['observed']} ms; unobserved runs in the same "
        f"invocation: {f['run_ms']['unobserved_before']} ms before, "
        f"{f['run_ms']['unobserved_after']} ms after; ratio **{f['observed_vs_unobserved']}**",
        "",
    ]


def _render_open(o: dict[str, Any] | None) -> list[str]:
    if o is None:
        return []
    return [
        f"## Open streams: {o['streams']} SSE clients held on one long run (heartbeats on)",
        "",
        f"- opened: {o['opened']} / {o['streams']} in {o['open_s']} s (first event ms p50 "
        f"{o['first_event_ms']['p50']}, p95 {o['first_event_ms']['p95']}); open while held: "
        f"**{o['open_while_held']}**; "
        f"heartbeats per stream {o['heartbeats_per_stream']}",
        f"- gateway RSS MB: {o['gateway_rss_mb']['before']} before, "
        f"**{o['gateway_rss_mb']['held']}** with them open ({o['rss_kb_per_stream']} KB a stream)",
        f"- gateway Redis connections: {o['gateway_redis_connections']['before']} before, "
        f"{o['gateway_redis_connections']['held']} with them open",
        f"- after the run was cancelled: {o['complete_streams']} ended with their terminal "
        f"event (client errors {o['client_errors']})",
        "",
    ]


def _pct(values: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in values.items() if k.startswith("p") or k == "n")


@app.command()
def main(
    output: Annotated[Path, typer.Option(help="Report folder")] = Path("var/bench/capacity"),
    streams: Annotated[int, typer.Option(help="SSE streams on the slow run (0: skip)")] = 2000,
    users: Annotated[int, typer.Option(help="Closed-loop virtual users (0: skip)")] = 50,
    loop_s: Annotated[float, typer.Option(help="Seconds of closed loop")] = 40.0,
    # One delta a quoted sentence: the watched run (a one-sentence answer) lasts about
    # this long, longer than 2,000 streams take to open, as the fan-out needs.
    delta_delay_ms: Annotated[int, typer.Option(help="Generator pause per delta")] = 6000,
    warm_up: Annotated[bool, typer.Option(help="Ask every question once first")] = True,
    saturation_s: Annotated[
        float, typer.Option(help="Seconds of loop without think (0: skip)")
    ] = 20.0,
    open_streams_n: Annotated[
        int, typer.Option("--open-streams", help="SSE streams held open (0: skip)")
    ] = 10_000,
    open_concurrency: Annotated[int, typer.Option(help="Streams opening at a time")] = 500,
    hold_s: Annotated[float, typer.Option(help="Seconds all streams are held")] = 6.0,
    executor_process: Annotated[
        bool, typer.Option(help="Runs executed by a process of their own, not the gateway")
    ] = False,
) -> None:
    """Closed-loop runs/s and fan-out to many streams on one gateway; report.md + json."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    load_before = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="ragway-capacity-") as tmp:
        env = dict(runner.STACK_ENV)
        if executor_process:
            env |= {"RAGWAY_RUN_EXECUTORS": "false"}
        stack = LoadStack(Path(tmp), 1, env)
        held = None
        try:
            stack.start()
            if executor_process:
                stack.stack.start_executors()
            warm_s = asyncio.run(warm(stack)) if warm_up else 0.0
            loop = closed_loop(stack, users, loop_s) if users else None
            saturated = (
                closed_loop(stack, users, saturation_s, think_s=(0.0, 0.0))
                if users and saturation_s
                else None
            )
            fan = None
            if streams:
                stack.slow_generator(delta_delay_ms)
                fan = asyncio.run(fan_out(stack, streams))
                stack.clear_generator_faults()
            if open_streams_n:
                held = asyncio.run(open_streams(stack, open_streams_n, open_concurrency, hold_s))
        finally:
            stack.stop()
        tracebacks = sum(
            path.read_text(errors="replace").count("Traceback")
            for path in stack.log_files().values()
            if path.exists()
        )
    report = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "revision": runner.revision(),
        "machine": {
            "cpus": os.cpu_count(),
            "load_before": load_before,
            "load_after": [round(x, 2) for x in os.getloadavg()],
        },
        "executor_process": executor_process,
        "warm_up_s": round(warm_s, 1),
        "delta_delay_ms": delta_delay_ms,
        "closed_loop": loop,
        "saturation": saturated,
        "fan_out": fan,
        "open_streams": held,
        "tracebacks_in_service_logs": tracebacks,
    }
    output.mkdir(parents=True, exist_ok=True)
    (output / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (output / "report.md").write_text(render(report))
    typer.echo(render(report))
    typer.echo(f"wrote {output / 'report.md'}")


if __name__ == "__main__":
    app()
