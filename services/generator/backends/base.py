"""The contract every generator backend implements: extractive, OpenAI-compatible, local LLM."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol


class Verdict(StrEnum):
    GROUNDED = "grounded"
    REFUSED = "refused"


class RefusalReason(StrEnum):
    NO_EVIDENCE = "no_evidence"
    WEAK_EVIDENCE = "weak_evidence"
    MODEL_ABSTAINED = "model_abstained"


@dataclass(frozen=True, slots=True)
class Degradation:
    """A check or budget that changed the answer (a dropped citation, a fallback, ...)."""

    code: str
    detail: str


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
    # The units' vectors as the retriever stored them (ragway/unit_vectors.py);
    # empty when it sent none.
    unit_vectors: bytes = field(default=b"", repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    question: str
    passages: Sequence[Passage]
    max_output_tokens: int = 256
    # When the caller stops waiting, as a time.monotonic() value (the gRPC
    # deadline); None: no deadline. LLM backends fit their budgets inside it.
    deadline: float | None = None
    run_id: str = ""
    # The caller's evidence threshold (a path's); None: the backend's configured one.
    min_support: float | None = None
    # Texts of the question the retriever already embedded, with their unit-length
    # float32 vectors, and the model that embedded them (GenerateRequest.
    # question_vectors): a backend that embeds one of these texts with the same
    # model uses the vector instead.
    question_vectors: Mapping[str, Sequence[float]] = field(default_factory=dict)
    embedding_model: str = ""


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one answer took, for the inference span and the token-usage histogram.

    From the provider when an LLM endpoint reports them; the extractive backend
    counts words (``ragway.text.words``) instead, as it has no tokenizer of a model.
    """

    input_tokens: int
    output_tokens: int


@dataclass(frozen=True, slots=True)
class Delta:
    text: str
    index: int


@dataclass(frozen=True, slots=True)
class Reset:
    """The deltas so far are void; the deltas that follow (index from 0) replace them."""

    reason: str


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
    degraded: list[Degradation] = field(default_factory=list)
    # What the model said ended its reply ("stop", "length"); None: no model wrote it.
    finish_reason: str | None = None
    # None: not known (an LLM endpoint that reported no usage, or no model was called).
    usage: Usage | None = None


GenerationEvent = Delta | Reset | Final


class GeneratorBackend(Protocol):
    """Streams deltas (and possibly a ``Reset``), then exactly one ``Final``.

    The answer cites passages as ``[n]``; the ``Final``'s answer equals the
    deltas after the last ``Reset``, joined.
    """

    name: str

    def generate(self, request: GenerationRequest) -> AsyncIterator[GenerationEvent]: ...
