"""The default generator: answers with sentences copied from the numbered passages.

It cannot invent a fact or a number, because every word it emits is a passage's.
For each sentence of each passage it measures *support* for the question:

    support = w_sem * cos(question, heading + sentence) + (1 - w_sem) * coverage

where coverage is the share of the question's content terms that the sentence
(with its heading) contains, each term weighted by how rare it is among the
retrieved passages: a term every passage has ("ragway") says nothing about which
one answers, and a term no passage has ("Windows", "price") is a part of the
question the evidence does not address. It refuses when the best support is
under ``min_support``; otherwise it answers with the best sentence and up to
``max_sentences - 1`` others close to it, in passage order, each followed by its
citation ``[n]``. The default threshold is calibrated in docs/generation.md.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragway.embedding import Embedder
from ragway.text import content_terms, split_sentences, words
from services.generator.backends.base import (
    Delta,
    Final,
    GenerationEvent,
    GenerationRequest,
    Passage,
    RefusalReason,
    Verdict,
)

MODEL = "extractive-v1"
POLICY_VERSION = "extractive-policy-1"


@dataclass(frozen=True, slots=True)
class ExtractiveConfig:
    min_support: float = 0.44
    semantic_weight: float = 0.7
    max_sentences: int = 3
    # A second sentence must be nearly as good as the best to join the answer.
    relative_cutoff: float = 0.85
    min_words: int = 4
    words_per_delta: int = 4
    # ~1.5 KB per cached sentence vector: 20k sentences ≈ 30 MB.
    cache_sentences: int = 20_000

    def __post_init__(self) -> None:
        if not 0.0 <= self.min_support <= 1.0:
            raise ValueError(f"min_support must be in [0, 1], got {self.min_support}")
        if not 0.0 <= self.semantic_weight <= 1.0:
            raise ValueError(f"semantic_weight must be in [0, 1], got {self.semantic_weight}")
        if self.max_sentences < 1:
            raise ValueError(f"max_sentences must be >= 1, got {self.max_sentences}")


@dataclass(frozen=True, slots=True)
class ScoredSentence:
    passage: Passage
    position: int
    text: str
    support: float


class ExtractiveGenerator:
    name = MODEL

    def __init__(self, embedder: Embedder, config: ExtractiveConfig | None = None) -> None:
        self._embedder = embedder
        self._config = config or ExtractiveConfig()
        self._cache: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._cache_lock = threading.Lock()

    @property
    def min_support(self) -> float:
        return self._config.min_support

    def score(self, question: str, passages: Sequence[Passage]) -> list[ScoredSentence]:
        """Every candidate sentence with its support, best first."""
        candidates = [
            (p, i, s)
            for p in passages
            for i, s in enumerate(split_sentences(p.text))
            if len(words(s)) >= self._config.min_words
        ]
        if not candidates:
            return []
        q_terms = content_terms(question)
        weights = _term_weights(q_terms, passages)
        total_weight = sum(weights.values())
        # A sentence is embedded with its heading: "Resuming a stream: Reconnect
        # with the header…" matches "how do I resume a stream?" far better.
        question_vector = self._embedder.embed([question])[0]
        sentence_vectors = self._sentence_vectors(
            [f"{p.section or p.title}: {s}" for p, _, s in candidates]
        )
        cosines = sentence_vectors @ question_vector
        w = self._config.semantic_weight
        scored = []
        for (p, i, s), cos in zip(candidates, cosines, strict=True):
            context_terms = content_terms(f"{p.title} {p.section} {s}")
            covered = sum(weights[t] for t in q_terms & context_terms)
            coverage = covered / total_weight if total_weight else 0.0
            support = w * float(np.clip(cos, 0.0, 1.0)) + (1 - w) * coverage
            scored.append(ScoredSentence(p, i, s, support))
        scored.sort(key=lambda x: (-x.support, x.passage.number, x.position))
        return scored

    def _sentence_vectors(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Embeddings of passage sentences, through a bounded LRU cache.

        Embedding every sentence of every passage is most of this backend's
        cost, and popular passages come back question after question.
        """
        with self._cache_lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            fresh = self._embedder.embed(missing)
            with self._cache_lock:
                for text, vector in zip(missing, fresh, strict=True):
                    self._cache[text] = vector
                while len(self._cache) > self._config.cache_sentences:
                    self._cache.popitem(last=False)
        with self._cache_lock:
            vectors = []
            for t in texts:
                vector = self._cache.get(t)
                if vector is None:  # evicted by a concurrent call: recompute
                    vector = self._embedder.embed([t])[0]
                else:
                    self._cache.move_to_end(t)
                vectors.append(vector)
        return np.vstack(vectors)

    def select(self, scored: list[ScoredSentence], max_output_tokens: int) -> list[ScoredSentence]:
        best = scored[0].support
        chosen: list[ScoredSentence] = []
        budget = max_output_tokens
        for s in scored:
            if len(chosen) == self._config.max_sentences:
                break
            if s.support < max(self._config.min_support, self._config.relative_cutoff * best):
                break
            if any(_near_duplicate(s.text, c.text) for c in chosen):
                continue
            cost = len(words(s.text)) + 2
            if chosen and cost > budget:
                continue
            chosen.append(s)
            budget -= cost
        return sorted(chosen, key=lambda s: (s.passage.number, s.position))

    async def generate(self, request: GenerationRequest) -> AsyncIterator[GenerationEvent]:
        if not request.passages:
            yield _refusal(
                RefusalReason.NO_EVIDENCE, "No passage in the knowledge base matched the question."
            )
            return
        # Embedding is CPU work: keep it off the event loop.
        scored = await asyncio.to_thread(self.score, request.question, request.passages)
        async for event in self.answer(request, scored):
            yield event

    async def answer(
        self, request: GenerationRequest, scored: list[ScoredSentence]
    ) -> AsyncIterator[GenerationEvent]:
        """The answer from sentences already scored (LLM backends fall back to this)."""
        if not request.passages:
            yield _refusal(
                RefusalReason.NO_EVIDENCE, "No passage in the knowledge base matched the question."
            )
            return
        best = scored[0].support if scored else 0.0
        if best < self._config.min_support:
            yield _refusal(
                RefusalReason.WEAK_EVIDENCE,
                f"The closest passages do not answer the question "
                f"(support {best:.3f} < {self._config.min_support:.3f}).",
                best,
            )
            return
        chosen = self.select(scored, request.max_output_tokens)
        index = 0
        pieces: list[str] = []
        for n, sentence in enumerate(chosen):
            text = ("" if n == 0 else " ") + f"{sentence.text} [{sentence.passage.number}]"
            for chunk in _word_chunks(text, self._config.words_per_delta):
                pieces.append(chunk)
                yield Delta(text=chunk, index=index)
                index += 1
        cited = list(dict.fromkeys(s.passage.number for s in chosen))
        yield Final(
            answer="".join(pieces),
            verdict=Verdict.GROUNDED,
            model=MODEL,
            prompt_version=POLICY_VERSION,
            cited_passages=cited,
            evidence_score=best,
        )


def _refusal(reason: RefusalReason, detail: str, evidence: float = 0.0) -> Final:
    return Final(
        answer="",
        verdict=Verdict.REFUSED,
        model=MODEL,
        prompt_version=POLICY_VERSION,
        refusal_reason=reason,
        refusal_detail=detail,
        evidence_score=evidence,
    )


def _term_weights(terms: set[str], passages: Sequence[Passage]) -> dict[str, float]:
    """IDF of each question term over the retrieved passages (smoothed, always > 0)."""
    passage_terms = [content_terms(f"{p.title} {p.section} {p.text}") for p in passages]
    n = len(passage_terms)
    return {t: math.log(1 + (n + 1) / (sum(t in pt for pt in passage_terms) + 1)) for t in terms}


def _near_duplicate(a: str, b: str) -> bool:
    wa, wb = set(words(a)), set(words(b))
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) > 0.8


def _word_chunks(text: str, size: int) -> list[str]:
    """Split text into pieces of ``size`` words that join back to exactly ``text``."""
    parts = text.split(" ")
    return [(" " if i else "") + " ".join(parts[i : i + size]) for i in range(0, len(parts), size)]
