"""Rate limits per key and per tenant, kept in Redis, answered as 429 with the IETF headers.

Its own Redis and gateway (next to the session's retriever and generator), so the
counters start at zero. The key umbrella-limited declares its own limits in the key
file (5 requests and 2 runs a minute); the tenant's limit is the setting's default,
set low here (8 requests a minute for the whole tenant umbrella).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ragway_tools.launcher import Stack
from tests.integration.conftest import auth, own_redis
from tests.integration.runs import QUESTION

LIMITED = {"Authorization": "Bearer key-umbrella-limited"}
OTHER = {"Authorization": "Bearer key-umbrella-other"}
UNKNOWN_RUN = "/v1/runs/run_" + "0" * 32


@pytest.fixture
def limited(stack: Stack, tmp_path: Path) -> Iterator[Stack]:
    with own_redis(stack, tmp_path, {"RAGWAY_TENANT_REQUESTS_PER_MINUTE": "8"}) as s:
        s.start_gateway()
        yield s


def refused(resp: httpx.Response, policy: str) -> None:
    assert resp.status_code == 429, resp.text
    assert resp.json()["error"]["code"] == "rate_limited"
    assert policy in resp.json()["error"]["message"]
    assert 1 <= int(resp.headers["Retry-After"]) <= 60
    # The exhausted quota: remaining 0, and its reset in seconds.
    state = re.search(rf'"{policy}";r=(\d+);t=(\d+)', resp.headers["RateLimit"])
    assert state is not None, resp.headers["RateLimit"]
    assert state.group(1) == "0" and 1 <= int(state.group(2)) <= 60


def test_key_and_tenant_limits_answer_429_with_ratelimit_headers(limited: Stack) -> None:
    with httpx.Client(base_url=limited.config.gateway_url, timeout=30) as api:
        # Runs: 2 a minute for this key. Each answer says the policies that apply.
        for _ in range(2):
            ok = api.post("/v1/runs", json={"question": QUESTION}, headers=LIMITED)
            assert ok.status_code == 202, ok.text
            policy = ok.headers["RateLimit-Policy"]
            assert '"key-requests";q=5;w=60' in policy
            assert '"key-runs";q=2;w=60' in policy
            assert '"tenant-requests";q=8;w=60' in policy
        third = api.post("/v1/runs", json={"question": QUESTION}, headers=LIMITED)
        refused(third, "key-runs")

        # Requests: 5 a minute for this key; the three POSTs counted.
        for _ in range(2):
            assert api.get(UNKNOWN_RUN, headers=LIMITED).status_code == 404
        refused(api.get(UNKNOWN_RUN, headers=LIMITED), "key-requests")

        # The tenant: 8 a minute over all its keys; 5 spent by the first key.
        for _ in range(3):
            assert api.get(UNKNOWN_RUN, headers=OTHER).status_code == 404
        refused(api.get(UNKNOWN_RUN, headers=OTHER), "tenant-requests")
        # A streamed answer carries the headers too (at the start of the stream).
        refused(api.get(f"{UNKNOWN_RUN}/events", headers=OTHER), "tenant-requests")

        # Other tenants, and the health checks, are not touched.
        assert api.get(UNKNOWN_RUN, headers=auth("acme")).status_code == 404
        assert api.get("/healthz").status_code == 200
