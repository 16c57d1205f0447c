"""``ragway trace-report``: one run's joined trace and every service's metrics, on real processes.

A private demo stack (Redis, retriever, generator, gateway, ingest API and one
Celery worker on free loopback ports, the demo knowledge base loaded) exports its
spans over OTLP/HTTP, the default exporter, to a real OTLP endpoint on loopback in
this process (``ragway_tools/otlp_receiver.py``), sampling every trace. Then:

1. one signed webhook (``document.upserted``) to the ingest API, waited for until
   the worker applied it: the write path, ingest API → Celery task → retriever;
2. one ``POST /v1/ask``: the read path, gateway → executor → retriever → generator;
3. a scrape of each service's ``/metrics``.

The report (``var/observability/report.md``, the spans as JSON beside it) shows
both traces as span trees (service, name, start offset, duration and the key
attributes), the ``ragway_*`` metric families of each scrape (histogram buckets
left out) with the count of lines, and the tracing overhead of the last
``make bench-tracing`` when its report exists. Nothing here asserts anything:
tests/integration/test_tracing.py does; this is for people.
"""

from __future__ import annotations

import json
import platform
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import redis

from ragway_tools.demo import DEMO_KB, ROOT, demo_stack
from ragway_tools.launcher import LaunchError, Stack
from ragway_tools.otlp_receiver import OtlpReceiver, ReceivedSpan
from services.ingest.deliveries import TERMINAL, DeliveryStore
from services.ingest.signing import sign

PUBLIC_KEY = "rgw-demo-public-key"
QUESTION = "How do I resume a stream after a disconnect?"
WEBHOOK_PATH = "/v1/webhooks/documents"
NOTE = (
    "# Trace report note\n\n"
    "## Why\n\n"
    "This page arrived through a signed webhook, so that the trace report shows the "
    "ingest API, the Celery task and the retriever's write in one trace.\n"
)
# The attributes worth reading in a tree: ragway's own, the GenAI conventions', the
# Celery instrumentation's, and the outcome of each HTTP and RPC call. Addresses,
# ports, user agents and statements would only make the lines longer.
KEY_PREFIXES = ("ragway.", "gen_ai.", "celery.", "messaging.")
KEY_NAMES = frozenset(
    {"http.route", "http.response.status_code", "http.status_code", "rpc.grpc.status_code"}
)
MAX_VALUE_CHARS = 80
OPENMETRICS = "application/openmetrics-text; version=1.0.0"
EXEMPLAR = " # {"  # how OpenMetrics appends an exemplar to a sample
PERFORMANCE = ROOT / "docs/performance.md"
OVERHEAD_HEADING = "## Tracing overhead\n"
SERVICE_PREFIX = "ragway-"
WAIT_S = 60.0  # ceilings for a slow shared machine, not speed assertions
SETTLE_S = 1.0


@dataclass
class Node:
    span: ReceivedSpan
    children: list[Node] = field(default_factory=list)
    repeat: int = 1  # consecutive sibling leaves of one service and name, folded
    total_ms: float = 0.0  # their summed duration when folded


@dataclass(frozen=True)
class Scrape:
    service: str
    url: str
    lines: int  # every line of the exposition
    kept: list[str]  # the ragway_* TYPE and sample lines shown
    ragway_lines: int  # ragway_* lines before trimming
    buckets_left_out: int
    other_families: int  # families of other names (process_*, python_*, ...)


@dataclass
class Report:
    started: str
    run_id: str
    verdict: str
    delivery_id: str
    delivery_state: str
    ask_trace: list[ReceivedSpan]
    webhook_trace: list[ReceivedSpan]
    scrapes: list[Scrape]
    overhead: str | None = None  # the bench-tracing report's text
    overhead_path: str = ""
    spans_received: int = 0


# -- trees ------------------------------------------------------------------


def build_tree(spans: Iterable[ReceivedSpan]) -> list[Node]:
    """The spans of one trace as trees: roots are spans whose parent is not among them."""
    nodes = {s.span_id: Node(s) for s in spans}
    roots: list[Node] = []
    for node in nodes.values():
        parent = nodes.get(node.span.parent_id)
        (parent.children if parent is not None else roots).append(node)
    for node in nodes.values():
        node.children.sort(key=lambda n: n.span.start_ns)
        node.children = fold(node.children)
    roots.sort(key=lambda n: n.span.start_ns)
    return fold(roots)


def fold(children: list[Node]) -> list[Node]:
    """Consecutive leaves of the same service and name (Redis calls, mostly) as one row."""
    out: list[Node] = []
    for node in children:
        last = out[-1] if out else None
        if (
            last is not None
            and not last.children
            and not node.children
            and (last.span.service, last.span.name) == (node.span.service, node.span.name)
        ):
            last.repeat += 1
            last.total_ms += node.span.duration_ms
            continue
        node.total_ms = node.span.duration_ms
        out.append(node)
    return out


def key_attributes(span: ReceivedSpan) -> dict[str, Any]:
    return {
        k: v
        for k, v in sorted(span.attributes.items())
        if k in KEY_NAMES or k.startswith(KEY_PREFIXES)
    }


def _value(v: Any) -> str:
    if isinstance(v, float):
        text = f"{v:.4g}"
    elif isinstance(v, tuple):
        text = ",".join(str(x) for x in v)
    else:
        text = str(v)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def _service(name: str) -> str:
    return name.removeprefix(SERVICE_PREFIX)


def render_tree(spans: Sequence[ReceivedSpan]) -> list[str]:
    """One line per span (or folded run): start offset, duration, service, name, attributes."""
    if not spans:
        return ["(no spans)"]
    origin = min(s.start_ns for s in spans)
    lines = [f"{'start ms':>9} {'dur ms':>9}  span [service] attributes"]

    def walk(node: Node, depth: int) -> None:
        s = node.span
        start = (s.start_ns - origin) / 1e6
        name = s.name if node.repeat == 1 else f"{s.name} x{node.repeat}"
        attrs = " ".join(f"{k}={_value(v)}" for k, v in key_attributes(s).items())
        row = f"{start:9.1f} {node.total_ms:9.1f}  {'  ' * depth}{name} [{_service(s.service)}]"
        lines.append(f"{row}  {attrs}" if attrs else row)
        for child in node.children:
            walk(child, depth + 1)

    for root in build_tree(spans):
        walk(root, 0)
    return lines


def services_of(spans: Iterable[ReceivedSpan]) -> list[str]:
    return sorted({_service(s.service) for s in spans})


# -- metrics ----------------------------------------------------------------


def trim(service: str, url: str, text: str) -> Scrape:
    """The ``ragway_*`` families of an exposition: TYPE lines and samples, buckets left out
    but those that carry an exemplar (a trace id, in OpenMetrics).

    ``_created`` samples (prometheus_client's creation times) go with the buckets:
    a timestamp per series says nothing here.
    """
    lines = text.splitlines()
    kept: list[str] = []
    ragway = buckets = 0
    families: set[str] = set()
    for line in lines:
        if line.startswith("# "):
            parts = line.split(" ", 3)
            name = parts[2] if len(parts) > 2 else ""
            families.add(name)
            if name.startswith("ragway_"):
                ragway += 1
                if parts[1] == "TYPE" and not name.endswith("_created"):
                    kept.append(line)
            continue
        if not line.startswith("ragway_"):
            continue
        ragway += 1
        metric = line.split("{", 1)[0].split(" ", 1)[0]
        if metric.endswith("_created") or (metric.endswith("_bucket") and EXEMPLAR not in line):
            buckets += 1
            continue
        kept.append(line)
    others = len({f for f in families if f and not f.startswith("ragway_")})
    return Scrape(service, url, len(lines), kept, ragway, buckets, others)


def _scrape(service: str, url: str) -> Scrape:
    # OpenMetrics, as Prometheus asks with exemplar storage on: the text format has none.
    resp = httpx.get(url, headers={"Accept": OPENMETRICS}, timeout=10)
    resp.raise_for_status()
    return trim(service, url, resp.text)


# -- the run ----------------------------------------------------------------


def _env(receiver: OtlpReceiver) -> dict[str, str]:
    return {
        "OTEL_SDK_DISABLED": "false",
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_TRACES_SAMPLER": "always_on",
        # Empty: each process names itself (ragway-gateway, ...), whatever the caller set.
        "OTEL_SERVICE_NAME": "",
        "OTEL_BSP_SCHEDULE_DELAY": "100",  # the spans arrive while the stack still runs
    }


def _send_webhook(stack: Stack) -> str:
    document = {"id": "trace-report-note", "tenant": "demo", "groups": ["public"], "content": NOTE}
    body = json.dumps({"event": "document.upserted", "document": document}).encode()
    delivery_id = f"trace-report-{uuid.uuid4().hex[:12]}"
    ts = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "X-Ragway-Delivery": delivery_id,
        "X-Ragway-Timestamp": ts,
        "X-Ragway-Signature": sign(stack.config.webhook_secret, ts, delivery_id, body),
    }
    resp = httpx.post(f"{stack.config.ingest_url}{WEBHOOK_PATH}", content=body, headers=headers)
    if resp.status_code != 202:
        raise LaunchError(f"the webhook was refused: {resp.status_code} {resp.text}")
    return delivery_id


def _wait_delivery(stack: Stack, delivery_id: str) -> str:
    client = redis.Redis.from_url(stack.config.redis_url)
    try:
        store = DeliveryStore(client, ttl_s=3600)
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            record = store.get(delivery_id)
            if record is not None and record["state"] in TERMINAL:
                return str(record["state"])
            time.sleep(0.1)
    finally:
        client.close()
    raise LaunchError(f"delivery {delivery_id} did not finish in {WAIT_S:.0f} s")


def _ask(stack: Stack) -> tuple[str, str]:
    resp = httpx.post(
        f"{stack.config.gateway_url}/v1/ask",
        json={"question": QUESTION},
        headers={"Authorization": f"Bearer {PUBLIC_KEY}"},
        timeout=60,
    )
    if resp.status_code != 200:
        raise LaunchError(f"POST /v1/ask failed: {resp.status_code} {resp.text}")
    answer = resp.json()
    return str(answer["run_id"]), "refused" if answer.get("refused") else "grounded"


def _root(receiver: OtlpReceiver, service: str, name: str) -> ReceivedSpan:
    """The server span named ``name`` of ``service`` (one is sent of each)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        for s in receiver.spans():
            if s.service == service and s.name == name and s.kind == 2:
                return s
        time.sleep(0.1)
    raise LaunchError(f"no '{name}' span of the {service} arrived in {WAIT_S:.0f} s")


def _settled(receiver: OtlpReceiver, trace_id: str, services: set[str]) -> list[ReceivedSpan]:
    """The trace's spans once every one of ``services`` sent some and no more came for a while."""
    deadline = time.monotonic() + WAIT_S
    seen, since = -1, time.monotonic()
    while True:
        spans = [s for s in receiver.spans() if s.trace_id == trace_id]
        if len(spans) != seen:
            seen, since = len(spans), time.monotonic()
        elif services <= {s.service for s in spans} and time.monotonic() - since >= SETTLE_S:
            return spans
        if time.monotonic() > deadline:
            return spans  # the report says which services it has
        time.sleep(0.1)


def collect(kb: Sequence[Path] = DEMO_KB) -> Report:
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    with OtlpReceiver() as receiver, demo_stack(_env(receiver), kb=kb) as stack:
        stack.start_ingest()
        delivery_id = _send_webhook(stack)
        state = _wait_delivery(stack, delivery_id)
        run_id, verdict = _ask(stack)
        post = _root(receiver, "ragway-ingest-api", f"POST {WEBHOOK_PATH}")
        webhook = _settled(
            receiver,
            post.trace_id,
            {"ragway-ingest-api", "ragway-ingest-worker", "ragway-retriever"},
        )
        ask = _root(receiver, "ragway-gateway", "POST /v1/ask")
        ask_trace = _settled(
            receiver, ask.trace_id, {"ragway-gateway", "ragway-retriever", "ragway-generator"}
        )
        c = stack.config
        targets = [
            ("gateway", f"{c.gateway_url}/metrics"),
            ("retriever", stack.metrics_url("retriever")),
            ("generator", stack.metrics_url("generator")),
            ("ingest-api", f"{c.ingest_url}/metrics"),
        ]
        scrapes = [_scrape(name, url) for name, url in targets if url is not None]
        return Report(
            started=started,
            run_id=run_id,
            verdict=verdict,
            delivery_id=delivery_id,
            delivery_state=state,
            ask_trace=ask_trace,
            webhook_trace=webhook,
            scrapes=scrapes,
            spans_received=receiver.span_count,
        )


def _display_url(url: str) -> str:
    """The path only: the ports were free ones of a stack that no longer runs."""
    return "/" + url.split("/", 3)[3] if url.count("/") >= 3 else url


def render(report: Report) -> str:
    lines = [
        "# ragway trace report",
        "",
        f"{report.started}, {platform.node() or 'this machine'}: a private demo stack exporting "
        "every span over OTLP/HTTP (the default exporter, every trace sampled) to an OTLP "
        f"endpoint on loopback, which received {report.spans_received} spans in all. "
        "`ragway trace-report` (ragway_tools/trace_report.py) wrote this; the spans are "
        "in the .json beside it.",
        "",
        "Columns: the span's start in ms from the trace's first span, its duration in ms, "
        "then the span, indented under its parent, with its service (service.name without "
        "`ragway-`) and its key attributes. `xN`: N consecutive sibling spans of one name, "
        "their durations summed.",
        "",
        "## One run: `POST /v1/ask`",
        "",
        f"Question: {QUESTION!r} (tenant `demo`, key `demo-public`); run `{report.run_id}`, "
        f"{report.verdict}. Trace `{_trace_id(report.ask_trace)}`: "
        f"{len(report.ask_trace)} spans from {', '.join(services_of(report.ask_trace))}.",
        "",
        "```",
        *render_tree(report.ask_trace),
        "```",
        "",
        "## One webhook delivery: ingest API → Celery worker → retriever",
        "",
        f"`document.upserted` of `demo/trace-report-note`, delivery `{report.delivery_id}`, "
        f"{report.delivery_state}. Trace `{_trace_id(report.webhook_trace)}`: "
        f"{len(report.webhook_trace)} spans from {', '.join(services_of(report.webhook_trace))}.",
        "",
        "```",
        *render_tree(report.webhook_trace),
        "```",
        "",
        "## Metrics",
        "",
        "Each service's `/metrics` after the two requests above, scraped as OpenMetrics (as "
        "Prometheus does with exemplar storage on): the `ragway_*` families' TYPE lines and "
        "samples; `_created` samples and histogram buckets left out, but the buckets whose "
        "exemplar (`# {span_id=…,trace_id=…} value`) links them to a trace above. The Celery "
        "worker serves no `/metrics` (docs/observability.md, not yet built).",
        "",
    ]
    for s in report.scrapes:
        lines += [
            f"### {s.service}: `{_display_url(s.url)}`",
            "",
            f"{s.lines} lines, {s.ragway_lines} of them of ragway_* families; "
            f"{s.buckets_left_out} bucket and _created samples and the HELP lines left out"
            + (f"; {s.other_families} other families left out." if s.other_families else "."),
            "",
            "```",
            *s.kept,
            "```",
            "",
        ]
    lines += ["## Tracing overhead", ""]
    if report.overhead is None:
        lines += ["Not measured: run `make bench-tracing`, then this again.", ""]
    else:
        lines += [
            f"Measured by `make bench-tracing` in a run of its own; from `{report.overhead_path}`:",
            "",
            report.overhead.strip(),
            "",
        ]
    return "\n".join(lines)


def overhead_text(bench: Path, performance: Path = PERFORMANCE) -> tuple[str, str] | None:
    """Where the tracing overhead was measured, and its figures.

    This machine's last ``make bench-tracing`` report when there is one, else the
    figures committed in docs/performance.md's "Tracing overhead" section.
    """
    if bench.is_file():
        text = bench.read_text()
        # The bench report's title would be a second top-level heading here.
        return str(bench), text.split("\n", 1)[1] if text.startswith("# ") else text
    if not performance.is_file():
        return None
    text = performance.read_text()
    start = text.find(OVERHEAD_HEADING)
    if start < 0:
        return None
    body = text[start + len(OVERHEAD_HEADING) :]
    end = body.find("\n## ")
    where = performance.relative_to(ROOT) if performance.is_relative_to(ROOT) else performance
    return f"{where}#tracing-overhead", body[: end if end >= 0 else None]


def _trace_id(spans: Sequence[ReceivedSpan]) -> str:
    return spans[0].trace_id if spans else "(none)"


def run(output: Path, *, overhead: Path, kb: Sequence[Path] = DEMO_KB) -> Report:
    report = collect(kb)
    measured = overhead_text(overhead)
    if measured is not None:
        report.overhead_path, report.overhead = measured
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(render(report))
    spans = {
        "run_id": report.run_id,
        "delivery_id": report.delivery_id,
        "ask_trace": [asdict(s) for s in report.ask_trace],
        "webhook_trace": [asdict(s) for s in report.webhook_trace],
    }
    output.with_suffix(".json").write_text(json.dumps(spans, indent=2, default=str))
    return report
