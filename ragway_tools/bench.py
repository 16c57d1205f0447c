"""``ragway bench``: end-to-end latency of the real stack, with baselines from the same run.

Starts a private stack (Redis server, retriever, generator, gateway on free
loopback ports), loads the demo knowledge base, then asks every question of a QA
file through the public API and measures, per question:

- time to first event (``run.accepted`` reaches the SSE client),
- time to first answer event (first ``answer.delta``, or ``answer.completed``
  for a refusal),
- time to the terminal event.

Each question is asked cold (first time) and warm (again). Baselines measured in
the same run on the same machine: query embedding with the fp32
sentence-transformers model against the int8 ONNX model the services use.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from ragway.stats import percentile
from ragway_tools.demo import demo_stack


@dataclass
class Sample:
    first_event_ms: float
    first_answer_ms: float
    total_ms: float


@dataclass
class Report:
    ready_s: float = 0.0
    cold: list[Sample] = field(default_factory=list)
    warm: list[Sample] = field(default_factory=list)
    embed_ms: dict[str, list[float]] = field(default_factory=dict)


def measure_run(api: httpx.Client, question: str, key: str) -> Sample:
    headers = {"Authorization": f"Bearer {key}"}
    t0 = time.perf_counter()
    run_id = api.post("/v1/runs", json={"question": question}, headers=headers).json()["run_id"]
    first_event = first_answer = None
    with api.stream("GET", f"/v1/runs/{run_id}/events", headers=headers) as resp:
        for line in resp.iter_lines():
            if not line.startswith("event:"):
                continue
            now = (time.perf_counter() - t0) * 1000
            name = line.split(":", 1)[1].strip()
            first_event = first_event if first_event is not None else now
            if first_answer is None and name in ("answer.delta", "answer.completed"):
                first_answer = now
            if name in ("run.completed", "run.failed"):
                break
    total = (time.perf_counter() - t0) * 1000
    assert first_event is not None and first_answer is not None, f"run {run_id} had no answer"
    return Sample(first_event, first_answer, total)


def embed_baseline(questions: list[str]) -> dict[str, list[float]]:
    from sentence_transformers import SentenceTransformer

    from ragway.embedding import OnnxMiniLMEmbedder, fp32_model_dir

    int8 = OnnxMiniLMEmbedder()
    fp32 = SentenceTransformer(str(fp32_model_dir()), device="cpu")
    out: dict[str, list[float]] = {"int8 ONNX (services)": [], "fp32 torch (baseline)": []}
    for name, fn in (
        ("int8 ONNX (services)", lambda q: int8.embed([q])),
        ("fp32 torch (baseline)", lambda q: fp32.encode([q], show_progress_bar=False)),
    ):
        fn("warm-up")
        for q in questions:
            t0 = time.perf_counter()
            fn(q)
            out[name].append((time.perf_counter() - t0) * 1000)
    return out


def run(qa_file: Path, output: Path) -> Report:
    items: list[dict[str, Any]] = yaml.safe_load(qa_file.read_text())["items"]
    report = Report()
    t0 = time.perf_counter()
    with demo_stack() as stack:
        report.ready_s = time.perf_counter() - t0
        # TCP_NODELAY like a browser: without it the client's own Nagle
        # delays would be measured as server latency.
        transport = httpx.HTTPTransport(
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
        )
        with httpx.Client(
            base_url=stack.config.gateway_url, timeout=60, transport=transport
        ) as api:
            for samples in (report.cold, report.warm):
                for item in items:
                    key = (
                        "rgw-demo-sre-key" if item.get("caller") == "sre" else "rgw-demo-public-key"
                    )
                    samples.append(measure_run(api, item["question"], key))
    report.embed_ms = embed_baseline([i["question"] for i in items])
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(render(report, len(items)))
    output.with_suffix(".json").write_text(json.dumps(_as_json(report), indent=2))
    return report


def _stats(values: list[float]) -> str:
    return (
        f"{percentile(values, 50):8.1f} {percentile(values, 95):8.1f} "
        f"{percentile(values, 99):8.1f} {statistics.fmean(values):8.1f}"
    )


def render(report: Report, n: int) -> str:
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    lines = [
        "# ragway bench",
        "",
        f"{n} demo questions, asked cold then warm, one client, loopback; "
        f"{os.cpu_count()} CPUs; OPENBLAS_NUM_THREADS={threads}, one inference thread per service.",
        f"Stack start to ready (Redis, retriever, generator, KB, gateway): {report.ready_s:.1f} s",
        "",
        "## End to end (ms)            p50      p95      p99     mean",
    ]
    for label, samples in (("cold", report.cold), ("warm", report.warm)):
        lines.append(f"{label} first event        {_stats([s.first_event_ms for s in samples])}")
        lines.append(f"{label} first answer event {_stats([s.first_answer_ms for s in samples])}")
        lines.append(f"{label} terminal event     {_stats([s.total_ms for s in samples])}")
    lines += ["", "## Query embedding (ms)        p50      p95      p99     mean"]
    for name, values in report.embed_ms.items():
        lines.append(f"{name:26s} {_stats(values)}")
    names = list(report.embed_ms)
    ratio = statistics.median(report.embed_ms[names[1]]) / statistics.median(
        report.embed_ms[names[0]]
    )
    lines += ["", f"fp32 / int8 median query-embedding time: {ratio:.1f}x", ""]
    return "\n".join(lines)


def _as_json(report: Report) -> dict[str, Any]:
    return {
        "ready_s": report.ready_s,
        "cold": [s.__dict__ for s in report.cold],
        "warm": [s.__dict__ for s in report.warm],
        "embed_ms": report.embed_ms,
    }
