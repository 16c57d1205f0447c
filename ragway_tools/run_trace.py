"""``ragway trace RUN_ID``: one run's timeline from Redis, without a tracing backend.

Two sources, both kept with the run for as long as its record lives:

- the run record's ``timings_ms`` (services/gateway/runs/executor.py): ``total``,
  the gateway's ``retrieve``, ``first_token`` and ``generate``, and the retriever's
  own stages as ``retriever.<stage>``, nested here as the trace nests them;
- the run's event stream: each Redis stream id starts with the millisecond the
  event was appended, so every event has an offset from the run's creation.

The answer deltas are folded into one row (count, first and last offset): the
timeline is for where the time went, not for the text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from services.gateway.runs.models import EventType, RunRecord

# The gateway's stages, in run order, and what each contains.
_GATEWAY_STAGES = ("retrieve", "first_token", "generate")
_DELTA = EventType.DELTA.value
_RETRIEVER = "retriever."  # the prefix of the retriever's own stage times


@dataclass(frozen=True, slots=True)
class StageRow:
    depth: int  # 0: the run, 1: a gateway stage, 2: a retriever stage inside retrieve
    stage: str
    ms: float


@dataclass(frozen=True, slots=True)
class EventRow:
    at_ms: int  # from the run's creation
    type: str
    detail: str


@dataclass(frozen=True, slots=True)
class StoredEvent:
    id: str  # the Redis stream id, "<ms>-<seq>"
    type: str
    data: str  # JSON


def stage_rows(record: RunRecord) -> list[StageRow]:
    """The stage tree: total, then each gateway stage, the retriever's stages under retrieve."""
    timings = record.timings_ms
    rows: list[StageRow] = []
    if "total" in timings:
        rows.append(StageRow(0, "total", timings["total"]))
    inside = [
        (k.removeprefix(_RETRIEVER), ms) for k, ms in timings.items() if k.startswith(_RETRIEVER)
    ]
    retriever = sorted(inside, key=lambda kv: _retriever_order(kv[0]))
    for stage in _GATEWAY_STAGES:
        if stage in timings:
            rows.append(StageRow(1, stage, timings[stage]))
        if stage == "retrieve":
            rows.extend(StageRow(2, name, ms) for name, ms in retriever)
    known = {"total", *_GATEWAY_STAGES}
    rows.extend(
        StageRow(1, k, v)
        for k, v in sorted(timings.items())
        if k not in known and not k.startswith(_RETRIEVER)
    )
    return rows


def _retriever_order(stage: str) -> tuple[int, str]:
    """embed before dense (it feeds it), then sparse, fuse, rerank, total: the pipeline's order."""
    order = ("embed", "dense", "sparse", "fuse", "rerank", "total")
    base = stage.partition(".")[0]
    return (order.index(base) if base in order else len(order), stage)


def event_rows(record: RunRecord, events: Sequence[StoredEvent]) -> list[EventRow]:
    rows: list[EventRow] = []
    deltas: list[int] = []
    for event in events:
        at = _stream_ms(event.id) - record.created_at_ms
        if event.type == _DELTA:
            deltas.append(at)
            continue
        if deltas:
            rows.append(_deltas_row(deltas))
            deltas = []
        rows.append(EventRow(at, event.type, _detail(event)))
    if deltas:
        rows.append(_deltas_row(deltas))
    return rows


def _deltas_row(offsets: list[int]) -> EventRow:
    return EventRow(offsets[0], f"{_DELTA} x{len(offsets)}", f"last at +{offsets[-1]} ms")


def _stream_ms(stream_id: str) -> int:
    return int(stream_id.partition("-")[0])


def _detail(event: StoredEvent) -> str:
    """A few words per event type; never the question or the answer text."""
    try:
        data: dict[str, Any] = json.loads(event.data)
    except ValueError:
        return ""
    if event.type == EventType.STARTED:
        return f"attempt {data.get('attempt')}" + (" (restarted)" if data.get("restarted") else "")
    if event.type == EventType.RETRIEVAL:
        parts = [f"{len(data.get('sources') or [])} passages", f"build {data.get('build_id')}"]
        parts += [f"degraded: {d.get('stage')}" for d in data.get("degraded") or []]
        return ", ".join(parts)
    if event.type == EventType.RESET:
        return str(data.get("reason", ""))
    if event.type == EventType.ANSWER:
        verdict = data.get("verdict")
        reason = data.get("refusal_reason")
        cited = len(data.get("citations") or [])
        return f"{verdict}, {cited} cited" + (f", refusal: {reason}" if reason else "")
    if event.type == EventType.FAILED:
        error = data.get("error") or {}
        return f"{error.get('code', '')}: {error.get('message', '')}"
    return ""
