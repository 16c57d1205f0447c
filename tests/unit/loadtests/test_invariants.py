"""The checker flags each kind of broken run; a clean run passes every check."""

from __future__ import annotations

import json
from dataclasses import replace

from loadtests.invariants import check_all, client_log, final_state, redis_restart, stored_log
from loadtests.model import Event, FinishedRun, RedisSnapshot, RunTrace, StoredRun

RUN = "run_" + "a" * 32


def ev(n: int, type_: str, **data: object) -> Event:
    return Event(f"1796020562{n:03d}-0", type_, json.dumps(data))


def good_log() -> list[Event]:
    return [
        ev(1, "run.accepted", run_id=RUN),
        ev(2, "run.started", attempt=1, restarted=False),
        ev(3, "retrieval.completed", sources=[]),
        ev(4, "answer.delta", text="An answer", index=0),
        ev(5, "answer.delta", text=" [1]", index=1),
        ev(6, "answer.completed", answer="An answer [1]"),
        ev(7, "run.completed", status="succeeded"),
    ]


def trace(events: list[Event], **kw: object) -> RunTrace:
    t = RunTrace(run_id=RUN, user=0, submitted_s=0.0, accepted_s=0.01, events=list(events))
    for k, v in kw.items():
        setattr(t, k, v)
    return t


def stored(events: list[Event], status: str | None = "succeeded") -> dict[str, StoredRun]:
    return {RUN: StoredRun(status=status, events=events)}


def test_a_clean_run_passes_every_check() -> None:
    log = good_log()
    snap = RedisSnapshot(at_s=5.0, finished={RUN: FinishedRun("succeeded", 7, log[-1].id)})
    checks = check_all([trace(log)], stored(log), [snap])
    assert [(c.name, c.holds, c.checked) for c in checks] == [
        ("final_state", True, 1),
        ("client_log", True, 1),
        ("stored_log", True, 1),
        ("redis_restart", True, 1),
    ]


def test_a_gap_in_what_the_client_saw_is_flagged() -> None:
    log = good_log()
    seen = log[:3] + log[4:]  # one delta never reached the client
    check = client_log([trace(seen)], stored(log))
    assert check.violations == [
        f"{RUN} (user 0): gap: 1 stored event(s) never reached the client, first {log[3].id}"
    ]


def test_a_duplicate_event_is_flagged() -> None:
    log = good_log()
    seen = [*log[:4], log[3], *log[4:]]  # replayed the delta it already had
    check = client_log([trace(seen)], stored(log))
    assert len(check.violations) == 1
    assert f"duplicate event {log[3].id}" in check.violations[0]


def test_events_out_of_order_are_flagged() -> None:
    log = good_log()
    seen = [*log[:3], log[4], log[3], *log[5:]]
    check = client_log([trace(seen)], stored(log))
    assert "arrived after a later one" in check.violations[0]


def test_an_event_the_store_does_not_hold_is_flagged() -> None:
    log = good_log()
    check = client_log([trace(log)], stored(log[:4] + log[5:]))
    assert "Redis does not hold" in check.violations[0]


def test_same_ids_with_different_content_are_flagged() -> None:
    log = good_log()
    seen = [*log[:3], replace(log[3], type="answer.completed"), *log[4:]]
    check = client_log([trace(seen)], stored(log))
    assert "differs" in check.violations[0]


def test_a_client_that_never_saw_the_end_is_flagged() -> None:
    log = good_log()
    check = client_log([trace(log[:4], abandoned="the drain deadline passed")], stored(log))
    assert "without a terminal event" in check.violations[0]


def test_a_run_left_running_or_without_a_record_is_not_final() -> None:
    log = good_log()
    running = final_state([trace(log[:4])], stored(log[:4], status="running"))
    assert running.violations == [f"{RUN}: status 'running', not final"]
    missing = final_state([trace(log)], {})
    assert missing.violations == [f"{RUN}: no run record in Redis"]
    # A record that says finished over a log without its terminal event.
    torn = final_state([trace(log[:6])], stored(log[:6]))
    assert "the log ends with answer.completed" in torn.violations[0]


def test_runs_only_redis_knows_are_checked_too() -> None:
    log = good_log()
    check = final_state([], stored(log[:2], status="queued"))
    assert check.checked == 1 and not check.holds


def test_malformed_stored_logs_are_flagged() -> None:
    log = good_log()
    cases = {
        "2 terminal events": [*log, ev(8, "run.failed", status="failed")],
        "1 event(s) after run.completed": [*log, ev(8, "answer.delta", text="x", index=2)],
        "answer.delta index 2 where 1 was due": [
            *log[:4],
            ev(5, "answer.delta", text=" [1]", index=2),
            *log[5:],
        ],
        "run.started attempt 1 after attempt 1": [
            *log[:4],
            ev(40, "run.started", attempt=1, restarted=True),
            *log[4:],
        ],
        "starts with run.started": log[1:],
        "malformed answer.delta": [*log[:4], ev(5, "answer.delta", index=1), *log[5:]],
    }
    for expected, events in cases.items():
        check = stored_log(stored(events))
        assert len(check.violations) == 1 and expected in check.violations[0], expected


def test_a_restarted_attempt_counts_its_deltas_from_zero() -> None:
    log = good_log()
    restarted = [
        *log[:4],
        ev(10, "run.started", attempt=2, restarted=True),
        ev(11, "retrieval.completed"),
        ev(12, "answer.delta", text="An answer", index=0),
        ev(13, "run.completed", status="succeeded"),
    ]
    assert stored_log(stored(restarted)).holds


def test_a_run_lost_by_a_redis_restart_is_flagged() -> None:
    log = good_log()
    snap = RedisSnapshot(at_s=12.5, finished={RUN: FinishedRun("succeeded", 7, log[-1].id)})
    lost = redis_restart([snap], {})
    assert lost.violations == [f"{RUN} (finished before the restart at 12.5 s): run record lost"]
    shortened = redis_restart([snap], stored(log[:5]))
    assert "7 events ending" in shortened.violations[0]
    changed = redis_restart([snap], stored(log, status="failed"))
    assert "status succeeded became failed" in changed.violations[0]
    no_events = redis_restart([snap], stored([]))
    assert "event log lost" in no_events.violations[0]


def test_two_attempts_interleaved_in_one_log_are_flagged() -> None:
    # What a gateway frozen past its lease wrote before fencing: after the new attempt
    # started, the old one went on with its answer (its deltas happen to fit).
    log = good_log()
    interleaved = [
        *log[:4],
        ev(10, "run.started", attempt=2, restarted=True),
        ev(11, "retrieval.completed", sources=[]),
        ev(12, "answer.delta", text="Fresh", index=0),
        ev(13, "answer.completed", answer="Fresh"),
        ev(14, "answer.delta", text=" stale", index=1),  # the woken attempt 1
        ev(15, "run.completed", status="succeeded"),
    ]
    check = stored_log(stored(interleaved))
    assert len(check.violations) == 1
    assert "answer.delta after answer.completed in attempt 2" in check.violations[0]
    twice = [*log[:6], ev(8, "answer.completed", answer="stale"), log[6]]
    check = stored_log(stored(twice))
    assert len(check.violations) == 1 and "a second answer.completed" in check.violations[0]


def test_a_skipped_attempt_number_is_no_interleaving() -> None:
    # The load test's Redis kill: an executor's lease was granted (attempt 2 taken)
    # but the reply was lost, so it wrote nothing; attempt 3 ran the run.
    log = good_log()
    restarted = [
        *log[:4],
        ev(40, "run.started", attempt=3, restarted=True),
        ev(41, "answer.delta", text="Again", index=0),
        *log[-1:],
    ]
    check = stored_log(stored(restarted))
    assert check.holds, check.violations
