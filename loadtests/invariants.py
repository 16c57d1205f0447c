"""The invariants a load run must keep, checked against what Redis stores afterwards.

Each check is a plain function of plain data (client traces, stored runs, Redis
snapshots), so tests feed it hand-made logs with a gap, a duplicate or a lost run
and see it flagged.

1. final_state      every accepted run, and every run Redis holds, reached a final state.
2. client_log       every client saw its run's events once each, in order, with no gap:
                    its sequence (over all its reconnects) equals the stored log.
3. stored_log       every stored log is one well-formed run: run.accepted first, one
                    terminal event and it last, attempts counted up from 1, each
                    attempt's answer.delta indexes contiguous from 0, and no two
                    attempts interleaved (each attempt has at most one
                    retrieval.completed and one answer.completed, and no delta after
                    its answer.completed: an executor that woke after losing its
                    lease wrote into the new attempt).
4. redis_restart    every run finished before a Redis restart is still there after it,
                    with the same status and the same events.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from loadtests.model import TERMINAL, Event, RedisSnapshot, RunTrace, StoredRun
from services.gateway.runs.events import (
    AnswerCompleted,
    AnswerDelta,
    RetrievalCompleted,
    RunStarted,
    parse_event,
)

FINAL_STATUSES = frozenset({"succeeded", "failed", "cancelled"})


@dataclass
class Check:
    name: str
    description: str
    checked: int = 0
    violations: list[str] = field(default_factory=list)

    @property
    def holds(self) -> bool:
        return not self.violations


def check_all(
    traces: Sequence[RunTrace],
    stored: Mapping[str, StoredRun],
    snapshots: Sequence[RedisSnapshot],
) -> list[Check]:
    return [
        final_state(traces, stored),
        client_log(traces, stored),
        stored_log(stored),
        redis_restart(snapshots, stored),
    ]


def final_state(traces: Sequence[RunTrace], stored: Mapping[str, StoredRun]) -> Check:
    check = Check("final_state", "every accepted run reached a final state")
    run_ids = {t.run_id for t in traces} | set(stored)
    for run_id in sorted(run_ids):
        check.checked += 1
        run = stored.get(run_id)
        if run is None or run.status is None:
            check.violations.append(f"{run_id}: no run record in Redis")
        elif run.status not in FINAL_STATUSES:
            check.violations.append(f"{run_id}: status {run.status!r}, not final")
        elif not run.events or run.events[-1].type not in TERMINAL:
            last = run.events[-1].type if run.events else "nothing"
            check.violations.append(
                f"{run_id}: record says {run.status} but the log ends with {last}"
            )
    return check


def client_log(traces: Sequence[RunTrace], stored: Mapping[str, StoredRun]) -> Check:
    check = Check(
        "client_log", "every client saw a gap-free, duplicate-free sequence equal to the stored log"
    )
    for trace in traces:
        check.checked += 1
        problem = _compare(trace, stored.get(trace.run_id))
        if problem:
            check.violations.append(f"{trace.run_id} (user {trace.user}): {problem}")
    return check


def _compare(trace: RunTrace, run: StoredRun | None) -> str | None:
    seen: set[str] = set()
    previous: tuple[int, int] | None = None
    for event in trace.events:
        if event.id in seen:
            return f"duplicate event {event.id} ({event.type})"
        seen.add(event.id)
        key = _id_key(event.id)
        if key is None:
            return f"malformed event id {event.id!r}"
        if previous is not None and key <= previous:
            return f"event {event.id} arrived after a later one"
        previous = key
    if trace.abandoned:
        return f"client stopped without a terminal event: {trace.abandoned}"
    if run is None:
        return "no stored log to compare with"
    stored_ids = [e.id for e in run.events]
    if [e.id for e in trace.events] != stored_ids:
        missing = [i for i in stored_ids if i not in seen]
        extra = [e.id for e in trace.events if e.id not in set(stored_ids)]
        if missing:
            return (
                f"gap: {len(missing)} stored event(s) never reached the client, first {missing[0]}"
            )
        return f"client saw {len(extra)} event(s) Redis does not hold, first {extra[0]}"
    for mine, theirs in zip(trace.events, run.events, strict=True):
        if mine != theirs:
            return f"event {mine.id} differs: client {mine.type} vs stored {theirs.type}"
    return None


def stored_log(stored: Mapping[str, StoredRun]) -> Check:
    check = Check("stored_log", "every stored event log is one well-formed run")
    for run_id, run in sorted(stored.items()):
        if not run.events:
            continue  # nothing to judge; final_state reports a missing log
        check.checked += 1
        problem = _well_formed(run.events)
        if problem:
            check.violations.append(f"{run_id}: {problem}")
    return check


def _well_formed(events: Sequence[Event]) -> str | None:
    if events[0].type != "run.accepted":
        return f"starts with {events[0].type}, not run.accepted"
    terminals = [i for i, e in enumerate(events) if e.type in TERMINAL]
    if len(terminals) > 1:
        return f"{len(terminals)} terminal events"
    if terminals and terminals[0] != len(events) - 1:
        return f"{len(events) - 1 - terminals[0]} event(s) after {events[terminals[0]].type}"
    attempt, next_delta = 0, 0
    seen: set[str] = set()  # the once-per-attempt events of the current attempt
    for event in events:
        if event.type in (RetrievalCompleted.TYPE, AnswerCompleted.TYPE):
            if event.type in seen:
                return f"a second {event.type} in attempt {attempt}: attempts interleaved"
            seen.add(event.type)
            continue
        if event.type == AnswerDelta.TYPE and AnswerCompleted.TYPE in seen:
            return f"answer.delta after answer.completed in attempt {attempt}: attempts interleaved"
        if event.type not in (RunStarted.TYPE, AnswerDelta.TYPE):
            continue
        try:
            parsed = parse_event(event.type, event.data)
        except ValueError as exc:
            return f"malformed {event.type} {event.id}: {str(exc).splitlines()[0]}"
        if isinstance(parsed, RunStarted):
            n = parsed.attempt
            # Attempts only go up. A number may be skipped: an executor whose lease
            # reply was lost when Redis died took the number and wrote nothing.
            if n <= attempt:
                return f"run.started attempt {n} after attempt {attempt}"
            attempt, next_delta = n, 0
            seen.clear()
        elif isinstance(parsed, AnswerDelta):
            index = parsed.index
            if index != next_delta:
                return f"answer.delta index {index} where {next_delta} was due (attempt {attempt})"
            next_delta += 1
    return None


def redis_restart(snapshots: Sequence[RedisSnapshot], stored: Mapping[str, StoredRun]) -> Check:
    check = Check("redis_restart", "no run finished before a Redis restart was lost by it")
    for snap in snapshots:
        for run_id, before in sorted(snap.finished.items()):
            check.checked += 1
            after = stored.get(run_id)
            where = f"{run_id} (finished before the restart at {snap.at_s:.1f} s)"
            if after is None or after.status is None:
                check.violations.append(f"{where}: run record lost")
            elif after.status != before.status:
                check.violations.append(f"{where}: status {before.status} became {after.status}")
            elif not after.events:
                check.violations.append(f"{where}: event log lost")
            elif (len(after.events), after.events[-1].id) != (
                before.event_count,
                before.last_event_id,
            ):
                check.violations.append(
                    f"{where}: {before.event_count} events ending {before.last_event_id} became "
                    f"{len(after.events)} ending {after.events[-1].id}"
                )
    return check


def _id_key(event_id: str) -> tuple[int, int] | None:
    ms, sep, seq = event_id.partition("-")
    if not sep or not ms.isdigit() or not seq.isdigit():
        return None
    return int(ms), int(seq)
