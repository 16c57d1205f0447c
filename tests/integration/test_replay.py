"""Disconnect anywhere, reconnect with Last-Event-ID: exactly the missing events, none twice."""

from __future__ import annotations

import httpx

from tests.integration.conftest import auth
from tests.integration.sse import read_events, start_run

Q = "How do I resume a stream after a disconnect?"


def test_a_client_that_disconnects_after_n_events_gets_exactly_the_rest(api: httpx.Client) -> None:
    run_id = start_run(api, Q, auth("demo"))
    for n in (1, 2, 3, 4):
        first = read_events(api, run_id, auth("demo"), stop_after=n)
        assert len(first) == n
        rest = read_events(api, run_id, auth("demo"), last_event_id=first[-1].id)
        full = read_events(api, run_id, auth("demo"))
        assert first + rest == full, n
        assert len({e.id for e in first + rest}) == len(full)


def test_every_cut_point_replays_without_gap_or_duplicate(api: httpx.Client) -> None:
    run_id = start_run(api, Q, auth("demo"))
    full = read_events(api, run_id, auth("demo"))
    assert full[-1].event == "run.completed"
    for i, event in enumerate(full[:-1]):
        assert read_events(api, run_id, auth("demo"), last_event_id=event.id) == full[i + 1 :]


def test_after_query_parameter_replays_like_the_header_and_the_header_wins(
    api: httpx.Client,
) -> None:
    run_id = start_run(api, Q, auth("demo"))
    full = read_events(api, run_id, auth("demo"))
    assert read_events(api, run_id, auth("demo"), after=full[1].id) == full[2:]
    # A browser reconnects to the original URL (?after=A) and adds Last-Event-ID: B.
    both = read_events(api, run_id, auth("demo"), after=full[0].id, last_event_id=full[3].id)
    assert both == full[4:]


def test_a_stream_opened_before_the_run_ends_delivers_everything_once(
    api: httpx.Client,
) -> None:
    # Open the stream right after creation: the tail is read live from Redis.
    run_id = start_run(api, Q, auth("demo"))
    live = read_events(api, run_id, auth("demo"))
    assert live == read_events(api, run_id, auth("demo"))
    assert next(e.event for e in live) == "run.accepted"
