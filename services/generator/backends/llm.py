"""An LLM writes the answer; ragway holds it to the evidence.

    passages ─▶ evidence gate (extractive support) ─ weak ─▶ refusal
                     │ strong enough
                     ▼
    prompt (versioned file) ─▶ ChatModel stream ─▶ SentenceSplitter
                                                      │ each complete sentence
                                                      ▼
                              check: cites a known passage, numbers in it
                               ├─ ok ─────────▶ Delta (streamed)
                               ├─ unknown [n] ─▶ citation removed, recorded
                               ├─ uncited ────▶ attributed to the passage that holds
                               │                its terms, or dropped; recorded
                               └─ bad number ─▶ policy: drop the sentence,
                                                or Reset + extractive answer

Streaming policy: sentences are buffered until checked, so nothing unchecked
reaches the client. The one correction is ``Reset``: under the ``fallback``
number policy an answer that already streamed some sentences is replaced by
the extractive answer from the same evidence.

Budgets, all inside the caller's gRPC deadline less ``fallback_reserve_s``
(time kept for the extractive answer): no text within ``first_token_timeout_s``
→ extractive answer; ``total_timeout_s`` reached → the checked sentences so far
(or the extractive answer if there are none); output bounded by
``max_output_tokens``. Every such event is a ``Degradation`` in the final.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, replace
from enum import StrEnum

from services.generator.backends.base import (
    Degradation,
    Delta,
    Final,
    GenerationEvent,
    GenerationRequest,
    Passage,
    RefusalReason,
    Reset,
    Usage,
    Verdict,
)
from services.generator.backends.chat import ChatChunk, ChatModel, LLMError
from services.generator.backends.extractive import ExtractiveGenerator, ScoredUnit
from services.generator.grounding import SentenceSplitter, attribute, check_sentence
from services.generator.prompts import PromptTemplate

log = logging.getLogger(__name__)


class NumberPolicy(StrEnum):
    DROP_SENTENCE = "drop_sentence"  # withhold the sentence, keep the rest
    FALLBACK = "fallback"  # replace the whole answer with the extractive one


@dataclass(frozen=True, slots=True)
class LLMPolicy:
    first_token_timeout_s: float = 4.0
    total_timeout_s: float = 20.0
    fallback_reserve_s: float = 0.5
    max_output_tokens: int = 256
    max_sentences: int = 4
    max_prompt_passages: int = 3
    number_policy: NumberPolicy = NumberPolicy.FALLBACK
    # Refuse without calling the model when the extractive support is under
    # its threshold: small models do not abstain on their own.
    evidence_gate: bool = True
    # An uncited sentence whose content terms are at least this share of one
    # passage's is attributed to it (and checked); above 1.0: never.
    attribute_coverage: float = 0.8

    def __post_init__(self) -> None:
        for name in ("first_token_timeout_s", "total_timeout_s"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.first_token_timeout_s > self.total_timeout_s:
            raise ValueError(
                f"first_token_timeout_s ({self.first_token_timeout_s}) exceeds "
                f"total_timeout_s ({self.total_timeout_s})"
            )
        if self.max_prompt_passages < 1:
            raise ValueError(f"max_prompt_passages must be >= 1, got {self.max_prompt_passages}")
        if self.max_output_tokens < 1:
            raise ValueError(f"max_output_tokens must be >= 1, got {self.max_output_tokens}")


class _Fallback(Exception):
    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.degradation = Degradation(code, detail)


class LLMGenerator:
    def __init__(
        self,
        model: ChatModel,
        prompt: PromptTemplate,
        extractive: ExtractiveGenerator,
        policy: LLMPolicy | None = None,
    ) -> None:
        self.model = model
        self.prompt = prompt
        self.extractive = extractive
        self.policy = policy or LLMPolicy()
        self.name = model.model

    async def generate(self, request: GenerationRequest) -> AsyncIterator[GenerationEvent]:
        if not request.passages:
            async for event in self.extractive.answer(request, []):
                yield _no_model_usage(event)
            return
        scored = await asyncio.to_thread(
            self.extractive.score,
            request.question,
            request.passages,
            self.extractive.known_vectors(request),
        )
        best = max((s.support for s in scored), default=0.0)
        # The same decision as the extractive answer's: small models do not abstain.
        gate = self.policy.evidence_gate
        if gate and await asyncio.to_thread(self.extractive.refusal, request, scored) is not None:
            async for event in self.extractive.answer(request, scored):
                yield _no_model_usage(event)
            return
        run = _Run(self, request, scored, best)
        async for event in run.events():
            yield event


class _Run:
    """One answer: the model's stream, checked sentence by sentence."""

    def __init__(
        self,
        owner: LLMGenerator,
        request: GenerationRequest,
        scored: list[ScoredUnit],
        best: float,
    ) -> None:
        self.gen = owner
        self.request = request
        self.scored = scored
        self.best = best
        # The passages the model is shown, and so the ones it may cite: those
        # with the best-supported sentences, at most max_prompt_passages of them
        # (prompt evaluation dominates a CPU model's time to first token).
        limit = owner.policy.max_prompt_passages
        ranked = list(dict.fromkeys(s.passage.number for s in scored))[:limit]
        shown = [p for p in request.passages if p.number in ranked] or list(
            request.passages[:limit]
        )
        self.passages: dict[int, Passage] = {p.number: p for p in shown}
        self.notes: list[Degradation] = []
        self.sentences: list[str] = []
        self.cited: list[int] = []
        self.abstained = False
        # The provider's token counts, when its stream reported them.
        self.usage: Usage | None = None

    async def events(self) -> AsyncIterator[GenerationEvent]:
        policy = self.gen.policy
        now = time.monotonic()
        hard = (
            self.request.deadline - policy.fallback_reserve_s
            if self.request.deadline is not None
            else math.inf
        )
        first_by = min(now + policy.first_token_timeout_s, hard)
        end_by = min(now + policy.total_timeout_s, hard)
        # The model reads each passage as its answer units (the same ones the
        # extractive selection scores): a table row with its headers, a step with
        # its lead-in. The checks still compare against the passages themselves.
        shown = [
            replace(p, text=self.gen.extractive.standalone_text(p)) for p in self.passages.values()
        ]
        prompt = self.gen.prompt.render(self.request.question, shown, policy.max_sentences)
        # Withheld twice over: the units of a paragraph that instructs an AI reader are
        # never shown (standalone_text), and a sentence that still addresses the model
        # is redacted from what is (the prompt).
        withheld = Counter(prompt.redacted)
        withheld.update(
            {p.number: n for p in self.passages.values() if (n := self.gen.extractive.withheld(p))}
        )
        for number, count in sorted(withheld.items()):
            self.notes.append(
                Degradation(
                    "passage_instructions_removed",
                    f"{count} sentence(s) of passage [{number}] addressed the model and were "
                    "withheld from it",
                )
            )
        max_tokens = min(self.request.max_output_tokens, policy.max_output_tokens)
        stream = self.gen.model.stream(
            prompt.messages,
            max_tokens=max_tokens,
            retry_until=first_by,
            on_retry=lambda detail: self.notes.append(Degradation("llm_retry", detail)),
        )
        splitter = SentenceSplitter()
        finish: str | None = None
        try:
            if first_by <= now:
                raise _Fallback("llm_no_time", "no time left in the deadline for the model")
            chunk = await self._next(stream, first_by, first=True)
            while chunk is not None:
                finish = chunk.finish_reason or finish
                for sentence in splitter.feed(chunk.text):
                    delta = self._take(sentence)
                    if delta is not None:
                        yield delta
                    if self.abstained:
                        break
                if self.abstained:
                    break
                chunk = await self._next(stream, end_by, first=False)
            else:
                rest = splitter.flush()
                if rest:
                    delta = self._take(rest)
                    if delta is not None:
                        yield delta
        except _Fallback as fb:
            await _close(stream)  # now, not after the fallback: it may hold the model
            async for replacement in self._fallback(fb.degradation):
                yield replacement
            return
        except _TotalTimeout:
            self.notes.append(
                Degradation(
                    "llm_total_timeout",
                    f"the model's answer was cut after {len(self.sentences)} checked "
                    "sentence(s) to stay within the time budget",
                )
            )
        finally:
            await _close(stream)
        if self.abstained and not self.sentences:
            yield self._final_refusal()
            return
        if not self.sentences:
            async for replacement in self._fallback(
                Degradation(
                    "llm_ungrounded",
                    "no sentence of the model's answer passed the checks "
                    "(each must cite a passage and keep its numbers)",
                )
            ):
                yield replacement
            return
        if finish == "length":
            self.notes.append(
                Degradation("llm_max_tokens", f"the answer reached {max_tokens} output tokens")
            )
        yield Final(
            answer="".join(self._pieces()),
            verdict=Verdict.GROUNDED,
            model=self.gen.model.model,
            prompt_version=self.gen.prompt.version,
            cited_passages=self.cited,
            evidence_score=self.best,
            degraded=_merged(self.notes),
            finish_reason=finish,
            usage=self.usage,
        )

    async def _next(
        self, stream: AsyncGenerator[ChatChunk, None], by: float, *, first: bool
    ) -> ChatChunk | None:
        remaining = by - time.monotonic()
        try:
            if remaining <= 0:
                raise TimeoutError
            # In this task, not a new one: the HTTP stream stays in the task that opened it.
            async with asyncio.timeout(remaining):
                while True:
                    chunk = await anext(stream)
                    if chunk.usage is not None:
                        self.usage = chunk.usage
                    if chunk.text or chunk.finish_reason:
                        return chunk
        except StopAsyncIteration:
            if first:
                raise _Fallback("llm_empty", "the model returned no text") from None
            return None
        except TimeoutError:
            if first:
                budget = self.gen.policy.first_token_timeout_s
                raise _Fallback(
                    "llm_no_first_token",
                    f"no text from the model within its first-token budget "
                    f"({budget:.1f} s, or the run's deadline)",
                ) from None
            if not self.sentences:
                raise _Fallback(
                    "llm_total_timeout", "no checked sentence within the time budget"
                ) from None
            raise _TotalTimeout from None
        except LLMError as exc:
            if first or not self.sentences:
                raise _Fallback(exc.code, exc.message) from None
            self.notes.append(Degradation(exc.code, exc.message))
            return None

    def _take(self, sentence: str) -> Delta | None:
        marker = self.gen.prompt.refusal_marker
        if marker in sentence:
            self.abstained = True
            if self.sentences:
                self.notes.append(
                    Degradation("llm_refusal_marker", "the model ended its answer with a refusal")
                )
            return None
        check = check_sentence(sentence, self.passages)
        if check.unknown:
            self.notes.append(
                Degradation(
                    "unknown_citation",
                    f"citation(s) {_numbers(check.unknown)} are not passages of the context: "
                    "removed",
                )
            )
        if not check.cited and self.gen.policy.attribute_coverage <= 1.0:
            found = attribute(check.text, self.passages, self.gen.policy.attribute_coverage)
            if found is not None:
                number, coverage = found
                check = check_sentence(f"{check.text} [{number}]", self.passages)
                self.notes.append(
                    Degradation(
                        "citation_added",
                        f"an uncited sentence was attributed to passage [{number}], which "
                        f"holds {coverage:.0%} of its content terms",
                    )
                )
        if not check.cited:
            # Withheld whole, numbers and all: nothing of it reaches the answer.
            numbers = (
                f" (with number(s) {', '.join(check.unsupported)})" if check.unsupported else ""
            )
            self.notes.append(
                Degradation("uncited_sentence", f"a sentence{numbers} cited no passage: withheld")
            )
            return None
        if check.unsupported:
            detail = (
                f"number(s) {', '.join(check.unsupported)} appear in no passage the sentence "
                f"cites ({_numbers(check.cited)})"
            )
            if self.gen.policy.number_policy is NumberPolicy.FALLBACK:
                raise _Fallback("unsupported_number", detail + "; extractive answer instead")
            self.notes.append(Degradation("unsupported_number", detail + "; sentence withheld"))
            return None
        text = (" " if self.sentences else "") + check.text
        self.sentences.append(check.text)
        self.cited.extend(n for n in check.cited if n not in self.cited)
        return Delta(text=text, index=len(self.sentences) - 1)

    def _pieces(self) -> list[str]:
        return [(" " if i else "") + s for i, s in enumerate(self.sentences)]

    async def _fallback(self, why: Degradation) -> AsyncIterator[GenerationEvent]:
        log.info(
            "LLM answer replaced by the extractive answer",
            extra={"run_id": self.request.run_id, "code": why.code, "detail": why.detail},
        )
        notes = _merged([*self.notes, why])
        if self.sentences:
            yield Reset(reason=f"{why.code}: {why.detail}")
        async for event in self.gen.extractive.answer(self.request, self.scored):
            if isinstance(event, Final):
                event = Final(
                    answer=event.answer,
                    verdict=event.verdict,
                    model=event.model,
                    prompt_version=event.prompt_version,
                    cited_passages=event.cited_passages,
                    refusal_reason=event.refusal_reason,
                    refusal_detail=event.refusal_detail,
                    evidence_score=event.evidence_score,
                    degraded=[*notes, *event.degraded],
                    # The model's tokens (if it reported them), not the extractive word count.
                    usage=self.usage,
                )
            yield event

    def _final_refusal(self) -> Final:
        return Final(
            answer="",
            verdict=Verdict.REFUSED,
            model=self.gen.model.model,
            prompt_version=self.gen.prompt.version,
            refusal_reason=RefusalReason.MODEL_ABSTAINED,
            refusal_detail="The model found no answer to the question in the passages.",
            evidence_score=self.best,
            degraded=_merged(self.notes),
            usage=self.usage,
        )


class _TotalTimeout(Exception):
    pass


async def _close(stream: AsyncGenerator[ChatChunk, None]) -> None:
    with contextlib.suppress(Exception):  # closing must not mask why we close
        await stream.aclose()


def _no_model_usage(event: GenerationEvent) -> GenerationEvent:
    """An answer written without calling the model: no provider tokens to report."""
    return replace(event, usage=None) if isinstance(event, Final) else event


def _merged(notes: list[Degradation]) -> list[Degradation]:
    """One entry per distinct degradation, in order of first occurrence, with its count."""
    counts: dict[Degradation, int] = {}
    for note in notes:
        counts[note] = counts.get(note, 0) + 1
    return [
        n if count == 1 else Degradation(n.code, f"{n.detail} ({count} times)")
        for n, count in counts.items()
    ]


def _numbers(ns: list[int]) -> str:
    return ", ".join(f"[{n}]" for n in ns)
