"""/v1/ask: the synchronous form of a run, for callers that do not stream."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header

from services.gateway.api.deps import (
    Caller,
    Clients,
    Conversations,
    Hub,
    Paths,
    Settings,
    Store,
)
from services.gateway.api.errors import ApiError
from services.gateway.api.routes.runs import ERRORS
from services.gateway.api.schemas import AskResponse, ErrorBody, RunRequest
from services.gateway.runs.models import RunStatus
from services.gateway.runs.submit import MAX_IDEMPOTENCY_KEY, owned_run, submit

router = APIRouter(prefix="/v1", tags=["ask"])


@router.post(
    "/ask",
    response_model=AskResponse,
    responses={
        **ERRORS,
        409: {
            "model": ErrorBody,
            "description": "The run was cancelled, or the conversation is at its limit",
        },
        502: {"model": ErrorBody},
        504: {"model": ErrorBody},
    },
    summary="Ask and wait for the answer",
)
async def ask(
    body: RunRequest,
    caller: Caller,
    store: Store,
    hub: Hub,
    settings: Settings,
    clients: Clients,
    paths: Paths,
    conversations: Conversations,
    idempotency_key: Annotated[
        str | None,
        # Declared, not enforced here: submit() answers a precise 400 (not a 422).
        Header(
            alias="Idempotency-Key",
            json_schema_extra={"minLength": 1, "maxLength": MAX_IDEMPOTENCY_KEY},
        ),
    ] = None,
) -> AskResponse:
    """Runs the same durable run as `POST /v1/runs` and waits for its end (up to the ask
    timeout). A 504 names the run id, which stays readable at `/v1/runs/{id}`.
    Send the returned `conversation_id` with a follow-up question."""
    created = await submit(
        store, settings, clients, caller, body.ask(), idempotency_key, conversations, paths=paths
    )
    # The events themselves are not needed: the record holds the outcome.
    async for _ in hub.follow(created.run_id, "0-0", timeout_s=settings.ask_timeout_s):
        pass
    record = await owned_run(store, caller, created.run_id)
    if record.status is RunStatus.CANCELLED:
        raise ApiError(409, "run_cancelled", f"run {record.id} was cancelled")
    if record.status is RunStatus.FAILED:
        assert record.error is not None
        raise ApiError(502, record.error.code, f"run {record.id} failed: {record.error.message}")
    return AskResponse(
        run_id=record.id,
        answer=record.answer or "",
        citations=record.citations,
        refused=bool(record.refused),
        reason=record.refusal_detail if record.refused else None,
        sources=record.sources,
        build_id=record.build_id,
        timings_ms=record.timings_ms,
        degraded=record.degraded,
        conversation_id=record.conversation_id,
        rewritten_query=record.rewritten_query,
    )
