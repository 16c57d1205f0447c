"""A small, strict SSE reader for tests: ids, event names, data and comments as received."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

TERMINAL = {"run.completed", "run.failed", "run.cancelled"}


@dataclass(frozen=True)
class Sse:
    id: str
    event: str
    data: str

    @property
    def json(self) -> Any:
        return json.loads(self.data)


def parse(lines: Iterator[str]) -> Iterator[Sse]:
    fields: dict[str, list[str]] = {}
    for line in lines:
        if line == "":
            if fields:
                yield Sse(
                    id="".join(fields.get("id", [""])),
                    event="".join(fields.get("event", ["message"])),
                    data="\n".join(fields.get("data", [])),
                )
            fields = {}
            continue
        if line.startswith(":"):
            continue  # comment: heartbeat
        name, _, value = line.partition(":")
        fields.setdefault(name, []).append(value[1:] if value.startswith(" ") else value)


def read_events(
    client: httpx.Client,
    run_id: str,
    headers: dict[str, str],
    *,
    last_event_id: str | None = None,
    after: str | None = None,
    stop_after: int | None = None,
) -> list[Sse]:
    """Events until a terminal one, or until ``stop_after`` events (then disconnect)."""
    h = dict(headers)
    if last_event_id is not None:
        h["Last-Event-ID"] = last_event_id
    params = {"after": after} if after is not None else {}
    out: list[Sse] = []
    with client.stream("GET", f"/v1/runs/{run_id}/events", headers=h, params=params) as resp:
        assert resp.status_code == 200, resp.read()
        assert resp.headers["content-type"].startswith("text/event-stream")
        for event in parse(resp.iter_lines()):
            out.append(event)
            if event.event in TERMINAL or (stop_after is not None and len(out) == stop_after):
                break
    return out


def start_run(client: httpx.Client, question: str, headers: dict[str, str], **body: Any) -> str:
    resp = client.post("/v1/runs", json={"question": question, **body}, headers=headers)
    assert resp.status_code == 202, resp.text
    run_id: str = resp.json()["run_id"]
    return run_id
