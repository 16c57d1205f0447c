"""Virtual users: each submits a question, streams its events, drops and resumes, repeats.

A user spreads its requests over the gateway replicas at random; after any
failure (connection refused or reset, a 5xx, a stream cut mid-way) it tries
again on another replica, resuming the stream with ``Last-Event-ID`` so that it
must receive exactly the events it has not seen yet. Submissions carry an
``Idempotency-Key``, so a retried POST whose first answer was lost returns the
same run instead of starting a second one.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import httpx

from loadtests.model import TERMINAL, ErrorLog, Event, RunTrace
from loadtests.scenario import Scenario
from loadtests.sse import messages
from services.gateway.runs.events import StreamClosing, parse_event

API_KEY = "rgw-demo-public-key"
RETRY_AFTER_CAP_S = 2.0  # follow Retry-After, but keep probing a recovering stack


@dataclass
class Clock:
    """Seconds since the load started, and the two deadlines every user obeys."""

    loop: asyncio.AbstractEventLoop
    t0: float
    submit_until_s: float  # no new questions after this
    follow_until_s: float  # streams still open then are abandoned (the checker flags them)

    def now(self) -> float:
        return self.loop.time() - self.t0


class User:
    def __init__(
        self,
        index: int,
        http: httpx.AsyncClient,
        urls: Sequence[str],
        questions: Sequence[str],
        scenario: Scenario,
        clock: Clock,
        errors: ErrorLog,
        traces: list[RunTrace],
    ) -> None:
        self.index = index
        self._http = http
        self._urls = urls
        self._questions = questions
        self._s = scenario
        self._clock = clock
        self._errors = errors
        self._traces = traces
        self._rng = random.Random(scenario.seed * 100_003 + index)
        self._auth = {"Authorization": f"Bearer {API_KEY}"}

    async def run(self) -> None:
        await asyncio.sleep(self._rng.uniform(0, 1))  # spread the first requests
        while self._clock.now() < self._clock.submit_until_s:
            trace = await self._submit(self._rng.choice(self._questions))
            if trace is not None:
                self._traces.append(trace)
                await self._follow(trace)
            await asyncio.sleep(self._rng.uniform(*self._s.think_s))

    def _replica(self, avoid: int | None = None) -> int:
        choices = [i for i in range(len(self._urls)) if i != avoid] or [0]
        return self._rng.choice(choices)

    def _error(self, kind: str) -> None:
        self._errors.add(self._clock.now(), kind)

    async def _submit(self, question: str) -> RunTrace | None:
        """POST until accepted (202, or 200 for an idempotent replay) or the load ends."""
        headers = {**self._auth, "Idempotency-Key": f"lt-{uuid.uuid4().hex}"}
        submitted = self._clock.now()
        replica: int | None = None
        while self._clock.now() < self._clock.submit_until_s:
            replica = self._replica(avoid=replica)
            try:
                resp = await self._http.post(
                    f"{self._urls[replica]}/v1/runs", json={"question": question}, headers=headers
                )
            except httpx.TransportError as exc:
                self._error(f"POST {type(exc).__name__}")
                await asyncio.sleep(self._rng.uniform(0.05, 0.3))
                continue
            if resp.status_code in (200, 202):
                return RunTrace(
                    run_id=resp.json()["run_id"],
                    user=self.index,
                    submitted_s=submitted,
                    accepted_s=self._clock.now(),
                )
            self._error(f"POST {resp.status_code} {_error_code(resp)}")
            if resp.status_code < 500:
                return None  # a request the API refuses is not retried
            await asyncio.sleep(_retry_after(resp, self._rng))
        return None

    async def _follow(self, trace: RunTrace) -> None:
        """Stream until a terminal event, with planned drops and unplanned failures resumed."""
        d = self._s.disconnects
        drops_left = d.max_per_run if self._rng.random() < d.probability else 0
        replica: int | None = None
        while True:
            if self._clock.now() >= self._clock.follow_until_s:
                trace.abandoned = "the drain deadline passed"
                return
            replica = self._replica(avoid=replica)
            drop_after = self._rng.randint(*d.after_events) if drops_left else None
            try:
                # The drain deadline holds inside a connection too: a stream that keeps
                # sending heartbeats for a run that never ends would otherwise hold
                # this user, and the whole load, past it instead of being flagged.
                async with asyncio.timeout_at(self._clock.t0 + self._clock.follow_until_s):
                    done = await self._connect(trace, replica, drop_after)
            except TimeoutError:
                trace.abandoned = "the drain deadline passed while streaming"
                return
            except httpx.TransportError as exc:
                self._error(f"stream {type(exc).__name__}")
                done = False
            except _Refused as exc:
                self._error(f"GET events {exc}")
                if exc.status < 500:
                    # 400/404/410 for a run we were told exists: a real problem.
                    trace.abandoned = f"events refused: {exc}"
                    return
                await asyncio.sleep(exc.retry_after_s)
                continue
            except _Dropped:
                drops_left -= 1
                trace.drops += 1
                done = False
            if done:
                return
            await asyncio.sleep(self._rng.uniform(*d.pause_s))

    async def _connect(self, trace: RunTrace, replica: int, drop_after: int | None) -> bool:
        """One connection. True once the terminal event arrived."""
        headers = dict(self._auth)
        if trace.events:
            headers["Last-Event-ID"] = trace.events[-1].id
        url = f"{self._urls[replica]}/v1/runs/{trace.run_id}/events"
        trace.connections += 1
        trace.replicas.add(replica)
        received = 0
        async with self._http.stream("GET", url, headers=headers) as resp:
            if resp.status_code != 200:
                await resp.aread()
                raise _Refused(resp.status_code, _error_code(resp), _retry_after(resp, self._rng))
            if not resp.headers.get("content-type", "").startswith("text/event-stream"):
                raise _Refused(resp.status_code, "not an event stream", 1.0)
            async for sse in messages(resp.aiter_lines()):
                if sse.event == StreamClosing.TYPE:
                    # The replica is shutting down; it has no id: resume elsewhere.
                    self._error("stream stream.closing")
                    return False
                if not sse.has_id:
                    self._error("stream event without id")
                try:
                    parse_event(sse.event, sse.data)  # the gateway's own event models
                except ValueError:
                    self._error(f"stream malformed {sse.event}")
                now = self._clock.now()
                trace.events.append(Event(id=sse.id, type=sse.event, data=sse.data))
                if trace.first_event_s is None:
                    trace.first_event_s = now
                if sse.event in TERMINAL:
                    trace.finished_s = now
                    return True
                received += 1
                if drop_after is not None and received >= drop_after:
                    raise _Dropped
        self._error("stream ended without a terminal event")
        return False


class _Dropped(Exception):
    """The client hangs up on purpose (leaving the ``async with`` closes the connection)."""


class _Refused(Exception):
    def __init__(self, status: int, code: str, retry_after_s: float) -> None:
        super().__init__(f"{status} {code}")
        self.status = status
        self.retry_after_s = retry_after_s


def _error_code(resp: httpx.Response) -> str:
    try:
        code = resp.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return "(no error body)"
    return str(code)


def _retry_after(resp: httpx.Response, rng: random.Random) -> float:
    try:
        hinted = float(resp.headers.get("Retry-After", "0.5"))
    except ValueError:
        hinted = 0.5
    return min(max(hinted, 0.1), RETRY_AFTER_CAP_S) * rng.uniform(0.5, 1.0)


def load_questions(path: str) -> list[str]:
    import yaml

    with open(path) as f:
        items = yaml.safe_load(f)["items"]
    return [str(item["question"]) for item in items if item.get("caller") != "sre"]


def trace_json(trace: RunTrace) -> dict[str, object]:
    terminal = trace.terminal
    return {
        "run_id": trace.run_id,
        "user": trace.user,
        "submitted_s": trace.submitted_s,
        "accepted_s": trace.accepted_s,
        "first_event_s": trace.first_event_s,
        "finished_s": trace.finished_s,
        "events": len(trace.events),
        "terminal": terminal.type if terminal else None,
        "connections": trace.connections,
        "drops": trace.drops,
        "replicas": sorted(trace.replicas),
        "abandoned": trace.abandoned,
    }
