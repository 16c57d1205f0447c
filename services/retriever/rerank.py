"""The rerank stage: a cross-encoder scores (query, passage) pairs.

No package ships cross-encoder weights, so ragway trains its own
(``ragway train reranker``, see ``ragway_tools/training/reranker.py``) into a
versioned artifact folder, and the retriever loads it by path
(``RAGWAY_RERANKER_PATH``). Without one the fused order stands. Two runtimes:

- ``OnnxCrossEncoderReranker``: the artifact's int8 ONNX network on
  onnxruntime, the default (≈3.5x faster than fp32 torch on two cores, which
  is what lets the reranker fit the retrieval budget);
- ``CrossEncoderReranker``: any sentence-transformers CrossEncoder folder
  (fp32 torch), for models an operator brings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from ragway.embedding import cpu_session, int8_pays
from ragway.reranker_artifact import (
    ARTIFACT_FORMAT,
    PairEncoder,
    encode,
    encode_by_length,
    load_tokenizer,
)

# The artifact's two networks: int8 (dynamically quantised, the default) or fp32.
Precision = Literal["int8", "fp32"]
# RetrieverSettings.rerank_precision: one of them, or auto (chosen by the CPU).
PrecisionSetting = Literal["auto", "int8", "fp32"]


def resolve_precision(setting: PrecisionSetting, flags: frozenset[str] | None) -> Precision:
    """The network to run: auto is int8 only on a CPU where it pays (``int8_pays``)."""
    if setting == "auto":
        return "int8" if int8_pays(flags) else "fp32"
    return setting


# Which part of a long passage the cross-encoder reads: its head (as trained) or
# the span of the input length that holds most of the query's words.
Window = Literal["head", "best"]


class Reranker(Protocol):
    model_id: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


class RerankerLoadError(ValueError):
    """A reranker path that is not a usable model folder, with the reason."""


class OnnxCrossEncoderReranker:
    """A ragway reranker artifact served from its int8 ONNX network."""

    def __init__(
        self,
        artifact: Path,
        *,
        max_length: int | None = None,
        threads: int = 1,
        int8: bool = True,
        batch_size: int = 1,
        clip: bool = True,
        cache_size: int = 4096,
        window: Window = "head",
    ) -> None:
        meta = json.loads((artifact / "artifact.json").read_text())
        if meta.get("format") != ARTIFACT_FORMAT:
            raise RerankerLoadError(
                f"{artifact}: artifact format {meta.get('format')!r}, expected {ARTIFACT_FORMAT!r}"
            )
        network = artifact / "onnx" / ("model_int8.onnx" if int8 else "model.onnx")
        if not network.is_file():
            raise RerankerLoadError(f"{artifact}: {network.relative_to(artifact)} is missing")
        self._session = cpu_session(network, threads)
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.max_length = int(max_length or meta["max_length"])
        self._tokenizer = load_tokenizer(artifact / "model", self.max_length)
        self.model_id = str(meta["version"]) + ("" if int8 else "-fp32")
        self.meta: dict[str, Any] = meta  # version, tenant, created: read by the shelf
        self.batch_size = batch_size
        # Off only to measure what clipping saves (``ragway eval rerank-bench``):
        # then every pair goes through the tokenizer whole, uncached.
        self.clip = clip
        self.encoder = PairEncoder(
            self._tokenizer, self.max_length, cache_size=cache_size, window=window
        )

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Pairs sorted by length and run in batches of ``batch_size`` (0: one padded batch)."""
        if not passages:
            return []
        scores = [0.0] * len(passages)
        for idx, arrays in self.batches(query, passages):
            for i, x in zip(idx, self.run(arrays), strict=True):
                scores[i] = float(x)
        return scores

    def batches(
        self, query: str, passages: Sequence[str]
    ) -> list[tuple[list[int], dict[str, Any]]]:
        """The tokenised batches ``score`` runs: (passage indices, model inputs) each."""
        if self.clip:
            return self.encoder.batches(query, passages, self.batch_size)
        pairs = [(query, p) for p in passages]
        if self.batch_size <= 0:
            return [(list(range(len(pairs))), encode(self._tokenizer, pairs))]
        return encode_by_length(self._tokenizer, pairs, self.batch_size)

    def run(self, arrays: dict[str, Any]) -> list[float]:
        """One session run over one batch: a logit per row."""
        feeds: dict[str, Any] = {k: v for k, v in arrays.items() if k in self._inputs}
        (logits,) = self._session.run(["logits"], feeds)
        return [float(x) for x in logits.reshape(-1)]


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder loaded from a local folder (fp32 torch)."""

    def __init__(self, path: Path, *, max_length: int = 256, threads: int = 1) -> None:
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


def load_reranker(
    path: Path,
    *,
    max_length: int | None = None,
    threads: int = 1,
    batch_size: int = 1,
    precision: Precision = "int8",
    window: Window = "head",
) -> Reranker:
    """A ragway artifact (has ``artifact.json``) or a sentence-transformers CrossEncoder folder.

    ``precision`` picks the artifact's network; a CrossEncoder folder is fp32 torch either way.
    """
    if not path.is_dir():
        raise RerankerLoadError(f"reranker model folder not found: {path}")
    if (path / "artifact.json").is_file():
        return OnnxCrossEncoderReranker(
            path,
            max_length=max_length,
            threads=threads,
            batch_size=batch_size,
            int8=precision == "int8",
            window=window,
        )
    if (path / "config.json").is_file():
        return CrossEncoderReranker(path, max_length=max_length or 256, threads=threads)
    raise RerankerLoadError(
        f"{path}: neither a ragway reranker artifact (artifact.json) "
        "nor a CrossEncoder folder (config.json)"
    )
