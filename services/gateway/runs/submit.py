"""Accepting a run: validate against the settings, store it, queue it — or find the earlier one.

Refusals are the domain errors of runs/errors.py; api/errors.py says what they are in HTTP.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Protocol

from services.gateway.auth import Principal
from services.gateway.resilience import CircuitOpenError
from services.gateway.runs.errors import (
    DependencyUnavailable,
    InvalidIdempotencyKey,
    QuestionTooLong,
    RunAlreadyFinished,
    RunNotFound,
)
from services.gateway.runs.models import RUN_ID, RunRecord, RunStatus, new_run_id, now_ms
from services.gateway.runs.store import Created
from services.gateway.settings import GatewaySettings

MAX_IDEMPOTENCY_KEY = 255


@dataclass(frozen=True, slots=True)
class Ask:
    """What the caller asked, as the request body gave it (its fields are the
    idempotency fingerprint, so a retried request matches the first one)."""

    question: str
    top_k: int | None
    mode: str
    channel: str | None = None


class SubmitStore(Protocol):
    async def create(
        self,
        record: RunRecord,
        request_fingerprint: dict[str, object],
        idempotency_key: str | None,
        idempotency_ttl_s: int,
    ) -> Created: ...

    async def get(self, run_id: str) -> RunRecord | None: ...

    async def request_cancel(self, run_id: str, ttl_s: int) -> None: ...


class Breakers(Protocol):
    def unavailable(self) -> CircuitOpenError | None: ...


async def submit(
    store: SubmitStore,
    settings: GatewaySettings,
    breakers: Breakers,
    caller: Principal,
    ask: Ask,
    idempotency_key: str | None,
) -> Created:
    """Store and queue the run, or return the earlier one of this idempotency key.

    Raises QuestionTooLong, InvalidIdempotencyKey, DependencyUnavailable, or
    (from the store) IdempotencyConflict.
    """
    if len(ask.question) > settings.max_question_chars:
        raise QuestionTooLong(len(ask.question), settings.max_question_chars)
    if idempotency_key is not None and not 1 <= len(idempotency_key) <= MAX_IDEMPOTENCY_KEY:
        raise InvalidIdempotencyKey(MAX_IDEMPOTENCY_KEY)
    down = breakers.unavailable()
    if down is not None:
        # Refuse rather than queue runs that would only fail: nothing is accepted.
        raise DependencyUnavailable(str(down), down.retry_after_s)
    created_at = now_ms()
    record = RunRecord(
        id=new_run_id(),
        status=RunStatus.QUEUED,
        tenant=caller.tenant,
        key_id=caller.key_id,
        access_groups=sorted(caller.groups),
        question=ask.question,
        top_k=ask.top_k or settings.top_k,
        mode=ask.mode,
        channel=ask.channel,
        created_at_ms=created_at,
        updated_at_ms=created_at,
    )
    return await store.create(
        record,
        request_fingerprint=_fingerprint(ask),
        idempotency_key=idempotency_key,
        idempotency_ttl_s=settings.idempotency_ttl_s,
    )


def _fingerprint(ask: Ask) -> dict[str, object]:
    # Without a channel, the fingerprint is what it was before channels existed, so a
    # request retried across the upgrade still matches its idempotency key.
    fields = asdict(ask)
    if fields["channel"] is None:
        del fields["channel"]
    return fields


async def owned_run(store: SubmitStore, caller: Principal, run_id: str) -> RunRecord:
    """The run, if it exists and belongs to the caller's tenant and key; else RunNotFound.

    Another tenant's run answers exactly like a missing one, so ids leak nothing.
    """
    record = await store.get(run_id) if RUN_ID.match(run_id) else None
    if record is None or record.tenant != caller.tenant or record.key_id != caller.key_id:
        raise RunNotFound(run_id)
    return record


async def cancel(
    store: SubmitStore, settings: GatewaySettings, caller: Principal, run_id: str
) -> RunRecord:
    """Flag the caller's unfinished run for cancelling; the record as it was then.

    Raises RunNotFound, or RunAlreadyFinished; a second cancel is harmless.
    """
    record = await owned_run(store, caller, run_id)
    if record.status.finished:
        raise RunAlreadyFinished(run_id, record.status.value)
    await store.request_cancel(run_id, settings.record_retention_s)
    return record
