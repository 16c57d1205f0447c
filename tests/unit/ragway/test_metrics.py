"""Metric names and labels follow the Prometheus conventions; the HTTP counter uses templates."""

from __future__ import annotations

import re

from fastapi import FastAPI
from fastapi.testclient import TestClient
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from prometheus_client.parser import text_string_to_metric_families

# Imported for their side effect: each registers its service's metrics.
import services.gateway.metrics as gateway_metrics
import services.generator.metrics
import services.retriever.metrics
from ragway.metrics import REGISTRY, HttpMetrics, exemplar, exposition, reason_label
from services.gateway.resilience import CircuitBreaker
from services.gateway.runs.models import Degradation, RunStatus
from tests.integration.runs import demo_record

_SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")
# Labels that would carry user data or grow without bound.
_FORBIDDEN_LABELS = {"question", "query", "run_id", "tenant", "key_id", "text"}


def families() -> dict[str, tuple[str, set[str]]]:
    """name -> (type, label names) of every metric the services register."""
    out: dict[str, tuple[str, set[str]]] = {}
    for metric in REGISTRY.collect():
        labels = {k for s in metric.samples for k in s.labels if k != "le"}
        out[metric.name] = (metric.type, labels)
    return out


def test_every_metric_is_prefixed_snake_case_with_a_unit_or_total_suffix() -> None:
    assert services.generator.metrics.REFUSALS is not None
    assert services.retriever.metrics.SEARCH_DURATION is not None
    found = families()
    assert len(found) >= 10
    for name, (kind, labels) in found.items():
        assert name.startswith("ragway_") and _SNAKE.match(name), name
        if kind == "histogram":
            # Durations in seconds; the generator's token usage in tokens.
            assert name.endswith(("_seconds", "_tokens")), f"{name}: a histogram needs its unit"
        if kind == "counter":
            # prometheus_client strips _total from the family; the sample carries it.
            assert not name.endswith("_total"), name
        assert all(_SNAKE.match(label) for label in labels), (name, labels)
        assert not labels & _FORBIDDEN_LABELS, (name, labels)


def test_the_documented_metrics_exist_with_their_labels() -> None:
    found = families()
    expected = {
        "ragway_http_requests": "counter",
        "ragway_run_duration_seconds": "histogram",
        "ragway_stage_duration_seconds": "histogram",
        "ragway_runs": "counter",
        "ragway_degradations": "counter",
        "ragway_queue_depth": "gauge",
        "ragway_stream_followers": "gauge",
        "ragway_streams_dropped": "counter",
        "ragway_retriever_search_duration_seconds": "histogram",
        "ragway_retriever_stage_duration_seconds": "histogram",
        "ragway_retriever_degradations": "counter",
        "ragway_generator_answers": "counter",
        "ragway_generator_refusals": "counter",
        "ragway_generator_usage_tokens": "histogram",
        "ragway_http_request_duration_seconds": "histogram",
        "ragway_breaker_state": "gauge",
    }
    assert {name: found[name][0] for name in expected} == expected
    # Label names come from the declarations, which samples only show once observed.
    declared = {
        gateway_metrics.RUN_DURATION: ("path", "outcome"),
        gateway_metrics.STAGE_DURATION: ("stage",),
        gateway_metrics.RUNS: ("outcome",),
        gateway_metrics.DEGRADATIONS: ("stage", "reason"),
        services.retriever.metrics.SEARCH_DURATION: ("mode",),
        services.generator.metrics.REFUSALS: ("reason",),
        services.generator.metrics.TOKEN_USAGE: ("token_type", "provider", "model"),
    }
    for metric, labels in declared.items():
        assert metric._labelnames == labels


def test_an_ended_run_counts_once_under_its_outcome_with_stage_timings() -> None:
    record = demo_record()
    record.status = RunStatus.SUCCEEDED
    record.refused = True
    record.timings_ms = {"total": 120.0, "retrieve": 20.0, "generate": 90.0}
    record.degraded = [
        Degradation(stage="sparse", reason="sparse search missed its 900 ms deadline")
    ]

    def sample(name: str, **labels: str) -> float:
        return REGISTRY.get_sample_value(name, labels) or 0.0

    runs = sample("ragway_runs_total", outcome="refused")
    stage = sample("ragway_stage_duration_seconds_count", stage="retrieve")
    first = sample("ragway_stage_duration_seconds_count", stage="first_token")
    degraded = sample(
        "ragway_degradations_total", stage="sparse", reason="sparse search missed its N ms deadline"
    )
    gateway_metrics.observe_run(record)
    assert sample("ragway_runs_total", outcome="refused") == runs + 1
    assert sample("ragway_stage_duration_seconds_count", stage="retrieve") == stage + 1
    assert sample("ragway_stage_duration_seconds_count", stage="first_token") == first
    assert (
        sample(
            "ragway_degradations_total",
            stage="sparse",
            reason="sparse search missed its N ms deadline",
        )
        == degraded + 1
    )
    record.status, record.refused = RunStatus.CANCELLED, None
    assert gateway_metrics.outcome(record) == "cancelled"


def test_reason_labels_drop_numbers_and_detail() -> None:
    assert reason_label("sparse search missed its 900 ms deadline") == (
        "sparse search missed its N ms deadline"
    )
    assert reason_label("llm_timeout: no first token after 4.5 s") == "llm_timeout"
    assert reason_label("") == "unknown"


def test_http_requests_are_counted_by_route_template_and_unmatched_paths_share_one_label() -> None:
    app = FastAPI()

    @app.get("/things/{thing_id}")
    async def thing(thing_id: str) -> dict[str, str]:
        return {"id": thing_id}

    app.add_middleware(HttpMetrics)

    def count(route: str, status: str) -> float:
        labels = {"route": route, "method": "GET", "status": status}
        return REGISTRY.get_sample_value("ragway_http_requests_total", labels) or 0.0

    def timed(route: str) -> float:
        labels = {"route": route, "method": "GET"}
        return REGISTRY.get_sample_value("ragway_http_request_duration_seconds_count", labels) or 0

    ok, missing = count("/things/{thing_id}", "200"), count("unmatched", "404")
    durations = timed("/things/{thing_id}")
    with TestClient(app) as client:
        assert client.get("/things/a").status_code == 200
        assert client.get("/things/b").status_code == 200
        assert client.get("/nowhere").status_code == 404
    assert count("/things/{thing_id}", "200") == ok + 2
    assert count("unmatched", "404") == missing + 1
    assert timed("/things/{thing_id}") == durations + 2


def test_the_breaker_state_is_read_at_scrape_time_one_state_at_a_time() -> None:
    now = [0.0]
    breaker = CircuitBreaker("test-peer", failure_threshold=1, cooldown_s=10, clock=lambda: now[0])
    gateway_metrics.BREAKERS.watch(breaker)

    def state() -> dict[str, float]:
        return {
            s: REGISTRY.get_sample_value("ragway_breaker_state", {"peer": "test-peer", "state": s})
            or 0.0
            for s in gateway_metrics.BREAKER_STATES
        }

    assert state() == {"closed": 1.0, "half-open": 0.0, "open": 0.0}
    breaker.record_failure()
    assert state() == {"closed": 0.0, "half-open": 0.0, "open": 1.0}
    now[0] = 11.0  # the cooldown passed: no call, yet the scrape says half-open
    assert state() == {"closed": 0.0, "half-open": 1.0, "open": 0.0}


def test_the_exposition_parses_as_prometheus_text() -> None:
    body, content_type = exposition()
    assert content_type.startswith("text/plain")
    names = {f.name for f in text_string_to_metric_families(body.decode())}
    assert "ragway_runs" in names


def test_run_duration_is_labelled_with_the_path_that_served_the_run() -> None:
    # The canary dashboard and the slow-run alert compare paths by this label; it
    # once read "baseline" for every run.
    record = demo_record()
    record.status = RunStatus.SUCCEEDED
    record.refused = False
    record.timings_ms = {"total": 50.0}
    record.path = "canary-2026-12"
    name = "ragway_run_duration_seconds_count"
    labels = {"path": "canary-2026-12", "outcome": "completed"}
    before = REGISTRY.get_sample_value(name, labels) or 0.0
    gateway_metrics.observe_run(record)
    assert REGISTRY.get_sample_value(name, labels) == before + 1


def test_an_observation_inside_a_sampled_span_carries_its_trace_as_an_exemplar() -> None:
    # A provider of the test's own: the global one stays the API's no-op.
    tracer = TracerProvider().get_tracer("test")
    assert exemplar() is None  # no span: tracing off costs one context lookup
    with tracer.start_as_current_span("ragway.run") as span:
        ctx = span.get_span_context()
        assert exemplar() == {
            "trace_id": format(ctx.trace_id, "032x"),
            "span_id": format(ctx.span_id, "016x"),
        }
        record = demo_record()
        record.status = RunStatus.SUCCEEDED
        record.refused = False
        record.timings_ms = {"total": 41.0, "retrieve": 12.0}
        record.path = "exemplar-test"
        gateway_metrics.observe_run(record)
    unsampled = TracerProvider(sampler=ALWAYS_OFF).get_tracer("test")
    with unsampled.start_as_current_span("not stored"):
        assert exemplar() is None
    # Only an OpenMetrics scrape gets the exemplars; the text format has none.
    text, text_type = exposition("text/plain")
    assert text_type.startswith("text/plain") and b"trace_id" not in text
    body, content_type = exposition("application/openmetrics-text; version=1.0.0,*/*;q=0.1")
    assert content_type.startswith("application/openmetrics-text")
    bucket = next(
        line
        for line in body.decode().splitlines()
        if line.startswith('ragway_run_duration_seconds_bucket{le="0.05",outcome="completed",')
        and 'path="exemplar-test"' in line
    )
    assert f'# {{span_id="{ctx.span_id:016x}",trace_id="{ctx.trace_id:032x}"}} 0.041' in bucket
