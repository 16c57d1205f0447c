"""Accepting a run: validate against the settings, store it, queue it — or find the earlier one."""

from __future__ import annotations

import math

from services.gateway.api.errors import ApiError
from services.gateway.auth import Principal
from services.gateway.clients import ServiceClients
from services.gateway.runs.models import (
    RUN_ID,
    RunRecord,
    RunRequest,
    RunStatus,
    new_run_id,
    now_ms,
)
from services.gateway.runs.store import Created, IdempotencyConflictError, RunStore
from services.gateway.settings import GatewaySettings

MAX_IDEMPOTENCY_KEY = 255


async def submit(
    store: RunStore,
    settings: GatewaySettings,
    clients: ServiceClients,
    caller: Principal,
    body: RunRequest,
    idempotency_key: str | None,
) -> Created:
    if len(body.question) > settings.max_question_chars:
        raise ApiError(
            422,
            "question_too_long",
            f"question: {len(body.question)} characters; "
            f"the limit is {settings.max_question_chars}",
        )
    if idempotency_key is not None and not 1 <= len(idempotency_key) <= MAX_IDEMPOTENCY_KEY:
        raise ApiError(
            400,
            "invalid_idempotency_key",
            f"Idempotency-Key must be 1-{MAX_IDEMPOTENCY_KEY} characters",
        )
    down = clients.unavailable()
    if down is not None:
        # Refuse rather than queue runs that would only fail: nothing is accepted.
        raise ApiError(
            503,
            "dependency_unavailable",
            str(down),
            {"Retry-After": str(max(1, math.ceil(down.retry_after_s)))},
        )
    created_at = now_ms()
    record = RunRecord(
        id=new_run_id(),
        status=RunStatus.QUEUED,
        tenant=caller.tenant,
        key_id=caller.key_id,
        access_groups=sorted(caller.groups),
        question=body.question,
        top_k=body.top_k or settings.top_k,
        mode=body.mode,
        created_at_ms=created_at,
        updated_at_ms=created_at,
    )
    try:
        return await store.create(
            record,
            request_fingerprint=body.model_dump(),
            idempotency_key=idempotency_key,
            idempotency_ttl_s=settings.idempotency_ttl_s,
        )
    except IdempotencyConflictError as exc:
        raise ApiError(
            422,
            "idempotency_key_reused",
            f"Idempotency-Key was already used for a different request (run {exc.run_id})",
        ) from exc


async def owned_run(store: RunStore, caller: Principal, run_id: str) -> RunRecord:
    """The run, if it exists and belongs to the caller's tenant and key; else 404.

    Another tenant's run answers exactly like a missing one, so ids leak nothing.
    """
    record = await store.get(run_id) if RUN_ID.match(run_id) else None
    if record is None or record.tenant != caller.tenant or record.key_id != caller.key_id:
        raise ApiError(404, "run_not_found", f"no run with id {run_id!r}")
    return record
