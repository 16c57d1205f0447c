"""Streaming chat completions from any OpenAI-compatible endpoint.

OpenAI itself, vLLM, Ollama, llama.cpp's server: ``POST {base_url}/chat/completions``
with ``stream: true``, answered by Server-Sent Events whose ``data:`` lines carry
``choices[0].delta.content`` and end with ``data: [DONE]``.

Retries are bounded and happen only before the first piece of text: connection
errors and HTTP 429/500/502/503/504, with exponential backoff (jittered) or the
server's ``Retry-After`` when it sends one. A wait that would end after
``retry_until`` is not started: the caller falls back instead. Closing the
iterator closes the HTTP response, which is how an OpenAI-compatible server
learns that the client went away.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from services.generator.backends.base import Usage
from services.generator.backends.chat import ChatChunk, LLMError, Messages

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_RETRY_ERRORS = (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError)


@dataclass(frozen=True, slots=True)
class OpenAIConfig:
    base_url: str  # e.g. "http://127.0.0.1:8080/v1"
    model: str
    api_key: str | None = None
    connect_timeout_s: float = 2.0
    # Bound on one read of the stream; the first-token and total budgets are
    # enforced by the caller.
    read_timeout_s: float = 30.0
    attempts: int = 3
    backoff_s: float = 0.25
    max_backoff_s: float = 4.0
    temperature: float = 0.0
    seed: int | None = None
    # Sent only when set: llama.cpp's server and vLLM accept it, OpenAI does not.
    repeat_penalty: float | None = None
    stop: tuple[str, ...] = ()
    # Further request fields for a particular server (e.g. vLLM's top_k), sent as given.
    extra_body: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {self.base_url!r}")
        if not self.model:
            raise ValueError("model must not be empty")
        if self.attempts < 1:
            raise ValueError(f"attempts must be >= 1, got {self.attempts}")


class OpenAIChatModel:
    def __init__(self, config: OpenAIConfig, client: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self.model = config.model
        headers = {"Accept": "text/event-stream"}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        self._client = client or httpx.AsyncClient(
            base_url=config.base_url.rstrip("/") + "/",
            headers=headers,
            timeout=httpx.Timeout(
                connect=config.connect_timeout_s,
                read=config.read_timeout_s,
                write=config.connect_timeout_s,
                pool=config.connect_timeout_s,
            ),
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    def body(self, messages: Messages, max_tokens: int) -> dict[str, Any]:
        c = self.config
        body: dict[str, Any] = {
            "model": c.model,
            "messages": messages,
            "stream": True,
            "max_tokens": max_tokens,
            "temperature": c.temperature,
            # Ask for the token counts in a last chunk (OpenAI, vLLM, Ollama honour it;
            # llama.cpp's server ignores it): the inference span and the token-usage
            # histogram report them. extra_body may override it.
            "stream_options": {"include_usage": True},
        }
        if c.seed is not None:
            body["seed"] = c.seed
        if c.repeat_penalty is not None:
            body["repeat_penalty"] = c.repeat_penalty
        if c.stop:
            body["stop"] = list(c.stop)
        return {**body, **c.extra_body}

    async def stream(
        self,
        messages: Messages,
        *,
        max_tokens: int,
        retry_until: float,
        on_retry: Callable[[str], None],
    ) -> AsyncGenerator[ChatChunk, None]:
        body = self.body(messages, max_tokens)
        attempts = self.config.attempts
        started = False
        for attempt in range(1, attempts + 1):
            problem: str
            wait: float | None = None
            try:
                async with self._client.stream("POST", "chat/completions", json=body) as response:
                    if response.status_code == 200:
                        async for chunk in _chunks(response):
                            started = True
                            yield chunk
                        return
                    detail = (await response.aread())[:300].decode(errors="replace")
                    # The endpoint's body and address are for the logs: an LLMError's
                    # message goes out to the user in the answer's degraded notes.
                    self._log_upstream("LLM endpoint answered an error", detail, response)
                    if response.status_code not in RETRY_STATUS:
                        raise LLMError(
                            "llm_rejected", f"HTTP {response.status_code} from the LLM endpoint"
                        )
                    problem = f"HTTP {response.status_code}"
                    wait = _retry_after(response.headers.get("retry-after"))
            except _RETRY_ERRORS as exc:
                self._log_upstream("LLM endpoint connection failed", str(exc))
                if started:  # text already went out: a retry would repeat it
                    raise LLMError("llm_error", f"the stream broke ({type(exc).__name__})") from exc
                problem = type(exc).__name__
            except httpx.TimeoutException as exc:
                raise LLMError("llm_timeout", f"{type(exc).__name__} from the endpoint") from exc
            except httpx.HTTPError as exc:
                self._log_upstream("LLM endpoint call failed", str(exc))
                raise LLMError("llm_error", f"{type(exc).__name__} from the endpoint") from exc
            if attempt == attempts:
                raise LLMError("llm_unavailable", f"{problem} after {attempts} attempts")
            hint = "Retry-After" if wait is not None else "backoff"
            if wait is None:
                base = min(self.config.max_backoff_s, self.config.backoff_s * 2 ** (attempt - 1))
                wait = base * random.uniform(0.5, 1.0)
            if time.monotonic() + wait > retry_until:
                raise LLMError(
                    "llm_unavailable",
                    f"{problem}; the next attempt ({hint} {wait:.1f} s) would miss the "
                    "first-token budget",
                )
            on_retry(f"{problem}; attempt {attempt + 1} of {attempts} after {wait:.1f} s ({hint})")
            log.info("retrying the LLM endpoint", extra={"problem": problem, "wait_s": wait})
            await asyncio.sleep(wait)

    def _log_upstream(
        self, message: str, detail: str, response: httpx.Response | None = None
    ) -> None:
        log.warning(
            message,
            extra={
                "base_url": self.config.base_url,
                "status": None if response is None else response.status_code,
                "upstream_detail": detail,
            },
        )


async def _chunks(response: httpx.Response) -> AsyncGenerator[ChatChunk, None]:
    async for line in response.aiter_lines():
        if not line.startswith("data:"):
            continue  # blank separators, comments, "event:" lines
        data = line[5:].strip()
        if data == "[DONE]":
            return
        try:
            event = json.loads(data)
            choice = event["choices"][0] if event.get("choices") else {}
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            log.warning("unreadable LLM stream event", extra={"upstream_detail": data[:300]})
            raise LLMError("llm_bad_stream", "an unreadable stream event") from exc
        if "error" in event:
            detail = str(event["error"])[:300]
            log.warning("LLM stream reported an error", extra={"upstream_detail": detail})
            raise LLMError("llm_error", "the endpoint reported an error in the stream")
        text = (choice.get("delta") or {}).get("content") or ""
        finish = choice.get("finish_reason")
        if text or finish:
            yield ChatChunk(text=text, finish_reason=finish)
        usage = _usage(event.get("usage"))
        if usage is not None:
            yield ChatChunk(text="", usage=usage)


def _usage(value: object) -> Usage | None:
    """The provider's ``usage`` object as token counts; None when absent or malformed."""
    if not isinstance(value, dict):
        return None
    prompt, completion = value.get("prompt_tokens"), value.get("completion_tokens")
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None
    if isinstance(prompt, bool) or isinstance(completion, bool) or min(prompt, completion) < 0:
        return None
    return Usage(input_tokens=prompt, output_tokens=completion)


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.replace(".", "", 1).isdigit():
        return max(0.0, float(value))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
