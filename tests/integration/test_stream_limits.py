"""Concurrent event streams are bounded per key and per tenant, over every replica.

Regression (issue 16): nothing bounded how many SSE streams one key or tenant held
open, so one caller could pin every connection and Redis reader of the gateways.
A private Redis and gateway; runs written straight into Redis, with no queue entry,
so their streams stay open until the test closes them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
import redis

from ragway_tools.launcher import Stack
from services.gateway.runs.events import RunAcceptedEvent
from services.gateway.runs.store import events_key, run_key
from tests.integration.conftest import auth, own_redis
from tests.integration.runs import demo_record


@pytest.fixture
def bounded(stack: Stack, tmp_path: Path) -> Iterator[Stack]:
    env = {"RAGWAY_STREAMS_PER_KEY": "2", "RAGWAY_STREAMS_PER_TENANT": "3"}
    with own_redis(stack, tmp_path, env) as s:
        s.start_gateway()
        yield s


def idle_run(redis_url: str, key_id: str, tenant: str = "demo") -> str:
    r = redis.Redis.from_url(redis_url)
    record = demo_record().model_copy(update={"key_id": key_id, "tenant": tenant})
    accepted = RunAcceptedEvent(run_id=record.id, question=record.question)
    r.set(run_key(record.id), record.model_dump_json())
    r.xadd(events_key(record.id), {"type": accepted.TYPE.value, "data": accepted.data()})
    r.close()
    return record.id


def test_a_key_or_tenant_at_its_stream_limit_gets_429_until_one_closes(bounded: Stack) -> None:
    url = bounded.config.redis_url
    paths = {
        "demo-sre": f"/v1/runs/{idle_run(url, 'demo-sre')}/events",
        "demo": f"/v1/runs/{idle_run(url, 'demo-public')}/events",
        "acme": f"/v1/runs/{idle_run(url, 'acme-staff', 'acme')}/events",
    }
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
    with (
        httpx.Client(base_url=bounded.config.gateway_url, timeout=30, limits=limits) as api,
        ExitStack() as streams,
    ):
        lines: list[Iterator[str]] = []

        def open_stream(who: str) -> httpx.Response:
            resp = streams.enter_context(api.stream("GET", paths[who], headers=auth(who)))
            if resp.status_code == 200:
                # The stream is live once its first line came; the line iterator is
                # kept, as dropping it closes the response (and frees the place).
                lines.append(resp.iter_lines())
                next(lines[-1])
            return resp

        first = open_stream("demo-sre")
        assert first.status_code == 200
        # The request quotas ride on the stream's first bytes, as on every answer.
        assert '"key-requests"' in first.headers["RateLimit-Policy"]
        assert '"key-requests";r=' in first.headers["RateLimit"]
        assert open_stream("demo-sre").status_code == 200
        over = open_stream("demo-sre")
        assert over.status_code == 429
        over.read()
        assert over.json()["error"]["code"] == "too_many_streams"
        assert "key-streams" in over.json()["error"]["message"]
        assert int(over.headers["Retry-After"]) >= 1

        # Another key of the same tenant: one left in the tenant's 3.
        assert open_stream("demo").status_code == 200
        over = open_stream("demo")
        assert over.status_code == 429
        over.read()
        assert "tenant-streams" in over.json()["error"]["message"]

        # Another tenant is not touched.
        assert open_stream("acme").status_code == 200

        # A closed stream frees its place at once.
        first.close()
        for _ in range(50):
            again = open_stream("demo")
            if again.status_code == 200:
                break
            again.close()
        assert again.status_code == 200


def test_a_stream_that_does_not_open_gives_its_place_back(bounded: Stack) -> None:
    """The place is taken in the same round trip as the record is read, before the
    record is looked at: a refused opening (404, 410, 400) must give it back."""
    url = bounded.config.redis_url
    mine, theirs = idle_run(url, "demo-sre"), idle_run(url, "demo-public")
    expired = idle_run(url, "demo-sre")
    with redis.Redis.from_url(url) as r:
        r.delete(events_key(expired))
    refused = [
        (f"/v1/runs/{theirs}/events", {}, 404),  # another key's run
        (f"/v1/runs/{expired}/events", {}, 410),
        (f"/v1/runs/{mine}/events", {"Last-Event-ID": "1-1"}, 400),
    ]
    with httpx.Client(base_url=bounded.config.gateway_url, timeout=30) as api:
        for _ in range(3):  # more than the key's limit of 2, if each kept its place
            for path, headers, status in refused:
                resp = api.get(path, headers=auth("demo-sre") | headers)
                assert resp.status_code == status, resp.text
        with redis.Redis.from_url(url) as r:
            assert r.zcard("ragway:streams:key:demo-sre") == 0
            assert r.zcard("ragway:streams:tenant:demo") == 0
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
    with httpx.Client(base_url=bounded.config.gateway_url, timeout=30, limits=limits) as api:
        path = f"/v1/runs/{mine}/events"
        with api.stream("GET", path, headers=auth("demo-sre")) as resp:
            assert resp.status_code == 200
            lines = resp.iter_lines()
            next(lines)
            with redis.Redis.from_url(url) as r:
                assert r.zcard("ragway:streams:key:demo-sre") == 1


def test_a_stream_opens_and_is_counted_after_redis_lost_its_scripts(bounded: Stack) -> None:
    """The place is taken by the script's digest in the opening's pipeline; after a
    Redis restart or SCRIPT FLUSH the digest is unknown, and the take falls back to
    loading the script."""
    url = bounded.config.redis_url
    run_id = idle_run(url, "demo-sre")
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
    with (
        httpx.Client(base_url=bounded.config.gateway_url, timeout=30, limits=limits) as api,
        ExitStack() as streams,
    ):
        path = f"/v1/runs/{run_id}/events"
        kept: list[Iterator[str]] = []  # dropping a line iterator closes its response
        for opened in (1, 2):
            with redis.Redis.from_url(url) as r:
                r.script_flush()
            resp = streams.enter_context(api.stream("GET", path, headers=auth("demo-sre")))
            assert resp.status_code == 200
            kept.append(resp.iter_lines())
            next(kept[-1])
            with redis.Redis.from_url(url) as r:
                assert r.zcard("ragway:streams:key:demo-sre") == opened
        with redis.Redis.from_url(url) as r:
            r.script_flush()
        over = api.get(path, headers=auth("demo-sre"))
        assert over.status_code == 429
        assert over.json()["error"]["code"] == "too_many_streams"
