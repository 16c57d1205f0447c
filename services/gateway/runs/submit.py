"""Accepting a run: validate against the settings, store it, queue it — or find the earlier one.

Refusals are the domain errors of runs/errors.py; api/errors.py says what they are in HTTP.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Protocol

from ragway.followup import Rewrite, RuleRewriter
from services.gateway.auth import Principal
from services.gateway.paths.models import BASELINE, PathConfig
from services.gateway.paths.routing import Route
from services.gateway.resilience import CircuitOpenError
from services.gateway.runs.conversations import (
    CONVERSATION_ID,
    ConversationMeta,
    Turn,
    new_conversation_id,
)
from services.gateway.runs.errors import (
    ConversationNotFound,
    ConversationTooLarge,
    ConversationTurnLimit,
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
    user_id: str | None = None  # sticky canary routing; not part of the fingerprint when unset
    channel: str | None = None  # the client that asked; not part of the fingerprint when unset
    conversation_id: str | None = None  # a follow-up's conversation; likewise

    def fingerprint(self) -> dict[str, object]:
        # A request without these optional fields fingerprints as it did before they
        # existed, so a request retried across the upgrade still matches its key.
        fields = asdict(self)
        for optional in ("user_id", "channel", "conversation_id"):
            if fields[optional] is None:
                del fields[optional]
        return fields


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


class Conversations(Protocol):
    """What submitting needs of the conversation store (runs/conversations.py)."""

    async def open(self, conversation_id: str, tenant: str, key_id: str, ttl_s: int) -> None: ...

    async def meta(self, conversation_id: str) -> ConversationMeta | None: ...

    async def turns(self, conversation_id: str) -> list[Turn]: ...


class Breakers(Protocol):
    def unavailable(self) -> CircuitOpenError | None: ...


class Router(Protocol):
    """Which path serves a caller's run (paths/control.py)."""

    async def route(self, tenant: str, key_id: str, user_id: str | None) -> Route: ...

    async def config(self, name: str, version: int) -> PathConfig: ...


async def submit(
    store: SubmitStore,
    settings: GatewaySettings,
    breakers: Breakers,
    caller: Principal,
    ask: Ask,
    idempotency_key: str | None,
    conversations: Conversations | None = None,
    paths: Router | None = None,
) -> Created:
    """Store and queue the run, or return the earlier one of this idempotency key.

    With a conversation store, the run is a turn of the caller's conversation (a
    new one when the ask names none) and a follow-up gets its standalone query.
    Raises QuestionTooLong, InvalidIdempotencyKey, DependencyUnavailable,
    ConversationNotFound, ConversationTurnLimit, ConversationTooLarge, or (from the
    store) IdempotencyConflict.
    """
    if len(ask.question) > settings.max_question_chars:
        raise QuestionTooLong(len(ask.question), settings.max_question_chars)
    if idempotency_key is not None and not 1 <= len(idempotency_key) <= MAX_IDEMPOTENCY_KEY:
        raise InvalidIdempotencyKey(MAX_IDEMPOTENCY_KEY)
    down = breakers.unavailable()
    if down is not None:
        # Refuse rather than queue runs that would only fail: nothing is accepted.
        raise DependencyUnavailable(str(down), down.retry_after_s)
    chosen = Route(BASELINE, 0, None, shadow=False)
    top_k, mode = ask.top_k or settings.top_k, ask.mode
    if paths is not None:
        chosen = await paths.route(caller.tenant, caller.key_id, ask.user_id)
        path = await paths.config(chosen.path, chosen.version)
        # The path sets the defaults; a caller's explicit top_k still wins.
        top_k = ask.top_k or path.top_k or settings.top_k
        mode = path.mode or ask.mode
    conversation_id, rewrite = None, None
    if conversations is not None:
        conversation_id, rewrite = await _turn_of(conversations, settings, caller, ask)
    created_at = now_ms()
    record = RunRecord(
        id=new_run_id(),
        status=RunStatus.QUEUED,
        tenant=caller.tenant,
        key_id=caller.key_id,
        access_groups=sorted(caller.groups),
        question=ask.question,
        top_k=top_k,
        mode=mode,
        channel=ask.channel,
        origin=caller.origin,
        created_at_ms=created_at,
        updated_at_ms=created_at,
        path=chosen.path,
        path_version=chosen.version,
        user_id=ask.user_id,
        experiment=chosen.experiment,
        shadow=chosen.shadow,
        conversation_id=conversation_id,
        rewritten_query=rewrite.query if rewrite is not None and rewrite.rewritten else None,
        rewrite_rule=rewrite.rule if rewrite is not None else None,
    )
    return await store.create(
        record,
        request_fingerprint=ask.fingerprint(),
        idempotency_key=idempotency_key,
        idempotency_ttl_s=settings.idempotency_ttl_s,
    )


async def owned_run(store: SubmitStore, caller: Principal, run_id: str) -> RunRecord:
    """The run, if it exists and belongs to the caller's tenant and key (for a widget key:
    and was started from the caller's origin); else RunNotFound.

    Another tenant's run answers exactly like a missing one, so ids leak nothing.
    """
    return owned(await store.get(run_id) if is_run_id(run_id) else None, caller, run_id)


def is_run_id(run_id: str) -> bool:
    """Whether ``run_id`` has the form of one (anything else is not looked up)."""
    return RUN_ID.match(run_id) is not None


def owned(record: RunRecord | None, caller: Principal, run_id: str) -> RunRecord:
    """``owned_run``'s test on a record already read: it, or RunNotFound."""
    if record is None or record.tenant != caller.tenant or record.key_id != caller.key_id:
        raise RunNotFound(run_id)
    if caller.kind == "widget" and record.origin != caller.origin:
        # A public key copied onto another site's page cannot read the runs of this one.
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


async def _turn_of(
    conversations: Conversations, settings: GatewaySettings, caller: Principal, ask: Ask
) -> tuple[str, Rewrite]:
    """The conversation the run belongs to, and the query it searches for."""
    if ask.conversation_id is None:
        # A new conversation. Should the idempotency key replay an earlier run,
        # this one stays empty and expires; the replayed run names its own.
        conversation_id = new_conversation_id()
        await conversations.open(
            conversation_id, caller.tenant, caller.key_id, settings.conversation_ttl_s
        )
        return conversation_id, Rewrite(ask.question, ask.question, "first")
    meta = await owned_conversation(conversations, caller, ask.conversation_id)
    if meta.turn_count >= settings.conversation_max_turns:
        raise ConversationTurnLimit(meta.id, settings.conversation_max_turns)
    if meta.chars >= settings.conversation_max_chars:
        raise ConversationTooLarge(meta.id, meta.chars, settings.conversation_max_chars)
    previous = [turn.query for turn in await conversations.turns(meta.id)]
    return meta.id, RuleRewriter().rewrite(ask.question, previous)


async def owned_conversation(
    conversations: Conversations, caller: Principal, conversation_id: str
) -> ConversationMeta:
    """The conversation, if it exists and belongs to the caller's tenant and key;
    else ConversationNotFound (another key's answers like a missing one)."""
    meta = (
        await conversations.meta(conversation_id)
        if CONVERSATION_ID.match(conversation_id)
        else None
    )
    if meta is None or meta.tenant != caller.tenant or meta.key_id != caller.key_id:
        raise ConversationNotFound(conversation_id)
    return meta
