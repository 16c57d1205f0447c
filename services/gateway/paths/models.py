"""Paths (release units) and the canary state, as they are stored in Redis.

A path is a named, versioned configuration of what serves a run: the knowledge
build, retriever options, the generator options a GenerateRequest can carry,
and a prompt label. Every field left unset keeps the gateway's default, so the
built-in ``baseline`` (version 0, nothing set) serves exactly as the gateway
did before paths existed.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field, model_validator

BASELINE = "baseline"
CANDIDATE = "candidate"
PATH_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")


class PathOptions(BaseModel):
    """What an operator sets (``PUT /v1/admin/paths/{name}``); unset = gateway default."""

    # Numbers strictly (strict=True on each): lax pydantic read `false` as 0.0 and "5"
    # as 5, so a body the spec calls invalid was stored as a path.
    model_config = {"extra": "forbid"}

    build: str = Field(
        default="",
        max_length=128,
        description="Knowledge build id or alias; empty = the retriever's `live`.",
    )
    mode: Literal["hybrid", "sparse", "dense"] | None = Field(
        default=None, description="Retrieval mode; unset = the request's mode."
    )
    top_k: int | None = Field(
        default=None, strict=True, ge=1, le=20, description="Passages given to the generator."
    )
    candidate_depth: int | None = Field(
        default=None,
        strict=True,
        ge=1,
        le=1000,
        description="Candidates per retriever before fusion.",
    )
    rerank: Literal["default", "on", "off"] = Field(
        default="default", description="Cross-encoder rerank: the retriever's default, on, off."
    )
    reranker: str = Field(
        default="",
        max_length=128,
        pattern=r"^$|^[A-Za-z0-9][A-Za-z0-9._-]*$",
        description="A reranker artifact by version, one the retriever offers "
        "(`GET /v1/admin/rerankers`), in place of its default: how a canary tries a new "
        "artifact. One adapted on a tenant's documents reranks only that tenant's runs; "
        "the others keep their default. Empty = the retriever's default.",
    )
    rerank_weight: float | None = Field(
        default=None,
        strict=True,
        ge=0,
        le=1,
        description="The reranker's share of each reranked hit's final score: 1 = its own "
        "order, 0 = the fused order; between, both are scaled to 0-1 and blended. Fit it for "
        "an artifact with `ragway eval qa-retrieval --fit-weight`. A tenant that keeps its "
        "default because `reranker` was adapted on another tenant keeps the retriever's "
        "weight too. Unset = the retriever's (RAGWAY_RERANK_WEIGHT).",
    )
    rerank_skip_margin: float | None = Field(
        default=None,
        strict=True,
        ge=-1,
        le=1,
        description="Skip the default rerank when the fused first passage leads the second "
        "by at least this RRF margin (rerank `on` always reranks). Fit it for an artifact "
        "with `ragway eval qa-retrieval --fit-skip`. Not applied where the weight is not "
        "(`rerank_weight`). Unset = the retriever's (RAGWAY_RERANK_SKIP_MARGIN).",
    )
    max_output_tokens: int | None = Field(
        default=None,
        strict=True,
        ge=1,
        le=8192,
        description="Generator output bound; unset = backend's.",
    )
    min_support: float | None = Field(
        default=None,
        strict=True,
        ge=0,
        le=1,
        description="Refusal threshold: evidence support under it is a refusal; unset = "
        "the generator's own (RAGWAY_MIN_SUPPORT).",
    )
    generator_backend: Literal["", "extractive", "openai", "llama"] = Field(
        default="",
        description="The generator backend this path expects; sent with each generate "
        "request, and a generator serving another refuses it (the run fails). Empty = any.",
    )
    generator_model: str = Field(
        default="",
        max_length=128,
        description="The generator model this path expects (as the generator names it, "
        "e.g. `extractive-v2`); empty = any.",
    )
    prompt_label: str = Field(
        default="",
        max_length=64,
        description="The prompt version this path is meant to run (a label in the record: "
        "the generator's own prompt version is recorded beside it).",
    )
    note: str = Field(default="", max_length=500, description="Why this version exists.")

    @model_validator(mode="after")
    def _reranker_reranks(self) -> PathOptions:
        if self.reranker and self.rerank == "off":
            raise ValueError(f"reranker {self.reranker!r} is named with rerank off; drop one")
        given = [
            name
            for name in ("rerank_weight", "rerank_skip_margin")
            if getattr(self, name) is not None
        ]
        if given and self.rerank == "off":
            raise ValueError(f"{' and '.join(given)} set with rerank off; drop one")
        return self


class RerankerOffer(BaseModel):
    """A reranker artifact the retriever has loaded (its ListRerankers)."""

    version: str = Field(description="What a path's `reranker` names.")
    model_id: str = Field(description="As run records name it (`-fp32` when served fp32).")
    tenant: str = Field(description="The tenant it was adapted on; empty = any tenant.")
    role: Literal["shared", "tenant", "offered"] = Field(
        description="`shared`: every tenant's default without its own; `tenant`: that "
        "tenant's default; `offered`: serves only when a path names it."
    )
    max_length: int = Field(description="Tokens per query-passage pair.")
    created: str = Field(description="When it was trained (ISO 8601).")


class PathConfig(PathOptions):
    """One stored version of a path."""

    model_config = {"extra": "ignore"}

    name: str
    version: int = Field(ge=0)
    build_id: str = Field(
        default="", description="The build the alias named when this version was written."
    )
    updated_at_ms: int = 0


def default_path(name: str = BASELINE) -> PathConfig:
    return PathConfig(name=name, version=0)


class CanaryMode(StrEnum):
    OFF = "off"
    CANARY = "canary"
    SHADOW = "shadow"


class Gates(BaseModel):
    """Guardrails: the candidate against the baseline of the same experiment.

    Each gate is a sequential test (ragway.sequential), re-judged after every
    finished run: ``alpha`` bounds the chance that the experiment is ever
    wrongly rolled back, and the chance that it ever wrongly passes, however
    often the report is read. A metric with fewer than ``min_samples`` runs on
    either side, or whose interval still straddles its limit, is
    ``inconclusive``: never a pass, never a breach.
    """

    model_config = {"extra": "forbid"}

    min_samples: int = Field(default=20, ge=1, le=100_000)
    alpha: float = Field(
        default=0.05,
        gt=0,
        le=0.5,
        description="Error rate of the verdict under continuous monitoring, split evenly "
        "over the gates judged.",
    )
    max_error_rate_increase: float = Field(default=0.05, ge=0, le=1)
    max_refusal_rate_increase: float = Field(default=0.10, ge=0, le=1)
    max_citation_validity_drop: float = Field(default=0.10, ge=0, le=1)
    max_p95_latency_ratio: float = Field(
        default=2.0,
        ge=1,
        description="A run is slow when it takes longer than this times the baseline's p95 "
        "(of its first min_samples runs).",
    )
    max_not_helpful_increase: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Optional gate on user feedback: candidate share of `down` ratings <= "
        "baseline share + this. Unset: feedback is reported, not gated (a gate on it "
        "stays inconclusive, never a pass, until both sides have min_samples ratings).",
    )
    max_latency_exceedance_increase: float = Field(
        default=0.05,
        ge=0,
        le=1,
        description="Candidate share of slow runs <= baseline share + this.",
    )
    min_top_k_overlap: float = Field(
        default=0.5, ge=0, le=1, description="Shadow pairs only: mean overlap of source ids."
    )
    min_answer_agreement: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="Shadow pairs only: share of pairs whose answers agree (same refusal, "
        "cited documents, numbers and negations, term overlap >= min_answer_overlap).",
    )
    min_answer_overlap: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description="Shadow pairs only: term F1 under which two answers disagree.",
    )


MAX_STEPS = 10

StepVerdict = Literal["running", "pass", "breach", "stopped"]


class Step(BaseModel):
    """One step of a stepped canary: its share of users and how it ended."""

    percent: float = Field(ge=0, le=100)
    started_at_ms: int
    ended_at_ms: int | None = None
    verdict: StepVerdict = Field(
        default="running",
        description="running; pass (moved on, or promoted after the last); breach (rolled "
        "back); stopped (ended otherwise: stop, rollback or promote by an operator).",
    )
    baseline_runs: int = Field(default=0, description="Baseline runs the step was judged on.")
    candidate_runs: int = Field(default=0, description="Candidate runs the step was judged on.")


class CanaryState(BaseModel):
    mode: CanaryMode = CanaryMode.OFF
    experiment: str | None = None
    candidate: str = CANDIDATE
    candidate_version: int = 0
    baseline_version: int = 0
    percent: float = Field(default=0, ge=0, le=100)
    # Shadow only: the candidate retrieves and is compared on its ranked sources,
    # with no second generator call.
    retrieval_only: bool = False
    # Paused: everyone is served by the baseline and nothing counts, until resumed.
    paused: bool = False
    gates: Gates = Field(default_factory=Gates)
    started_at_ms: int | None = None
    stopped_at_ms: int | None = None
    stopped_reason: str | None = None
    rolled_back: bool = False
    # A stepped canary (``--steps 5,25,50``): each step is judged on the runs finished
    # since it began; a pass moves to the next step, a pass of the last promotes.
    steps: list[float] = Field(
        default_factory=list, description="The step percentages; empty = no automatic steps."
    )
    step: int = Field(default=0, ge=0, description="Index of the current step in `steps`.")
    step_history: list[Step] = Field(
        default_factory=list, description="Every step so far, oldest first."
    )
