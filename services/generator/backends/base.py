"""The contract every generator backend implements (extractive now; LLMs later)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol


class Verdict(StrEnum):
    GROUNDED = "grounded"
    REFUSED = "refused"


class RefusalReason(StrEnum):
    NO_EVIDENCE = "no_evidence"
    WEAK_EVIDENCE = "weak_evidence"


@dataclass(frozen=True, slots=True)
class Passage:
    number: int
    source_id: str
    document_id: str
    title: str
    section: str
    text: str
    url: str = ""
    retrieval_score: float = 0.0


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    question: str
    passages: Sequence[Passage]
    max_output_tokens: int = 256


@dataclass(frozen=True, slots=True)
class Delta:
    text: str
    index: int


@dataclass(frozen=True, slots=True)
class Final:
    answer: str
    verdict: Verdict
    model: str
    prompt_version: str
    cited_passages: list[int] = field(default_factory=list)
    refusal_reason: RefusalReason | None = None
    refusal_detail: str = ""
    evidence_score: float = 0.0


GenerationEvent = Delta | Final


class GeneratorBackend(Protocol):
    """Streams deltas, then exactly one ``Final``. Must cite passages by number."""

    name: str

    def generate(self, request: GenerationRequest) -> AsyncIterator[GenerationEvent]: ...
