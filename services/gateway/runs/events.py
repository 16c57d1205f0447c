"""The events of a run: one model per SSE event type, the stream's public contract.

The executor and the store build events only through these models; the SSE
endpoint sends what they serialised; the load-test checker parses with them;
docs/streaming.md lists them from ``reference_markdown`` (a unit test keeps the
page and the models equal).

``data()`` is the JSON text on the ``data:`` line. It is ``json.dumps`` of the
model's fields in their declared order, the bytes the stream always carried.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field

from services.gateway.runs.models import Citation, Degradation, ErrorInfo, EventType, Source


class RunEvent(BaseModel):
    """Base of every event: its type is fixed by the class, its fields are the data."""

    model_config = ConfigDict(extra="forbid")

    TYPE: ClassVar[EventType]

    def data(self) -> str:
        return json.dumps(self.model_dump(mode="json"))


class RunAcceptedEvent(RunEvent):
    """Written when the run is created, in the same Lua script as the record."""

    TYPE = EventType.ACCEPTED
    run_id: str = Field(description="The run's id.")
    question: str = Field(description="The question as accepted.")


class RunStarted(RunEvent):
    """Written when an executor takes the run. With `restarted` true an earlier executor
    died mid-run: discard the partial answer and sources shown so far; the new attempt's
    events follow."""

    TYPE = EventType.STARTED
    attempt: int = Field(description="1 for the first attempt, counted up on each restart.")
    restarted: bool = Field(description="Whether an earlier attempt died mid-run.")


class RetrievalCompleted(RunEvent):
    """Written after the search: the numbered passages handed to the generator."""

    TYPE = EventType.RETRIEVAL
    build_id: str | None = Field(description="The index build that answered.")
    sources: list[Source] = Field(description="The passages; `number` is the `[n]` cited.")
    degraded: list[Degradation] = Field(description="Retrieval stages that were skipped.")
    timings_ms: dict[str, float] = Field(
        description="The gateway's `retrieve` time and the retriever's per-stage times."
    )
    # Last, and only when set: a question asked as it is keeps the bytes it had.
    query: str | None = Field(
        default=None,
        description="For a rewritten follow-up only: the standalone query searched for.",
    )

    def data(self) -> str:
        fields = self.model_dump(mode="json")
        if fields["query"] is None:
            del fields["query"]
        return json.dumps(fields)


class AnswerDelta(RunEvent):
    """One piece of the answer text."""

    TYPE = EventType.DELTA
    text: str = Field(description="The piece of text.")
    index: int = Field(description="0-based position of the piece since the last reset.")
    redacted: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Only when a cited document was deleted (`document_deleted`) or revoked "
        "(`access_changed`) after the run: `text` is then empty.",
    )


class AnswerReset(RunEvent):
    """Voids every `answer.delta` before it; the deltas that follow start again at 0."""

    TYPE = EventType.RESET
    reason: str = Field(description="Why the streaming answer was replaced.")


class AnswerCompleted(RunEvent):
    """The whole answer, its citations and the grounding verdict."""

    TYPE = EventType.ANSWER
    answer: str | None = Field(description="The answer text.")
    citations: list[Citation] = Field(description="The cited passages.")
    refused: bool | None = Field(description="Whether the answer was refused.")
    refusal_reason: str | None = Field(
        description="`no_evidence`, `weak_evidence` or `model_abstained` when refused."
    )
    refusal_detail: str | None = Field(description="The refusal in words.")
    verdict: str | None = Field(description="`grounded` or `refused`.")
    evidence_score: float | None = Field(
        description="The best sentence support, compared with the refusal threshold."
    )
    model: str | None = Field(description="The model that wrote the answer.")
    prompt_version: str | None = Field(description="Its prompt or policy version.")
    degraded: list[Degradation] = Field(description="The generator's degradations.")
    redacted: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Only when a cited document was deleted (`document_deleted`) or revoked "
        "(`access_changed`) after the run: `answer` is then empty.",
    )


class RunCompleted(RunEvent):
    """Ends a successful run."""

    TYPE = EventType.COMPLETED
    status: Literal["succeeded"] = Field(default="succeeded", description="Always `succeeded`.")
    timings_ms: dict[str, float] = Field(description="Stage times, with the `total`.")


class RunFailed(RunEvent):
    """Ends a failed run. The codes: `retriever_timeout`, `retriever_unavailable`,
    `retriever_error`, `generator_timeout`, `generator_unavailable`, `generator_error`,
    `generator_incomplete`, `too_many_attempts`."""

    TYPE = EventType.FAILED
    status: Literal["failed"] = Field(default="failed", description="Always `failed`.")
    error: ErrorInfo = Field(description="The failure's `code` and `message`.")


class RunCancelled(RunEvent):
    """Ends a cancelled run, after a `POST /v1/runs/{id}/cancel`."""

    TYPE = EventType.CANCELLED
    status: Literal["cancelled"] = Field(default="cancelled", description="Always `cancelled`.")


class StreamClosing(RunEvent):
    """Sent, never stored, when the serving replica stops: it has no id, so the client's
    Last-Event-ID stays on the last real event, and `retry: 1000`; reconnect and replay."""

    TYPE = EventType.CLOSING
    reason: str = Field(description="Why the stream closes.")
    last_event_id: str = Field(description="The last event id this stream sent.")


EVENTS: tuple[type[RunEvent], ...] = (
    RunAcceptedEvent,
    RunStarted,
    RetrievalCompleted,
    AnswerDelta,
    AnswerReset,
    AnswerCompleted,
    RunCompleted,
    RunFailed,
    RunCancelled,
    StreamClosing,
)
_BY_TYPE: dict[str, type[RunEvent]] = {model.TYPE.value: model for model in EVENTS}


def parse_event(type_: str, data: str) -> RunEvent:
    """The model of one event as sent or stored; raises ValueError (pydantic's
    ValidationError among them) for an unknown type or data that does not fit."""
    model = _BY_TYPE.get(type_)
    if model is None:
        raise ValueError(f"unknown event type {type_!r}")
    return model.model_validate_json(data)


def reference_markdown() -> str:
    """The event reference in docs/streaming.md, one section per event type."""
    parts: list[str] = []
    for model in EVENTS:
        doc = " ".join((model.__doc__ or "").split())
        parts.append(f"### `{model.TYPE.value}`\n\n{doc}\n")
        rows = ["| Field | Type | Meaning |", "| --- | --- | --- |"]
        for name, info in model.model_fields.items():
            rows.append(
                f"| `{name}` | `{_type_name(info.annotation)}` | {info.description or ''} |"
            )
        parts.append("\n".join(rows) + "\n")
    return "\n".join(parts)


def _type_name(annotation: Any) -> str:
    if get_origin(annotation) is Literal:
        return " | ".join(json.dumps(value) for value in get_args(annotation))
    name = getattr(annotation, "__name__", None)
    text = str(annotation) if name is None or getattr(annotation, "__args__", None) else name
    for prefix in ("services.gateway.runs.models.", "typing."):
        text = text.replace(prefix, "")
    return text.replace("NoneType", "None").replace("|", "\\|")
