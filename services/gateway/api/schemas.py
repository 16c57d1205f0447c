"""The HTTP bodies of /v1: what a client sends and what the routes answer.

The run record (GET /v1/runs/{id}) and its parts are the run's own types, in
services/gateway/runs/models.py.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field, StringConstraints

from ragway.text import plain_quotes
from services.gateway.runs.feedback import MAX_COMMENT_CHARS, FeedbackRecord
from services.gateway.runs.models import (
    Citation,
    Degradation,
    ErrorInfo,
    Rating,
    RunStatus,
    Source,
)
from services.gateway.runs.submit import Ask

# Control characters other than tab and line breaks are no part of a question a person
# typed: a NUL or an escape code is a client's bug, and it would reach the run record,
# the search engines and the answer's echo. Refused with the character named.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _without_control_characters(text: str) -> str:
    if bad := _CONTROL.search(text):
        raise ValueError(
            f"contains the control character U+{ord(bad[0]):04X}; send the question as plain text"
        )
    return text


Question = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1),
    AfterValidator(_without_control_characters),
    # Searched and answered with ASCII quotes: "What\u2019s" reads as "What's" does.
    AfterValidator(plain_quotes),
]


class RunRequest(BaseModel):
    """A question for the knowledge base."""

    model_config = {"extra": "forbid"}

    question: Question = Field(
        description="The user's question.", examples=["How do I resume a stream?"]
    )
    top_k: int | None = Field(
        default=None, ge=1, le=20, description="Passages given to the generator (default 6)."
    )
    mode: Literal["hybrid", "sparse", "dense"] = Field(
        default="hybrid", description="Retrieval mode."
    )
    user_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=128,
        description="Your end user's stable id: a canary keeps each user on one path "
        "(default: the API key).",
    )
    channel: str | None = Field(
        default=None,
        pattern=r"^[a-z][a-z0-9_-]{0,31}$",
        description="The client that asked, recorded on the run (e.g. `telegram`, `console`).",
        examples=["telegram"],
    )
    conversation_id: str | None = Field(
        default=None,
        description="Continue this conversation: the question is a follow-up, rewritten "
        "into a standalone query from the earlier turns. Omitted: a new conversation, "
        "whose id the response returns.",
        examples=["conv_0f8c2b1e9d4a4c5e8b7a6d5c4b3a2f10"],
    )

    def ask(self) -> Ask:
        """The request in the run logic's terms."""
        return Ask(
            question=self.question,
            top_k=self.top_k,
            mode=self.mode,
            user_id=self.user_id,
            channel=self.channel,
            conversation_id=self.conversation_id,
        )


class RunAccepted(BaseModel):
    run_id: str
    status: RunStatus
    created_at_ms: int
    run_url: str
    events_url: str
    conversation_id: str | None = Field(
        default=None, description="The conversation the run is a turn of."
    )


class CancelAccepted(BaseModel):
    run_id: str
    status: RunStatus = Field(description="The run's status when the cancel was requested.")
    cancel_requested: bool = True


class AskResponse(BaseModel):
    run_id: str
    answer: str
    citations: list[Citation]
    refused: bool
    reason: str | None = Field(description="Why the answer was refused, when it was.")
    sources: list[Source]
    build_id: str | None
    timings_ms: dict[str, float]
    degraded: list[Degradation]
    conversation_id: str | None = Field(
        default=None, description="The conversation: send it with the next question."
    )
    rewritten_query: str | None = Field(
        default=None, description="For a follow-up: the standalone query searched for."
    )


class FeedbackRequest(BaseModel):
    """Thumbs up or down on a run's answer, with an optional comment."""

    model_config = {"extra": "forbid"}

    rating: Rating = Field(description="`up`: the answer helped; `down`: it did not.")
    comment: Annotated[
        str | None, StringConstraints(strip_whitespace=True, max_length=MAX_COMMENT_CHARS)
    ] = Field(default=None, description=f"Why, in at most {MAX_COMMENT_CHARS} characters.")


class FeedbackAccepted(BaseModel):
    run_id: str
    rating: Rating
    comment: str | None
    at_ms: int
    replaced: bool = Field(description="Earlier feedback on the run was replaced by this one.")


class FeedbackPage(BaseModel):
    items: list[FeedbackRecord] = Field(description="Oldest first.")
    next_cursor: str | None = Field(
        description="Pass as `after` for the next page; null: this was the last one."
    )


class ErrorBody(BaseModel):
    error: ErrorInfo
