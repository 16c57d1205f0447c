"""The ingest API's and workers' configuration, from ``RAGWAY_*`` environment variables."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr, model_validator

from ragway.settings import DEFAULT_MAX_HEADER_BYTES, RedisClientSettings

# Only `ragway up` and the tests use this; a deployment sets its own secret.
DEMO_WEBHOOK_SECRET = "rgw-demo-webhook-secret"


class IngestSettings(RedisClientSettings):
    ingest_host: str = "127.0.0.1"
    ingest_port: int = Field(default=7103, ge=1, le=65535)
    redis_url: str = "redis://127.0.0.1:6390/0"  # the password: RAGWAY_REDIS_PASSWORD(_FILE)
    # Celery's broker; empty = database 1 of the Redis at redis_url, so the
    # queues never mix with the gateway's keys.
    broker_url: str = ""
    retriever_addr: str = "127.0.0.1:7101"
    # HMAC-SHA256 key shared with the webhook sender, valid for every tenant; and/or
    # per-sender secrets bound to their tenants (services/ingest/senders.py). With
    # neither the API refuses to start.
    webhook_secret: SecretStr = SecretStr("")
    webhook_secrets_file: Path | None = None
    # Signed timestamps older or newer than this are refused (replay window).
    webhook_tolerance_s: int = Field(default=300, ge=1, le=3600)
    # Delivery ids are remembered this long (must exceed the sender's retry span).
    delivery_ttl_s: int = Field(default=7 * 24 * 3600, ge=60)
    max_body_bytes: int = Field(default=10 * 1024 * 1024, ge=1024)
    # The request target and headers together: 431 past it (ragway/http_limits.py).
    max_header_bytes: int = Field(default=DEFAULT_MAX_HEADER_BYTES, ge=4096, le=1024 * 1024)
    # Signed deliveries a minute per sender and per tenant (over all its senders);
    # past either a delivery is a 429 with Retry-After, and nothing is recorded.
    webhook_deliveries_per_minute: int = Field(default=1200, ge=1)
    tenant_webhook_deliveries_per_minute: int = Field(default=3000, ge=1)
    # Transient failures (retriever unavailable, document busy) are retried
    # with exponential backoff, then dead-lettered.
    task_max_retries: int = Field(default=6, ge=0, le=100)
    # A delivery found still 'running' when handed out again lost its worker
    # (a crash, the OOM killer, perhaps caused by the document). After this
    # many losses it is dead-lettered instead of killing workers for ever.
    task_max_worker_losses: int = Field(default=2, ge=0, le=100)
    retry_backoff_s: float = Field(default=2.0, gt=0)
    retry_backoff_max_s: float = Field(default=120.0, gt=0)
    # Must exceed the longest task: a message unacknowledged for longer is
    # handed to another worker (INFRA.md). Redelivery after a whole worker
    # dies takes about this long.
    visibility_timeout_s: int = Field(default=3600, ge=2)
    retriever_timeout_s: float = Field(default=120.0, gt=0)

    @model_validator(mode="after")
    def _backoff_below_visibility(self) -> IngestSettings:
        if self.retry_backoff_max_s >= self.visibility_timeout_s:
            raise ValueError(
                "retry_backoff_max_s must stay below visibility_timeout_s, or a delayed "
                "retry would be redelivered while it waits"
            )
        return self

    @property
    def celery_broker_url(self) -> str:
        if self.broker_url:
            return self.broker_url
        base = self.redis_url.rsplit("/", 1)
        return f"{base[0]}/1" if len(base) == 2 and base[1].isdigit() else self.redis_url
