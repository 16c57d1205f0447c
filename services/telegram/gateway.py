"""The gateway, as the bot sees it: start a run, follow its events over SSE.

Only the HTTP API and the event names of docs/streaming.md; the events arrive as
plain dicts, since this process does not import the gateway's models.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

TERMINAL = frozenset({"run.completed", "run.failed", "run.cancelled"})
# Not a gateway event: made by ask() from the reply to POST /v1/runs, which alone names
# the conversation a run belongs to (the stream's run.accepted does not).
ACCEPTED = "bot.accepted"


class GatewayUnavailable(Exception):
    """The gateway could not be reached or answered with a server error."""


class GatewayRejected(Exception):
    """The gateway refused the request (4xx): its error code and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Event:
    id: str
    type: str
    data: dict[str, Any]


class GatewayClient:
    def __init__(self, base_url: str, timeout_s: float) -> None:
        self._http = httpx.AsyncClient(base_url=base_url, timeout=timeout_s)

    async def close(self) -> None:
        await self._http.aclose()

    async def ask(
        self, api_key: str, question: str, conversation_id: str | None = None
    ) -> AsyncIterator[Event]:
        """Start a run (a follow-up in ``conversation_id`` when given) and yield its events
        until the terminal one. The first event is made here from the
        gateway's reply (``ACCEPTED``): it names the run and its conversation."""
        headers = {"Authorization": f"Bearer {api_key}"}
        body: dict[str, str] = {"question": question, "channel": "telegram"}
        if conversation_id is not None:
            body["conversation_id"] = conversation_id
        try:
            reply = await self._http.post("/v1/runs", json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise GatewayUnavailable(type(exc).__name__) from exc
        _check(reply)
        accepted = reply.json()
        run_id = str(accepted["run_id"])
        yield Event(
            id="",
            type=ACCEPTED,
            data={"run_id": run_id, "conversation_id": accepted.get("conversation_id")},
        )
        async for event in self._follow(run_id, headers):
            yield event

    async def _follow(self, run_id: str, headers: dict[str, str]) -> AsyncIterator[Event]:
        last = ""
        # A replica that stops says stream.closing: resume after the last event, a bounded
        # number of times (a stack that keeps restarting is an outage).
        for _ in range(5):
            params = {"after": last} if last else {}
            try:
                async with self._http.stream(
                    "GET", f"/v1/runs/{run_id}/events", headers=headers, params=params
                ) as reply:
                    if reply.status_code >= 400:
                        await reply.aread()
                        _check(reply)
                    async for event in _parse(reply.aiter_lines()):
                        if event.id:
                            last = event.id
                        yield event
                        if event.type in TERMINAL:
                            return
            except httpx.HTTPError as exc:
                raise GatewayUnavailable(type(exc).__name__) from exc
        raise GatewayUnavailable("the event stream kept closing")


def _check(reply: httpx.Response) -> None:
    if reply.status_code < 400:
        return
    if reply.status_code >= 500:
        raise GatewayUnavailable(f"status {reply.status_code}")
    try:
        error = reply.json()["error"]
        raise GatewayRejected(reply.status_code, str(error["code"]), str(error["message"]))
    except (ValueError, KeyError, TypeError):
        raise GatewayRejected(reply.status_code, "http_error", reply.text[:200]) from None


async def _parse(lines: AsyncIterator[str]) -> AsyncIterator[Event]:
    fields: dict[str, list[str]] = {}
    async for line in lines:
        if line == "":
            if "data" in fields:
                yield Event(
                    id="".join(fields.get("id", [])),
                    type="".join(fields.get("event", ["message"])),
                    data=json.loads("\n".join(fields["data"])),
                )
            fields = {}
        elif not line.startswith(":"):  # a comment is a heartbeat
            name, _, value = line.partition(":")
            fields.setdefault(name, []).append(value[1:] if value.startswith(" ") else value)
