"""What the clients saw and what went wrong, as plain data for the checker and the report."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from services.gateway.runs.models import TERMINAL_EVENTS

TERMINAL = frozenset(t.value for t in TERMINAL_EVENTS)


@dataclass(frozen=True, slots=True)
class Event:
    """One SSE event (as a client saw it) or one stream entry (as Redis stores it)."""

    id: str
    type: str
    data: str


@dataclass
class RunTrace:
    """One accepted run from the client's side. Times are seconds since the load started."""

    run_id: str
    user: int
    submitted_s: float  # the first POST of this question
    accepted_s: float
    events: list[Event] = field(default_factory=list)
    first_event_s: float | None = None
    finished_s: float | None = None
    connections: int = 0
    drops: int = 0  # disconnects the client chose
    replicas: set[int] = field(default_factory=set)
    # Why the client stopped following without a terminal event (None: it saw one).
    abandoned: str | None = None

    @property
    def terminal(self) -> Event | None:
        return self.events[-1] if self.events and self.events[-1].type in TERMINAL else None


@dataclass
class ErrorLog:
    """Errors by kind, e.g. 'POST 503 store_unavailable' or 'stream RemoteProtocolError'."""

    counts: Counter[str] = field(default_factory=Counter)
    timeline: list[tuple[float, str]] = field(default_factory=list)

    def add(self, at_s: float, kind: str) -> None:
        self.counts[kind] += 1
        self.timeline.append((at_s, kind))


@dataclass(frozen=True, slots=True)
class StoredRun:
    """A run as Redis holds it after the load: its record's status and its event log."""

    status: str | None  # None: no record
    events: list[Event]
    error_code: str | None = None
    attempts: int = 0


@dataclass(frozen=True, slots=True)
class FinishedRun:
    """A finished run seen in Redis just before a Redis restart."""

    status: str
    event_count: int
    last_event_id: str


@dataclass
class RedisSnapshot:
    at_s: float
    finished: dict[str, FinishedRun]


@dataclass(frozen=True, slots=True)
class FaultWindow:
    kind: str
    start_s: float
    end_s: float
    detail: str
