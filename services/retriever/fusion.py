"""Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, SIGIR 2009).

score(d) = Σ_r 1 / (k + rank_r(d)) over the retrievers r that returned d.
Ranks, not raw scores, are fused, so BM25 and cosine need no calibration.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ragway.unit_vectors import stored_vectors
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
            entry.chunk = _with_vectors(entry.chunk, c.chunk)
            entry.fused += 1.0 / (k + c.rank)
            entry.by_retriever[name] = (c.rank, c.score)
    # Ties (equal fused score) break on the best single rank, then chunk id,
    # so the order is deterministic across runs and backends.
    return sorted(
        fused.values(),
        key=lambda f: (-f.fused, min(r for r, _ in f.by_retriever.values()), f.chunk.chunk_id),
    )


def _with_vectors(known: ChunkRecord, other: ChunkRecord) -> ChunkRecord:
    """Of two records of one chunk, the one that carries the unit vectors: the dense
    engine's (the sparse indexes store none), which the generator and unit_ranking read."""
    return other if other.unit_vectors and not known.unit_vectors else known


def unit_ranking(
    lists: Mapping[str, Sequence[Candidate]],
    vector: npt.NDArray[np.float32],
    decoded: dict[str, npt.NDArray[np.float32]] | None = None,
) -> list[Candidate]:
    """The candidates of ``lists`` ranked by their best answer unit's cosine to the query.

    A chunk's vector averages all its sentences, so a question that one sentence
    answers (in other words than the page's) can rank the chunk below a neighbour
    that is about the topic as a whole; its best unit, embedded on its own with
    its heading, meets the question directly. The units' vectors are the ones
    stored at write time (ragway/unit_vectors.py): no model runs here. A chunk
    without stored vectors (too many units, or only the sparse engine's record)
    is not in this list; fusion still has its other ranks.

    ``decoded``: the chunks' vectors already read in this search, by chunk id, filled
    here, so a multi-part question reads each blob once.
    """
    records: dict[str, ChunkRecord] = {}
    for candidates in lists.values():
        for c in candidates:
            known = records.get(c.chunk.chunk_id)
            records[c.chunk.chunk_id] = c.chunk if known is None else _with_vectors(known, c.chunk)
    cache = {} if decoded is None else decoded
    best: list[tuple[float, ChunkRecord]] = []
    dim = int(vector.shape[0])
    for chunk in records.values():
        units = cache.get(chunk.chunk_id)
        if units is None:
            units = stored_vectors(chunk.unit_vectors, dim)
            if units is None or not len(units):
                continue
            cache[chunk.chunk_id] = units
        best.append((float(np.max(units @ vector)), chunk))
    best.sort(key=lambda x: (-x[0], x[1].chunk_id))
    return [Candidate(chunk=c, score=s, rank=r) for r, (s, c) in enumerate(best, start=1)]
