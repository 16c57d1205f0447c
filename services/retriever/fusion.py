"""Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, SIGIR 2009).

score(d) = Σ_r 1 / (k + rank_r(d)) over the retrievers r that returned d.
Ranks, not raw scores, are fused, so BM25 and cosine need no calibration.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from services.retriever.model import Candidate, ChunkRecord

DEFAULT_K = 60


@dataclass(slots=True)
class Fused:
    chunk: ChunkRecord
    fused: float = 0.0
    # retriever name -> (rank, raw score)
    by_retriever: dict[str, tuple[int, float]] = field(default_factory=dict)


def reciprocal_rank_fusion(
    ranked_lists: Mapping[str, Sequence[Candidate]], *, k: int = DEFAULT_K
) -> list[Fused]:
    if k < 1:
        raise ValueError(f"RRF k must be >= 1, got {k}")
    fused: dict[str, Fused] = {}
    for name, candidates in ranked_lists.items():
        for c in candidates:
            entry = fused.setdefault(c.chunk.chunk_id, Fused(chunk=c.chunk))
            if c.chunk.unit_vectors and not entry.chunk.unit_vectors:
                entry.chunk = c.chunk  # the dense engine's record carries the unit vectors
            entry.fused += 1.0 / (k + c.rank)
            entry.by_retriever[name] = (c.rank, c.score)
    # Ties (equal fused score) break on the best single rank, then chunk id,
    # so the order is deterministic across runs and backends.
    return sorted(
        fused.values(),
        key=lambda f: (-f.fused, min(r for r, _ in f.by_retriever.values()), f.chunk.chunk_id),
    )
