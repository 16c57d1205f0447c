"""``ragway trace RUN_ID``: a run's stage tree and event timeline, read from Redis.

Reads the run record and its event stream directly (ragway_tools/run_trace.py),
so it works without a tracing backend and without an API key; it needs the
Redis URL the gateway uses (``RAGWAY_REDIS_URL``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Any

import redis
import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ragway_tools.commands.common import fail
from ragway_tools.run_trace import EventRow, StageRow, StoredEvent, event_rows, stage_rows
from services.gateway.runs.models import RunRecord
from services.gateway.runs.store import events_key, run_key

console = Console()

RedisUrl = Annotated[
    str,
    typer.Option(
        "--redis-url", envvar="RAGWAY_REDIS_URL", help="The gateway's Redis (RAGWAY_REDIS_URL)"
    ),
]
# `ragway up` starts its Redis-protocol server on 6390.
DEFAULT_REDIS_URL = "redis://127.0.0.1:6390/0"


def trace(
    run_id: Annotated[str, typer.Argument(help="The run's id (run_…)")],
    redis_url: RedisUrl = DEFAULT_REDIS_URL,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON")] = False,
) -> None:
    """Print a run's stages with their durations and its events with their offsets."""
    record, events = _load(run_id, redis_url)
    stages, timeline = stage_rows(record), event_rows(record, events)
    if as_json:
        console.print_json(json.dumps(_as_json(record, stages, timeline)))
        return
    console.print(_header(record))
    console.print(_stage_table(stages))
    console.print(_event_table(timeline))
    for d in record.degraded:
        console.print(f"[yellow]degraded[/] {escape(d.stage)}: {escape(d.reason)}")


def _load(run_id: str, redis_url: str) -> tuple[RunRecord, list[StoredEvent]]:
    client = redis.Redis.from_url(redis_url, socket_connect_timeout=5, socket_timeout=10)
    try:
        raw: Any = client.get(run_key(run_id))
        entries: Any = client.xrange(events_key(run_id)) if raw is not None else []
    except redis.RedisError as exc:
        raise fail(f"cannot read runs from {redis_url}: {exc}", code=1) from exc
    finally:
        client.close()
    if raw is None:
        raise fail(
            f"no run {run_id!r} in {redis_url}: the id is unknown, or its record expired", code=1
        )
    try:
        record = RunRecord.model_validate_json(raw)
    except ValidationError as exc:
        raise fail(f"the record of {run_id!r} is not a run record: {exc}", code=1) from exc
    events = [
        StoredEvent(
            id=_text(entry_id), type=_text(fields[b"type"]), data=_text(fields.get(b"data", b""))
        )
        for entry_id, fields in entries
    ]
    return record, events


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _header(record: RunRecord) -> str:
    created = datetime.fromtimestamp(record.created_at_ms / 1000, UTC).isoformat(
        timespec="milliseconds"
    )
    outcome = record.verdict or (record.error.code if record.error else "")
    if record.refusal_reason:
        outcome += f" ({record.refusal_reason})"
    return escape(
        f"{record.id}  {record.status.value}  {outcome}\n"
        f"tenant {record.tenant} · path {record.path} v{record.path_version} · mode {record.mode}"
        f" · build {record.build_id or '-'} · model {record.model or '-'}"
        f" · prompt {record.prompt_version or '-'} · attempts {record.attempts}\n"
        f"created {created}"
    )


def _stage_table(rows: list[StageRow]) -> Table:
    table = Table(title="Stages", title_justify="left")
    table.add_column("stage")
    table.add_column("ms", justify="right")
    for row in rows:
        table.add_row(escape("  " * row.depth + row.stage), f"{row.ms:.1f}")
    if not rows:
        table.add_row("(no stage timings yet)", "")
    return table


def _event_table(rows: list[EventRow]) -> Table:
    table = Table(title="Events", title_justify="left")
    table.add_column("at ms", justify="right")
    table.add_column("event")
    table.add_column("detail")
    for row in rows:
        table.add_row(f"+{row.at_ms}", escape(row.type), escape(row.detail))
    if not rows:
        table.add_row("", "(the event stream expired or is empty)", "")
    return table


def _as_json(record: RunRecord, stages: list[StageRow], events: list[EventRow]) -> dict[str, Any]:
    return {
        "run_id": record.id,
        "status": record.status.value,
        "verdict": record.verdict,
        "path": record.path,
        "created_at_ms": record.created_at_ms,
        "stages": [{"depth": s.depth, "stage": s.stage, "ms": s.ms} for s in stages],
        "events": [{"at_ms": e.at_ms, "type": e.type, "detail": e.detail} for e in events],
        "degraded": [d.model_dump() for d in record.degraded],
    }
