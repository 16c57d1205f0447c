"""The role an LLM plays for the grounded generator: stream a chat completion.

``LLMGenerator`` (backends/llm.py) owns the prompt, the budgets, the checks and
the fallback; a ``ChatModel`` only turns messages into text pieces, over HTTP
(an OpenAI-compatible endpoint) or in-process (llama.cpp).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Protocol

from services.generator.backends.base import Usage

Messages = list[dict[str, str]]


@dataclass(frozen=True, slots=True)
class ChatChunk:
    text: str
    finish_reason: str | None = None  # "stop", "length", … on the last chunk
    # The provider's token counts, on a chunk of their own after the last text
    # (OpenAI's ``stream_options.include_usage``); a chunk with usage has no text.
    usage: Usage | None = None


class LLMError(Exception):
    """The model could not answer: refused request, retries spent, bad stream."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ChatModel(Protocol):
    model: str  # the name stored in run records

    def stream(
        self,
        messages: Messages,
        *,
        max_tokens: int,
        retry_until: float,
        on_retry: Callable[[str], None],
    ) -> AsyncGenerator[ChatChunk, None]:
        """Text pieces of the reply (never empty ones), ending after a ``finish_reason``
        and, when the model reports it, a chunk carrying only ``usage``.

        ``retry_until`` (``time.monotonic()``) bounds retries: no backoff sleep
        may end after it. ``on_retry`` hears a sentence about each retry.
        Closing the iterator stops the model's work. Raises ``LLMError``.
        """
        ...
