"""The ingest HTTP API: ``python -m services.ingest.api`` (default 127.0.0.1:7103).

    POST /v1/webhooks/documents   signed delivery → 202 queued | 200 duplicate
    GET  /healthz, /readyz, /metrics (Prometheus)

A delivery is checked in this order, and refused at the first failure, before
anything is stored: size (413), signature and timestamp (401), delivery id
(400), body (422), the body's tenant against the signing secret's tenants (403,
services/ingest/senders.py), the sender's and the tenant's delivery quotas (429,
ragway/ratelimit.py; only signed deliveries count). Accepted deliveries are
recorded in Redis before the task is queued; when Redis or the broker is away the
answer is 503 and nothing is kept, so the sender's retry is the delivery.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Annotated, Any

import redis
import uvicorn
from celery import Celery
from fastapi import FastAPI, Header, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError

from ragway import telemetry
from ragway.http_errors import error_response
from ragway.http_limits import HeaderLimit, parser_config
from ragway.logs import configure
from ragway.metrics import HttpMetrics, exposition
from ragway.ratelimit import Quota, QuotaChecker, per_minute
from services.ingest.deliveries import DeliveryStore
from services.ingest.models import PAYLOAD
from services.ingest.senders import signing_keys
from services.ingest.settings import IngestSettings
from services.ingest.signing import SignatureError, verify_any
from services.ingest.worker import TASK, create_celery

log = logging.getLogger(__name__)
_DELIVERY_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


def error(status: int, code: str, message: str, **headers: str) -> JSONResponse:
    return error_response(status, code, message, headers)


async def read_body(request: Request, limit: int) -> bytes | None:
    """The body, or None once it is known to exceed ``limit`` bytes.

    A declared Content-Length over the limit is refused unread; a body sent
    without one (chunked) is counted while it streams and refused at the first
    byte over the limit, never read whole.
    """
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        return None
    parts: list[bytes] = []
    size = 0
    async for part in request.stream():
        size += len(part)
        if size > limit:
            return None
        parts.append(part)
    return b"".join(parts)


def create_app(settings: IngestSettings, *, celery: Celery | None = None) -> FastAPI:
    keys = signing_keys(settings.webhook_secret.get_secret_value(), settings.webhook_secrets_file)
    secrets = [k.secret for k in keys]
    client = redis.Redis.from_url(settings.redis_url, socket_timeout=5)
    store = DeliveryStore(client, ttl_s=settings.delivery_ttl_s)
    broker = celery or create_celery(settings)
    quotas = QuotaChecker(
        settings.redis_url,
        key_prefix="ingest:ratelimit",
        socket_timeout_s=5,
        connect_timeout_s=2,
    )
    app = FastAPI(
        title="ragway ingest",
        version="1",
        description="Signed webhooks that keep the knowledge builds true to their sources.",
    )

    app.add_middleware(HeaderLimit, max_bytes=settings.max_header_bytes)
    app.add_middleware(HttpMetrics)

    @app.get("/metrics", include_in_schema=False)
    async def prometheus_metrics(request: Request) -> Response:
        body, content_type = exposition(request.headers.get("accept", ""))
        return Response(body, media_type=content_type)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", response_model=None)
    async def readyz() -> dict[str, str] | JSONResponse:
        try:
            await run_in_threadpool(client.ping)
        except redis.RedisError as exc:
            return error(503, "redis_unavailable", f"Redis is unreachable: {exc}")
        return {"status": "ready"}

    @app.post("/v1/webhooks/documents", status_code=202, response_model=None)
    async def document_webhook(
        request: Request,
        x_ragway_delivery: Annotated[str | None, Header()] = None,
        x_ragway_timestamp: Annotated[str | None, Header()] = None,
        x_ragway_signature: Annotated[str | None, Header()] = None,
    ) -> dict[str, Any] | JSONResponse:
        body = await read_body(request, settings.max_body_bytes)
        if body is None:
            return error(413, "body_too_large", f"the limit is {settings.max_body_bytes} bytes")
        try:
            signed_at, index = verify_any(
                secrets,
                timestamp=x_ragway_timestamp,
                signature=x_ragway_signature,
                delivery_id=x_ragway_delivery,
                body=body,
                now=time.time(),
                tolerance_s=settings.webhook_tolerance_s,
            )
        except SignatureError as exc:
            log.warning("webhook refused", extra={"code": exc.code})
            return error(401, exc.code, str(exc))
        if not x_ragway_delivery or not _DELIVERY_ID.match(x_ragway_delivery):
            return error(
                400,
                "invalid_delivery_id",
                "X-Ragway-Delivery must be 1-128 characters of [A-Za-z0-9._:-]",
            )
        try:
            payload = PAYLOAD.validate_json(body)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}"
                for e in exc.errors()[:5]
            )
            return error(422, "invalid_body", problems)
        delivery_id = x_ragway_delivery
        ref = payload.document
        key = keys[index]
        if not key.allows(ref.tenant):
            # The tenant comes from the body: the secret that signed it must be bound to it.
            log.warning(
                "webhook refused",
                extra={"code": "tenant_not_allowed", "sender": key.sender, "tenant": ref.tenant},
            )
            return error(
                403,
                "tenant_not_allowed",
                f"this delivery's signing secret may not write documents of tenant {ref.tenant!r}",
            )
        decision = await quotas.check(
            [
                Quota(
                    "sender-deliveries",
                    f"sender:{key.sender}",
                    per_minute(settings.webhook_deliveries_per_minute),
                ),
                Quota(
                    "tenant-deliveries",
                    f"tenant:{ref.tenant}",
                    per_minute(settings.tenant_webhook_deliveries_per_minute),
                ),
            ]
        )
        if not decision.allowed:
            log.warning(
                "webhook refused",
                extra={"code": "rate_limited", "sender": key.sender, "tenant": ref.tenant},
            )
            return error(429, "rate_limited", decision.message, **decision.headers)
        quota_headers = decision.headers
        try:
            recorded = await run_in_threadpool(
                store.record,
                delivery_id,
                body,
                signed_at=signed_at,
                event=payload.event,
                doc=f"{ref.tenant}/{ref.id}",
            )
        except redis.RedisError as exc:
            return error(503, "redis_unavailable", f"cannot record: {exc}", **{"Retry-After": "5"})
        if not recorded.same_body:
            return error(
                409,
                "delivery_id_reused",
                f"delivery {delivery_id} was received before with a different body",
            )
        if not recorded.created and recorded.state != "received":
            return JSONResponse(
                {"delivery_id": delivery_id, "status": recorded.state, "duplicate": True},
                status_code=200,
                headers=quota_headers,
            )
        # New, or recorded by an API that died before queueing: queue it (again).
        try:
            await run_in_threadpool(
                broker.send_task,
                TASK,
                args=[delivery_id],
                retry=True,
                retry_policy={"max_retries": 2, "interval_start": 0.2, "interval_step": 0.5},
            )
            await run_in_threadpool(store.mark_queued, delivery_id)
        except Exception as exc:  # kombu raises many types; any means "not queued"
            if recorded.created:
                await run_in_threadpool(store.forget, delivery_id)
            log.error("cannot queue", extra={"delivery_id": delivery_id, "error": str(exc)})
            return error(503, "queue_unavailable", f"cannot queue: {exc}", **{"Retry-After": "5"})
        log.info(
            "delivery queued",
            extra={"delivery_id": delivery_id, "event": payload.event, "sender": key.sender},
        )
        return JSONResponse(
            {"delivery_id": delivery_id, "status": "queued", "duplicate": not recorded.created},
            status_code=202,
            headers=quota_headers,
        )

    return app


def main() -> None:
    settings = IngestSettings()
    configure("ingest-api", settings.log_level, settings.log_format)
    telemetry.configure("ragway-ingest-api")
    uvicorn.run(
        create_app(settings),
        host=settings.ingest_host,
        port=settings.ingest_port,
        log_level=settings.log_level.lower(),
        access_log=False,
        # Webhooks are few: h11 (pure Python) costs them nothing that the gateway's
        # C parser would save.
        **parser_config("h11", settings.max_header_bytes),
    )


if __name__ == "__main__":
    main()
