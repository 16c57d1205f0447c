"""``ragway bench-tracing``: what tracing on costs, against tracing off, in one run.

Two private demo stacks (Redis, retriever, generator, gateway on free loopback
ports, the demo knowledge base) run side by side, identical but for tracing:

- ``off``: ``OTEL_SDK_DISABLED=true`` in every process, so no SDK is installed
  (ragway/telemetry.py), whatever the caller's environment holds;
- ``on``: every process exports its spans over OTLP/HTTP, the default exporter
  with its default batching, to a real OTLP endpoint on loopback in this process
  (``ragway_tools/otlp_receiver.py``), sampling every trace.

``concurrency`` clients each ask the demo questions in turn through
``POST /v1/ask`` (one answer, then the next question, no think time), after one
unmeasured pass over the questions on each stack. The load alternates between the
stacks in slices of ``slice_s`` (off, on, then on, off, ...) until each had
``duration_s``, so a machine whose other load changes during the run (a shared
one) weighs on both modes alike; the idle stack costs next to nothing meanwhile.
The report gives p50/p95 of the answer time and runs/s per mode, and the ratios
on/off. Nothing here asserts a time: the numbers are for people.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from ragway.stats import percentile
from ragway_tools.demo import DEMO_KB, demo_stack
from ragway_tools.launcher import Stack
from ragway_tools.otlp_receiver import OtlpReceiver

MODES = ("off", "on")
PUBLIC_KEY = "rgw-demo-public-key"
SRE_KEY = "rgw-demo-sre-key"
# The load is the pipeline's, not the rate limiter's.
UNLIMITED = {
    "RAGWAY_REQUESTS_PER_MINUTE": "1000000",
    "RAGWAY_RUNS_PER_MINUTE": "1000000",
    "RAGWAY_TENANT_REQUESTS_PER_MINUTE": "1000000",
    "RAGWAY_TENANT_RUNS_PER_MINUTE": "1000000",
}


@dataclass
class Phase:
    mode: str  # "off" or "on"
    ready_s: float = 0.0
    duration_s: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    errors: int = 0
    refused: int = 0
    spans_received: int = 0
    export_requests: int = 0

    @property
    def runs_per_s(self) -> float:
        return len(self.latencies_ms) / self.duration_s if self.duration_s else 0.0

    def p(self, q: float) -> float:
        return percentile(self.latencies_ms, q) if self.latencies_ms else float("nan")


@dataclass(frozen=True)
class Question:
    text: str
    key: str


def questions(qa_file: Path) -> list[Question]:
    items: list[dict[str, Any]] = yaml.safe_load(qa_file.read_text())["items"]
    return [
        Question(i["question"], SRE_KEY if i.get("caller") == "sre" else PUBLIC_KEY) for i in items
    ]


async def _ask(api: httpx.AsyncClient, q: Question) -> tuple[float, bool | None]:
    """Milliseconds to the whole answer, and whether it was a refusal (None: an error)."""
    t0 = time.perf_counter()
    try:
        resp = await api.post(
            "/v1/ask",
            json={"question": q.text},
            headers={"Authorization": f"Bearer {q.key}"},
        )
    except httpx.HTTPError:
        return (time.perf_counter() - t0) * 1000, None
    elapsed = (time.perf_counter() - t0) * 1000
    if resp.status_code != 200:
        return elapsed, None
    return elapsed, bool(resp.json().get("refused"))


async def _warm(base_url: str, qs: Sequence[Question]) -> None:
    """One unmeasured pass: models, caches and connections warm."""
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as api:
        for q in qs:
            await _ask(api, q)


async def _slice(
    base_url: str, qs: Sequence[Question], concurrency: int, slice_s: float, phase: Phase
) -> None:
    """``concurrency`` clients in a closed loop for ``slice_s``; each finishes its last run."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base_url, timeout=60, limits=limits) as api:
        started = time.perf_counter()
        stop_at = started + slice_s
        done = len(phase.latencies_ms)  # the next slice goes on with other questions

        async def client(offset: int) -> None:
            n = offset + done
            while time.perf_counter() < stop_at:
                ms, refused = await _ask(api, qs[n % len(qs)])
                n += 1
                if refused is None:
                    phase.errors += 1
                else:
                    phase.latencies_ms.append(ms)
                    phase.refused += refused

        await asyncio.gather(*(client(i * len(qs) // concurrency) for i in range(concurrency)))
        phase.duration_s += time.perf_counter() - started


def _env(mode: str, receiver: OtlpReceiver) -> dict[str, str]:
    if mode == "off":
        return UNLIMITED | {"OTEL_SDK_DISABLED": "true"}
    return UNLIMITED | {
        "OTEL_SDK_DISABLED": "false",
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_TRACES_SAMPLER": "always_on",
    }


def _measure(
    qs: Sequence[Question],
    concurrency: int,
    duration_s: float,
    slice_s: float,
    kb: Sequence[Path],
) -> list[Phase]:
    phases = {mode: Phase(mode) for mode in MODES}
    receivers = {mode: OtlpReceiver(keep=False) for mode in MODES}
    with contextlib.ExitStack() as stack:
        for receiver in receivers.values():
            stack.enter_context(receiver)

        def start(mode: str) -> tuple[Stack, contextlib.AbstractContextManager[Stack]]:
            t0 = time.perf_counter()
            cm = demo_stack(_env(mode, receivers[mode]), kb=kb)
            running = cm.__enter__()
            phases[mode].ready_s = time.perf_counter() - t0
            return running, cm

        # Both stacks load the knowledge base at once: half the waiting.
        with ThreadPoolExecutor(len(MODES)) as pool:
            futures = {mode: pool.submit(start, mode) for mode in MODES}
        urls: dict[str, str] = {}
        failures: list[BaseException] = []
        for mode, future in futures.items():
            try:
                running, cm = future.result()
            except Exception as exc:  # the stack that did start is still stopped below
                failures.append(exc)
                continue
            stack.push(cm.__exit__)
            urls[mode] = running.config.gateway_url
        if failures:
            raise failures[0]

        async def load() -> None:
            for mode in MODES:
                await _warm(urls[mode], qs)
            slices = max(1, round(duration_s / slice_s))
            for n in range(slices):
                for mode in MODES if n % 2 == 0 else MODES[::-1]:
                    await _slice(urls[mode], qs, concurrency, slice_s, phases[mode])

        asyncio.run(load())
    # The stacks are stopped: each process flushed its last batch on the way out.
    for mode, receiver in receivers.items():
        phases[mode].spans_received = receiver.span_count
        phases[mode].export_requests = receiver.requests
    return [phases[mode] for mode in MODES]


def run(
    qa_file: Path,
    output: Path,
    *,
    concurrency: int = 4,
    duration_s: float = 30.0,
    slice_s: float = 5.0,
    kb: Sequence[Path] = DEMO_KB,
) -> list[Phase]:
    qs = questions(qa_file)
    phases = _measure(qs, concurrency, duration_s, slice_s, kb)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(render(phases, concurrency, len(qs), slice_s))
    output.with_suffix(".json").write_text(
        json.dumps(
            {
                "concurrency": concurrency,
                "slice_s": slice_s,
                "questions": len(qs),
                "phases": [asdict(p) | {"runs_per_s": p.runs_per_s} for p in phases],
                "ratio_on_off": ratios(phases),
                "load_average": _load(),
            },
            indent=2,
        )
    )
    return phases


def ratios(phases: Sequence[Phase]) -> dict[str, float]:
    off, on = phases
    return {
        "p50": on.p(50) / off.p(50),
        "p95": on.p(95) / off.p(95),
        "runs_per_s": on.runs_per_s / off.runs_per_s if off.runs_per_s else float("nan"),
    }


def render(phases: Sequence[Phase], concurrency: int, n: int, slice_s: float) -> str:
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    lines = [
        "# ragway bench-tracing",
        "",
        f"Closed loop: {concurrency} clients asking the {n} demo questions in turn through "
        "POST /v1/ask, no think time, after one unmeasured pass; two private stacks side by "
        f"side, the load alternating between them every {slice_s:g} s; {os.cpu_count()} CPUs; "
        f"OPENBLAS_NUM_THREADS={threads}; load average {_load()} at the end.",
        "Tracing off: OTEL_SDK_DISABLED=true. Tracing on: every process exports over "
        "OTLP/HTTP (default batching, every trace sampled) to an OTLP endpoint on loopback.",
        "",
        "| mode | runs | errors | refused | runs/s | p50 ms | p95 ms | mean ms | spans received "
        "| stack ready s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p in phases:
        mean = statistics.fmean(p.latencies_ms) if p.latencies_ms else float("nan")
        lines.append(
            f"| {p.mode} | {len(p.latencies_ms)} | {p.errors} | {p.refused} | "
            f"{p.runs_per_s:.2f} | {p.p(50):.1f} | {p.p(95):.1f} | {mean:.1f} | "
            f"{p.spans_received} | {p.ready_s:.1f} |"
        )
    r = ratios(phases)
    lines += [
        "",
        f"Tracing on / off, same run: p50 {r['p50']:.3f}x, p95 {r['p95']:.3f}x, "
        f"runs/s {r['runs_per_s']:.3f}x.",
        "",
    ]
    return "\n".join(lines)


def _load() -> str:
    try:
        return ", ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "unknown"
