"""Webhook deliveries are rate limited per sender and per tenant, like the gateway's keys.

Regression (issue 16): the ingest API counted nothing, so one sender (or a leaked
secret) could queue deliveries as fast as it could sign them. The ingest app runs
in-process on a private Redis with a broker that only records what it is sent.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, cast

import httpx
import redis
from fastapi import FastAPI
from fastapi.testclient import TestClient

from services.ingest.api import create_app
from services.ingest.deliveries import DeliveryStore
from services.ingest.settings import IngestSettings
from tests.integration.webhooks import send, upserted

SENDERS = """\
senders:
  - {id: cms, tenants: [initech], secrets: [cms-secret]}
  - {id: wiki, tenants: [initech], secrets: [wiki-secret]}
"""


class RecordingBroker:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    def send_task(self, name: str, **kwargs: Any) -> None:
        self.sent.append(kwargs["args"])


def ingest_app(redis_url: str, tmp_path: Path, broker: RecordingBroker, **limits: Any) -> FastAPI:
    """The ingest API over SENDERS, queueing into ``broker``."""
    senders = tmp_path / "senders.yaml"
    senders.write_text(SENDERS)
    settings = IngestSettings(redis_url=redis_url, webhook_secrets_file=senders, **limits)
    return create_app(settings, celery=broker)  # type: ignore[arg-type]


def test_a_sender_and_a_tenant_past_their_quota_get_429_and_nothing_is_recorded(
    redis_url: str, tmp_path: Path
) -> None:
    broker = RecordingBroker()
    store = DeliveryStore(redis.Redis.from_url(redis_url), ttl_s=60)
    app = ingest_app(
        redis_url,
        tmp_path,
        broker,
        webhook_deliveries_per_minute=3,
        tenant_webhook_deliveries_per_minute=4,
    )
    with TestClient(app) as client:
        hooks = cast(httpx.Client, client)  # a TestClient is an httpx.Client
        for n in range(3):
            ok = send(hooks, "cms-secret", upserted(f"doc-{n}", "# A\n\nText.\n"))
            assert ok.status_code == 202, ok.text
            assert '"sender-deliveries";q=3;w=60' in ok.headers["RateLimit-Policy"]
            assert '"tenant-deliveries";q=4;w=60' in ok.headers["RateLimit-Policy"]
        over = send(hooks, "cms-secret", upserted("doc-9", "# A\n\nText.\n"), delivery_id="d-over")
        refused(over, "sender-deliveries")
        assert store.get("d-over") is None

        # The other sender of the same tenant: one left in the tenant's quota.
        assert send(hooks, "wiki-secret", upserted("doc-w", "# A\n\nText.\n")).status_code == 202
        over = send(hooks, "wiki-secret", upserted("doc-x", "# A\n\nText.\n"), delivery_id="d-t")
        refused(over, "tenant-deliveries")
        assert store.get("d-t") is None

        # An unsigned request is refused for its signature, counted against no one.
        assert send(hooks, "no-secret", upserted("doc-y", "# A\n\nText.\n")).status_code == 401
    assert len(broker.sent) == 4


def refused(resp: Any, policy: str) -> None:
    assert resp.status_code == 429, resp.text
    assert resp.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(resp.headers["Retry-After"]) <= 60
    state = re.search(rf'"{policy}";r=(\d+);t=(\d+)', resp.headers["RateLimit"])
    assert state is not None and state.group(1) == "0", resp.headers["RateLimit"]


def test_oversized_headers_are_a_431_before_any_signature_check(
    redis_url: str, tmp_path: Path
) -> None:
    broker = RecordingBroker()
    app = ingest_app(redis_url, tmp_path, broker)
    with TestClient(app) as client:
        hooks = cast(httpx.Client, client)
        big = send(
            hooks, "cms-secret", upserted("doc-1", "# A\n\nText.\n"), extra={"X-Big": "a" * 20_000}
        )
        assert big.status_code == 431, big.text
        assert big.json()["error"]["code"] == "headers_too_large"
        fits = send(
            hooks, "cms-secret", upserted("doc-1", "# A\n\nText.\n"), extra={"X-Big": "a" * 2_000}
        )
        assert fits.status_code == 202, fits.text
    assert len(broker.sent) == 1
