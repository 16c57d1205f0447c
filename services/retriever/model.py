"""The retriever's domain types: what is indexed, who may see it, what a search returns."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from ragway.reranker_artifact import passage_text

# Open-ended effective windows are stored as this instant so that both engines
# can express "effective_to > as_of" as one range condition.
OPEN_END = 2**62


class Status(StrEnum):
    CURRENT = "current"
    DEPRECATED = "deprecated"
    DRAFT = "draft"


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    chunk_id: str
    document_id: str
    tenant: str
    access_groups: tuple[str, ...]
    status: Status
    effective_from: int  # unix seconds; 0 = always
    effective_to: int  # unix seconds; OPEN_END = open-ended
    version: str
    url: str
    title: str
    section: str
    text: str
    # The answer units' vectors (ragway/unit_vectors.py), computed at write time and
    # kept by the dense engines; empty where none were stored. Not part of a
    # chunk's identity: a record read back from the sparse index has none.
    unit_vectors: bytes = field(default=b"", repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("chunk_id", "document_id", "tenant"):
            if not getattr(self, name):
                raise ValueError(f"chunk field {name!r} must not be empty")
        if not self.access_groups:
            raise ValueError(f"chunk {self.chunk_id!r} has no access groups; nobody could see it")
        if not self.text.strip():
            raise ValueError(f"chunk {self.chunk_id!r} has empty text")
        if self.effective_to <= self.effective_from:
            raise ValueError(
                f"chunk {self.chunk_id!r}: effective_to ({self.effective_to}) must be after "
                f"effective_from ({self.effective_from})"
            )

    @property
    def embedding_text(self) -> str:
        """What the dense model sees: the heading context helps short chunks."""
        return passage_text(self.title, self.text, self.section)


@dataclass(frozen=True, slots=True)
class AccessScope:
    """Who is asking. Applied inside every search, never to results afterwards."""

    tenant: str
    groups: frozenset[str]
    as_of: int = field(default_factory=lambda: int(time.time()))

    def __post_init__(self) -> None:
        if not self.tenant:
            raise ValueError("access scope needs a tenant")
        if not self.groups:
            raise ValueError("access scope needs at least one access group")

    def admits(self, chunk: ChunkRecord) -> bool:
        """The same rule the engines evaluate, for tests and audits."""
        return (
            chunk.tenant == self.tenant
            and bool(self.groups.intersection(chunk.access_groups))
            and chunk.status is Status.CURRENT
            and chunk.effective_from <= self.as_of < chunk.effective_to
        )


@dataclass(frozen=True, slots=True)
class Candidate:
    """One retriever's hit: the chunk, its raw score and its 1-based rank."""

    chunk: ChunkRecord
    score: float
    rank: int


def by_tenant(documents: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """(tenant, document id) pairs as each tenant's document ids: a write that swaps
    documents deletes per tenant, since document ids may repeat across tenants."""
    out: dict[str, list[str]] = {}
    for tenant, document_id in documents:
        out.setdefault(tenant, []).append(document_id)
    return out
