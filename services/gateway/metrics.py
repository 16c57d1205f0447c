"""The gateway's Prometheus metrics (names and labels in docs/observability.md).

Observed where a run ends (``observe_run``), from the run record, so the metrics
agree with GET /v1/runs/{id} and the executor's flow needs no extra branches.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from ragway.metrics import LATENCY_BUCKETS, REGISTRY, exemplar, reason_label
from services.gateway.resilience import CircuitBreaker
from services.gateway.runs.feedback import Stored
from services.gateway.runs.models import RunRecord, RunStatus

# The path of a run record made before paths existed.
BASELINE = "baseline"
# The record's timings that are stages of the gateway's own flow.
STAGES = ("retrieve", "first_token", "generate")

RUN_DURATION = Histogram(
    "ragway_run_duration_seconds",
    "Time from a run's start by an executor to its end.",
    ["path", "outcome"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
STAGE_DURATION = Histogram(
    "ragway_stage_duration_seconds",
    "Duration of one stage of a run (retrieve, first_token, generate).",
    ["stage"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
RUNS = Counter(
    "ragway_runs",
    "Runs ended, by outcome: completed, refused, failed, cancelled.",
    ["outcome"],
    registry=REGISTRY,
)
DEGRADATIONS = Counter(
    "ragway_degradations",
    "Degradations reported on ended runs, by stage and reason.",
    ["stage", "reason"],
    registry=REGISTRY,
)
# By path and rating only: run ids, tenants and users would make a series each.
FEEDBACK = Counter(
    "ragway_feedback",
    "Feedback on answers, by the path that served the run and the rating (up, down).",
    ["path", "rating"],
    registry=REGISTRY,
)
# reason: gate_breach (automatic) or operator; bounded, so an alert can sum it.
CANARY_ROLLBACKS = Counter(
    "ragway_canary_rollbacks",
    "Canary or shadow experiments rolled back, by reason: gate_breach (automatic) or operator.",
    ["reason"],
    registry=REGISTRY,
)
CANARY_PROMOTIONS = Counter(
    "ragway_canary_promotions",
    "Candidates promoted to baseline, by how: steps (the last step passed) or operator.",
    ["how"],
    registry=REGISTRY,
)
CANARY_STEPS = Counter(
    "ragway_canary_steps",
    "Automatic steps of a stepped canary to its next percentage.",
    registry=REGISTRY,
)
CANARY_PERCENT = Gauge(
    "ragway_canary_percent",
    "Share of users on the candidate (canary) or shadowed (shadow), as this replica last "
    "read the experiment state (every run reads it); 0 when none runs or it is paused.",
    registry=REGISTRY,
)
CANARY_STATES = ("off", "canary", "shadow", "paused")
CANARY_STATE = Gauge(
    "ragway_canary_state",
    "1 for the experiment's current state (off, canary, shadow, paused), 0 for the others, "
    "as this replica last read it.",
    ["state"],
    registry=REGISTRY,
)
QUEUE_DEPTH = Gauge(
    "ragway_queue_depth",
    "Runs in the Redis run queue not yet acknowledged (waiting or executing).",
    registry=REGISTRY,
)

BREAKER_STATES = ("closed", "half-open", "open")


class BreakerStates(Collector):
    """``ragway_breaker_state{peer, state}``: 1 for each breaker's current state, 0 for the others.

    Read at scrape time, not set on transitions: a breaker turns from open to
    half-open by the clock alone (resilience.py), with no call to observe.
    """

    def __init__(self) -> None:
        self._breakers: dict[str, CircuitBreaker] = {}
        # As prometheus_client's own metrics name theirs: what a checker reads.
        self._name = "ragway_breaker_state"
        self._labelnames = ("peer", "state")

    def watch(self, breaker: CircuitBreaker) -> None:
        self._breakers[breaker.name] = breaker  # the newest client's breaker per peer

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            self._name,
            "Circuit breaker state per gRPC peer: 1 for the current state (closed, "
            "half-open, open), 0 for the others.",
            labels=list(self._labelnames),
        )
        for name, breaker in sorted(self._breakers.items()):
            current = breaker.state
            for state in BREAKER_STATES:
                family.add_metric([name, state], 1.0 if state == current else 0.0)
        yield family


BREAKERS = BreakerStates()
REGISTRY.register(BREAKERS)

STREAM_FOLLOWERS = Gauge(
    "ragway_stream_followers",
    "SSE streams and /v1/ask waits following a run's events in this process.",
    registry=REGISTRY,
)
STREAMS_DROPPED = Counter(
    "ragway_streams_dropped",
    "Streams dropped because their client did not read and its buffer filled.",
    registry=REGISTRY,
)


def outcome(record: RunRecord) -> str:
    if record.status is RunStatus.SUCCEEDED:
        return "refused" if record.refused else "completed"
    if record.status is RunStatus.CANCELLED:
        return "cancelled"
    return "failed"


def observe_run(record: RunRecord) -> None:
    """Count one ended run; called once per run, where its terminal event is written."""
    result = outcome(record)
    RUNS.labels(result).inc()
    total_ms = record.timings_ms.get("total")
    # The executor calls this inside the run's span: the exemplars name its trace.
    trace_ref = exemplar()
    if total_ms is not None:
        # Paths are the operator's few release units (services/gateway/paths), so
        # the label stays bounded; canary and baseline are told apart by it.
        RUN_DURATION.labels(record.path or BASELINE, result).observe(
            total_ms / 1000, exemplar=trace_ref
        )
    for stage in STAGES:
        ms = record.timings_ms.get(stage)
        if ms is not None:
            STAGE_DURATION.labels(stage).observe(ms / 1000, exemplar=trace_ref)
    for d in record.degraded:
        DEGRADATIONS.labels(d.stage, reason_label(d.reason)).inc()


def observe_feedback(stored: Stored) -> None:
    """Count a rating once per run: resending the same rating counts nothing, a changed
    one counts its new rating (the export holds each run's current feedback)."""
    if stored.previous is None or stored.previous.rating != stored.record.rating:
        FEEDBACK.labels(stored.record.path, stored.record.rating).inc()


def observe_canary(mode: str, percent: float, paused: bool) -> None:
    """Set the canary gauges from the state this replica just read or wrote."""
    current = "paused" if paused and mode != "off" else mode
    CANARY_PERCENT.set(0.0 if current in ("off", "paused") else percent)
    for state in CANARY_STATES:
        CANARY_STATE.labels(state).set(1.0 if state == current else 0.0)
