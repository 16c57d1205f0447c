"""The rerank stage: a cross-encoder scores (query, passage) pairs.

No package ships cross-encoder weights, so the default retriever runs without
one (the fused order stands). An operator points ``RAGWAY_RERANKER_PATH`` at a
sentence-transformers CrossEncoder folder, such as one fine-tuned from the
packaged MiniLM encoder.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol


class Reranker(Protocol):
    model_id: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder loaded from a local folder."""

    def __init__(self, path: Path, *, max_length: int = 256, threads: int = 1) -> None:
        if not path.is_dir():
            raise FileNotFoundError(f"reranker model folder not found: {path}")
        import torch  # deferred: torch costs seconds to import
        from sentence_transformers import CrossEncoder

        torch.set_num_threads(threads)
        self._model = CrossEncoder(
            str(path), max_length=max_length, device="cpu", local_files_only=True
        )
        self.model_id = path.name

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        scores = self._model.predict([(query, p) for p in passages], show_progress_bar=False)
        return [float(s) for s in scores]
