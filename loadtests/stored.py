"""Reading runs back from Redis: every run's record and event log, and snapshots before restarts."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

import redis

from loadtests.model import Event, FinishedRun, RedisSnapshot, StoredRun

RECORD_KEY = re.compile(r"^ragway:run:(run_[0-9a-f]{32})$")
BATCH = 200


def run_ids(client: redis.Redis) -> list[str]:
    """Every run that has a record in Redis."""
    found = []
    for key in client.scan_iter(match="ragway:run:run_*", count=1000):
        match = RECORD_KEY.match(_text(key))
        if match:
            found.append(match.group(1))
    return sorted(found)


def read_runs(client: redis.Redis, ids: Iterable[str]) -> dict[str, StoredRun]:
    out: dict[str, StoredRun] = {}
    for batch in _batches(sorted(set(ids))):
        pipe = client.pipeline(transaction=False)
        for run_id in batch:
            pipe.get(f"ragway:run:{run_id}")
            pipe.xrange(f"ragway:run:{run_id}:events")
        replies: list[Any] = pipe.execute()
        for i, run_id in enumerate(batch):
            raw, entries = replies[2 * i], replies[2 * i + 1]
            record = json.loads(raw) if raw is not None else {}
            error = record.get("error") or {}
            out[run_id] = StoredRun(
                status=record.get("status"),
                events=[
                    Event(_text(eid), _text(f[b"type"]), _text(f[b"data"])) for eid, f in entries
                ],
                error_code=error.get("code"),
                attempts=int(record.get("attempts", 0)),
            )
    return out


def statuses(client: redis.Redis) -> dict[str, str | None]:
    """Every run's status (records only: cheap enough to poll)."""
    out: dict[str, str | None] = {}
    for batch in _batches(run_ids(client)):
        raws: list[Any] = client.mget([f"ragway:run:{run_id}" for run_id in batch])
        for run_id, raw in zip(batch, raws, strict=True):
            out[run_id] = None if raw is None else json.loads(raw).get("status")
    return out


def snapshot(client: redis.Redis, at_s: float) -> RedisSnapshot:
    """The finished runs Redis holds now (taken just before it is stopped)."""
    finished: dict[str, FinishedRun] = {}
    for run_id, run in read_runs(client, run_ids(client)).items():
        if run.status in ("succeeded", "failed", "cancelled") and run.events:
            finished[run_id] = FinishedRun(run.status, len(run.events), run.events[-1].id)
    return RedisSnapshot(at_s=at_s, finished=finished)


def _batches(ids: list[str]) -> Iterator[list[str]]:
    for i in range(0, len(ids), BATCH):
        yield ids[i : i + BATCH]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
