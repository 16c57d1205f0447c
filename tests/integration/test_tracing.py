"""Tracing on, on real processes: one run is one trace across gateway, retriever and generator.

A private stack runs with ``OTEL_TRACES_EXPORTER=console``, so every process writes
its finished spans as JSON to its log; the test reads them back from the logs.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from ragway.kb import Defaults, discover, parse_document
from ragway_tools.launcher import Stack, StackConfig
from ragway_tools.loading import load_documents
from ragway_tools.otlp_receiver import OtlpReceiver, ReceivedSpan
from services.ingest.deliveries import DeliveryStore
from services.ingest.worker import TASK
from tests.conftest import FIXTURES, ROOT
from tests.integration.conftest import auth
from tests.integration.prometheus import scrape, value
from tests.integration.sse import read_events, start_run
from tests.integration.test_metrics import service_url
from tests.integration.webhooks import PATH, send, upserted, wait_done

PARTS = ("gateway", "retriever", "generator")
OPENMETRICS = "application/openmetrics-text; version=1.0.0"


@pytest.fixture
def traced(tmp_path: Path) -> Iterator[Stack]:
    # A short batch delay: the spans reach the log before the test reads it.
    yield from demo_stack(
        tmp_path, {"OTEL_TRACES_EXPORTER": "console", "OTEL_BSP_SCHEDULE_DELAY": "100"}
    )


@pytest.fixture
def otlp(tmp_path: Path) -> Iterator[tuple[Stack, OtlpReceiver]]:
    """The stack exporting over OTLP/HTTP (the default exporter) to a receiver on loopback."""
    with OtlpReceiver() as receiver:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"}
        # With the streaming page, which answers the question below (not a refusal).
        for stack in demo_stack(tmp_path, env, ROOT / "docs/streaming.md"):
            yield stack, receiver


def demo_stack(tmp_path: Path, env: dict[str, str], *more: Path) -> Iterator[Stack]:
    config = StackConfig.on_free_ports(
        tmp_path, api_keys_file=FIXTURES / "api-keys.yaml", extra_env=env
    )
    s = Stack(config)
    try:
        s.start_backends()
        docs = [
            parse_document(path, root, Defaults(tenant="demo", groups=("public",)))
            for path, root in discover([ROOT / "kb/demo", *more])
        ]
        load_documents(config.retriever_addr, docs, token=config.service_token)
        s.start_gateway()
        yield s
    finally:
        s.stop()


def spans_in(log: Path) -> list[dict[str, Any]]:
    """The console exporter's JSON objects among the log's key=value lines."""
    text, decoder, spans, at = log.read_text(), json.JSONDecoder(), [], 0
    while (start := text.find('{\n    "name"', at)) >= 0:
        span, at = decoder.raw_decode(text, start)
        spans.append(span)
    return spans


def test_one_run_is_one_trace_from_the_request_to_the_retriever_and_generator(
    traced: Stack,
) -> None:
    with httpx.Client(base_url=traced.config.gateway_url, timeout=30) as api:
        run_id = start_run(api, "How do I resume a stream after a disconnect?", auth("demo"))
        assert read_events(api, run_id, auth("demo"))[-1].event == "run.completed"
    time.sleep(1.0)  # a few batch delays
    logs = traced.config.data_dir / "logs"
    spans = {part: spans_in(logs / f"{part}.log") for part in PARTS}
    run_spans = {
        part: [s for s in found if s["attributes"].get("ragway.run_id") == run_id]
        for part, found in spans.items()
    }
    names = {part: {s["name"] for s in found} for part, found in run_spans.items()}
    assert {"ragway.run", "retrieval", "ragway.generate"} <= names["gateway"]
    assert "/ragway.v1.Retriever/Search" in names["retriever"]
    assert "/ragway.v1.Generator/Generate" in names["generator"]
    trace_ids = {s["context"]["trace_id"] for found in run_spans.values() for s in found}
    assert len(trace_ids) == 1, "every span of the run is in one trace"
    # The run's trace is the one of the POST that queued it.
    [post] = [s for s in spans["gateway"] if s["name"] == "POST /v1/runs"]
    assert post["context"]["trace_id"] in trace_ids
    [search] = [s for s in run_spans["retriever"] if s["name"] == "/ragway.v1.Retriever/Search"]
    assert search["attributes"]["ragway.tenant"] == "demo"
    assert search["resource"]["attributes"]["service.name"] == "ragway-retriever"
    # Probes and queue polls leave no traces of their own.
    every = [s["name"] for found in spans.values() for s in found]
    assert "XREADGROUP" not in every
    assert not any("grpc.health" in name for name in every)


def trace_of(run_id: str, spans: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """part -> {span name -> span} of the run's one trace (the first span of each name)."""
    trace_ids = {
        s["context"]["trace_id"]
        for found in spans.values()
        for s in found
        if s["attributes"].get("ragway.run_id") == run_id
    }
    assert len(trace_ids) == 1, "every span of the run is in one trace"
    tree: dict[str, dict[str, Any]] = {}
    for part, found in spans.items():
        for s in found:
            if s["context"]["trace_id"] in trace_ids:
                tree.setdefault(part, {}).setdefault(s["name"], s)
    return tree


def children(spans: list[dict[str, Any]], parent: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in spans if s["parent_id"] == parent["context"]["span_id"]}


def test_an_ask_is_one_trace_down_to_the_retrieval_stages_and_the_inference_span(
    traced: Stack,
) -> None:
    with httpx.Client(base_url=traced.config.gateway_url, timeout=30) as api:
        body = {"question": "How do I resume a stream after a disconnect?"}
        answered = api.post("/v1/ask", json=body, headers=auth("demo"))
        assert answered.status_code == 200, answered.text
        run_id = answered.json()["run_id"]
    time.sleep(1.0)
    logs = traced.config.data_dir / "logs"
    spans = {part: spans_in(logs / f"{part}.log") for part in PARTS}
    tree = trace_of(run_id, spans)
    assert "POST /v1/ask" in tree["gateway"]
    # Gateway client span → retriever server span → retrieval → one span per stage.
    search = tree["retriever"]["/ragway.v1.Retriever/Search"]
    retrieval = children(spans["retriever"], search)["retrieval"]
    assert retrieval["attributes"]["gen_ai.operation.name"] == "retrieval"
    assert retrieval["attributes"]["ragway.run_id"] == run_id
    stages = children(spans["retriever"], retrieval)
    assert {"ragway.sparse", "ragway.dense", "ragway.fuse"} <= set(stages)
    assert any(name.startswith("embeddings ") for name in stages)
    # Gateway client span → generator server span → the inference span.
    generate = tree["generator"]["/ragway.v1.Generator/Generate"]
    [inference] = children(spans["generator"], generate).values()
    assert inference["attributes"]["gen_ai.provider.name"] == "ragway"
    assert inference["attributes"]["ragway.grounding.verdict"] in {"grounded", "refused"}
    assert inference["resource"]["attributes"]["service.name"] == "ragway-generator"


def test_over_otlp_the_inference_span_counts_the_tokens_and_the_histogram_moves(
    otlp: tuple[Stack, OtlpReceiver],
) -> None:
    stack, receiver = otlp
    metrics_url = service_url(stack, "generator")
    before = scrape(metrics_url)
    with httpx.Client(base_url=stack.config.gateway_url, timeout=30) as api:
        body = {"question": "How do I resume a stream after a disconnect?"}
        answered = api.post("/v1/ask", json=body, headers=auth("demo"))
        assert answered.status_code == 200, answered.text
        run_id = answered.json()["run_id"]
        assert not answered.json()["refused"], answered.json()

    def inference() -> ReceivedSpan | None:
        for span in receiver.spans():
            if (
                span.service == "ragway-generator"
                and span.attributes.get("gen_ai.operation.name") == "ragway.extract"
                and span.attributes.get("ragway.run_id") == run_id
            ):
                return span
        return None

    deadline = time.monotonic() + 15
    while (span := inference()) is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert span is not None, "the generator exported its inference span over OTLP"
    attributes = span.attributes
    read, wrote = attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"]
    # Words: the passages given outweigh the answer, which quotes some of them.
    assert isinstance(read, int) and isinstance(wrote, int) and read > wrote > 0

    # The span is in the trace of the request that asked. The gateway's server span
    # ends after the response, so its batch may leave a moment after the generator's.
    def asked() -> set[str]:
        return {
            s.trace_id
            for s in receiver.spans()
            if s.name == "POST /v1/ask" and s.service == "ragway-gateway"
        }

    while span.trace_id not in asked() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert span.trace_id in asked()
    after = scrape(metrics_url)
    labels = {"provider": "ragway", "model": str(attributes["gen_ai.request.model"])}
    for token_type, count in (("input", read), ("output", wrote)):
        name = "ragway_generator_usage_tokens"
        moved = value(after, f"{name}_count", token_type=token_type, **labels) - value(
            before, f"{name}_count", token_type=token_type, **labels
        )
        added = value(after, f"{name}_sum", token_type=token_type, **labels) - value(
            before, f"{name}_sum", token_type=token_type, **labels
        )
        assert (moved, added) == (1, count), token_type
    # Exemplars: an OpenMetrics scrape links the run's latency buckets to its trace.
    for url, histogram in (
        (f"{stack.config.gateway_url}/metrics", "ragway_run_duration_seconds_bucket"),
        (f"{stack.config.gateway_url}/metrics", "ragway_http_request_duration_seconds_bucket"),
        (service_url(stack, "retriever"), "ragway_retriever_search_duration_seconds_bucket"),
    ):
        scraped = httpx.get(url, headers={"Accept": OPENMETRICS}, timeout=10)
        assert scraped.headers["content-type"].startswith("application/openmetrics-text")
        linked = [
            line
            for line in scraped.text.splitlines()
            if line.startswith(histogram) and f'trace_id="{span.trace_id}"' in line
        ]
        assert linked, f"{histogram} has an exemplar of the run's trace"


@pytest.fixture
def ingest_traced(tmp_path: Path) -> Iterator[tuple[Stack, OtlpReceiver]]:
    """Retriever, ingest API and one Celery worker, exporting over OTLP to a receiver."""
    with OtlpReceiver() as receiver:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"}
        config = StackConfig.on_free_ports(
            tmp_path, api_keys_file=FIXTURES / "api-keys.yaml", extra_env=env
        )
        s = Stack(config)
        try:
            s.start_backends()
            s.start_ingest()
            yield s, receiver
        finally:
            s.stop()


def test_a_webhook_delivery_is_one_trace_from_the_ingest_api_into_the_celery_task(
    ingest_traced: tuple[Stack, OtlpReceiver],
) -> None:
    stack, receiver = ingest_traced
    content = "# Tracing note\n\nA webhook's trace continues into the Celery task.\n"
    with httpx.Client(base_url=stack.config.ingest_url, timeout=30) as client:
        sent = send(client, stack.config.webhook_secret, upserted("trace-note", content))
    assert sent.status_code == 202, sent.text
    delivery_id = sent.json()["delivery_id"]
    store = DeliveryStore(redis.Redis.from_url(stack.config.redis_url), ttl_s=3600)
    assert wait_done(store, delivery_id)["state"] == "done"

    def delivery_spans() -> tuple[ReceivedSpan | None, ReceivedSpan | None]:
        spans = receiver.spans()
        posts = [
            s
            for s in spans
            if s.service == "ragway-ingest-api" and s.name == f"POST {PATH}" and s.kind == 2
        ]
        tasks = [
            s for s in spans if s.service == "ragway-ingest-worker" and s.name == f"run/{TASK}"
        ]
        return (posts[0] if posts else None), (tasks[0] if tasks else None)

    deadline = time.monotonic() + 15
    while None in (found := delivery_spans()) and time.monotonic() < deadline:
        time.sleep(0.1)
    post, task = found
    assert post is not None, "the ingest API exported the webhook's server span"
    assert task is not None, "the worker exported the task's span"
    assert task.trace_id == post.trace_id, "the task continues the webhook's trace"
    by_id = {s.span_id: s for s in receiver.spans() if s.trace_id == post.trace_id}
    # The task's parent is the API's publish span, itself under the webhook's request.
    publish = by_id[task.parent_id]
    assert publish.service == "ragway-ingest-api" and publish.name == f"apply_async/{TASK}"
    assert post.span_id in ancestors(publish, by_id)
    # The task's write reaches the retriever in the same trace, under the task's span
    # (the worker's synchronous gRPC client span carries the context on).
    writes = [s for s in by_id.values() if s.service == "ragway-retriever" and s.kind == 2]
    assert writes, "the retriever's server span of the task's write is in the trace"
    assert all(task.span_id in ancestors(w, by_id) for w in writes)


def ancestors(span: ReceivedSpan, by_id: dict[str, ReceivedSpan]) -> list[str]:
    """The span ids from ``span``'s parent up to the root."""
    found: list[str] = []
    parent = by_id.get(span.parent_id)
    while parent is not None:
        found.append(parent.span_id)
        parent = by_id.get(parent.parent_id)
    return found
