"""The run as the gateway keeps it: its record in Redis, its status and the event types.

The HTTP request and response bodies are in services/gateway/api/schemas.py.
"""

from __future__ import annotations

import re
import time
import uuid
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field

RUN_ID = re.compile(r"^run_[0-9a-f]{32}$")
# Redis stream ids: "<ms>-<seq>", each part an unsigned 64-bit integer. Anything else
# in Last-Event-ID is malformed. ASCII digits only ('\d' takes any Unicode digit), and
# matched whole: '$' would also match before a final newline, which Redis refuses.
EVENT_ID_PATTERN = r"^[0-9]{1,20}-[0-9]{1,20}$"
EVENT_ID = re.compile(EVENT_ID_PATTERN)
_U64_MAX = 2**64 - 1


def is_event_id(value: str) -> bool:
    """True when ``value`` is a stream id that Redis accepts (both parts below 2^64)."""
    if EVENT_ID.fullmatch(value) is None:
        return False
    ms, seq = value.split("-")
    return int(ms) <= _U64_MAX and int(seq) <= _U64_MAX


def new_run_id() -> str:
    return f"run_{uuid.uuid4().hex}"


def now_ms() -> int:
    return int(time.time() * 1000)


class EventType(StrEnum):
    ACCEPTED = "run.accepted"
    STARTED = "run.started"
    RETRIEVAL = "retrieval.completed"
    DELTA = "answer.delta"
    RESET = "answer.reset"
    ANSWER = "answer.completed"
    COMPLETED = "run.completed"
    FAILED = "run.failed"
    CANCELLED = "run.cancelled"
    # Sent by a stopping replica on each open stream, never stored in a run's log.
    CLOSING = "stream.closing"


TERMINAL_EVENTS = frozenset({EventType.COMPLETED, EventType.FAILED, EventType.CANCELLED})


class RunStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        return self in (RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED)


class Source(BaseModel):
    number: int = Field(description="The [n] the answer cites.")
    source_id: str = Field(description="Chunk id.")
    document_id: str
    title: str
    section: str
    url: str
    version: str
    score: float
    text: str = Field(
        default="",
        description="The passage the generator read, so a reader (or an audit) can check "
        "the answer against it.",
    )
    # Only on a source whose document was deleted or revoked after the run (ragway.redaction).
    redacted: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Set once the passage was taken out: `document_deleted` or "
        "`access_changed`; `text` is then empty.",
    )


class Citation(BaseModel):
    """A source the answer cites: the subset of a Source that a reader needs."""

    model_config = {"extra": "ignore"}

    number: int
    source_id: str
    document_id: str
    title: str
    section: str
    url: str


Rating = Literal["up", "down"]


class RunFeedback(BaseModel):
    """The user's feedback on the run's answer, as the run record shows it (the latest one)."""

    rating: Rating = Field(description="`up`: the answer helped; `down`: it did not.")
    comment: str | None = Field(default=None, description="Why, when the user said.")
    at_ms: int = Field(description="When it was sent (it replaced any earlier feedback).")


class Degradation(BaseModel):
    stage: str
    reason: str


class Redaction(BaseModel):
    """A document whose text was taken out of the run after it ran (ragway.redaction)."""

    document_id: str
    reason: str = Field(description="`document_deleted` or `access_changed`.")


class ErrorInfo(BaseModel):
    code: str
    message: str


class RunRecord(BaseModel):
    """The durable record of one run, stored in Redis and returned by GET /v1/runs/{id}."""

    id: str
    status: RunStatus
    tenant: str
    key_id: str
    question: str
    top_k: int
    mode: str
    channel: str | None = Field(
        default=None, description="The client that asked, when it said (e.g. `telegram`)."
    )
    origin: str | None = Field(
        default=None,
        description="The browser Origin the run was started from; a widget key's run is "
        "readable only from it.",
    )
    created_at_ms: int
    updated_at_ms: int
    attempts: int = 0
    answer: str | None = None
    citations: list[Citation] = Field(default_factory=list)
    refused: bool | None = None
    refusal_reason: str | None = None
    refusal_detail: str | None = None
    verdict: str | None = None
    evidence_score: float | None = Field(
        default=None, description="The support the verdict was based on (0-1)."
    )
    sources: list[Source] = Field(default_factory=list)
    build_id: str | None = None
    reranker_model: str | None = Field(
        default=None,
        description="The reranker artifact in force for the search (the tenant's own or the "
        "shared one); unset when none was.",
    )
    rerank_skipped: bool | None = Field(
        default=None,
        description="True when the reranker in force was skipped because fusion was "
        "confident (the skip margin: the path's, else the retriever's), so the sources keep "
        "the fused order; false when it reranked; unset when none was in force.",
    )
    model: str | None = None
    prompt_version: str | None = None
    access_groups: list[str] = Field(default_factory=list)
    degraded: list[Degradation] = Field(default_factory=list)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    error: ErrorInfo | None = None
    # The release unit that served the run (services/gateway/paths): its name and
    # version, and the canary or shadow experiment it counts towards, if any.
    path: str = Field(default="baseline", description="The path that served the run.")
    path_version: int = Field(default=0, description="Its version; 0 = the built-in default.")
    user_id: str | None = Field(default=None, description="The user the caller named.")
    experiment: str | None = Field(
        default=None, description="The canary or shadow experiment the run counts towards."
    )
    shadow: bool = Field(
        default=False, description="A shadow of this run is executed on the candidate path."
    )
    shadow_of: str | None = Field(
        default=None, description="For a shadow run: the served run it shadows (never streamed)."
    )
    conversation_id: str | None = Field(
        default=None, description="The conversation this run is a turn of."
    )
    rewritten_query: str | None = Field(
        default=None,
        description="For a follow-up: the standalone query searched and answered for, "
        "made from the question and the earlier turns (the question stays as asked).",
    )
    rewrite_rule: str | None = Field(
        default=None, description="The rewriter rule that decided the query (ragway.followup)."
    )
    feedback: RunFeedback | None = Field(
        default=None,
        description="The user's feedback on the answer (POST /v1/runs/{id}/feedback), once "
        "given: the latest rating, comment and time.",
    )

    redactions: list[Redaction] = Field(
        default_factory=list,
        description="Documents deleted or revoked since the run: their sources' `text` is "
        "empty, and so is `answer` when the answer cited one of them.",
    )

    @property
    def standalone_query(self) -> str:
        """What the retriever searches for and the generator answers."""
        return self.rewritten_query or self.question
