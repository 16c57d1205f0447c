from __future__ import annotations

import asyncio

import pytest

from ragway.embedding import OnnxMiniLMEmbedder
from services.generator.backends.base import (
    Delta,
    Final,
    GenerationEvent,
    GenerationRequest,
    Passage,
    RefusalReason,
    Verdict,
)
from services.generator.backends.extractive import ExtractiveConfig, ExtractiveGenerator

GEN = ExtractiveGenerator(OnnxMiniLMEmbedder())
PASSAGES = [
    Passage(
        1,
        "streaming#heartbeats",
        "streaming",
        "Streaming",
        "Heartbeats",
        "The gateway sends a heartbeat comment every 15 seconds while a stream is idle.",
    ),
    Passage(
        2,
        "streaming#resume",
        "streaming",
        "Streaming",
        "Resuming a stream",
        "Reconnect with the Last-Event-ID header to replay every event after that id. "
        "The gateway never sends an event twice.",
    ),
    Passage(
        3,
        "policy#meals",
        "policy",
        "Travel policy",
        "Meals",
        "The daily meal allowance on business trips is 45 euros.",
    ),
]


def run(question: str, passages: list[Passage] = PASSAGES) -> list[GenerationEvent]:
    async def collect() -> list[GenerationEvent]:
        return [e async for e in GEN.generate(GenerationRequest(question, passages))]

    return asyncio.run(collect())


def test_an_answer_quotes_passage_sentences_and_cites_them() -> None:
    events = run("How do I resume a stream after a disconnect?")
    final = events[-1]
    assert isinstance(final, Final)
    assert final.verdict is Verdict.GROUNDED
    assert 2 in final.cited_passages
    assert "Last-Event-ID header" in final.answer and "[2]" in final.answer
    # Every sentence of the answer is a passage sentence followed by its citation.
    for n in final.cited_passages:
        assert f"[{n}]" in final.answer


def test_deltas_join_to_exactly_the_final_answer_in_index_order() -> None:
    events = run("How often does the gateway send a heartbeat?")
    deltas = [e for e in events if isinstance(e, Delta)]
    final = events[-1]
    assert isinstance(final, Final)
    assert [d.index for d in deltas] == list(range(len(deltas)))
    assert "".join(d.text for d in deltas) == final.answer
    assert "15 seconds" in final.answer


def test_a_question_the_passages_do_not_answer_is_refused_with_a_reason() -> None:
    events = run("What is the capital of France?")
    assert len(events) == 1
    final = events[0]
    assert isinstance(final, Final)
    assert final.verdict is Verdict.REFUSED
    assert final.refusal_reason is RefusalReason.WEAK_EVIDENCE
    assert final.answer == "" and final.cited_passages == []
    assert "support" in final.refusal_detail


def test_no_passages_is_a_refusal_for_lack_of_evidence() -> None:
    final = run("How do I resume a stream?", passages=[])[-1]
    assert isinstance(final, Final)
    assert final.refusal_reason is RefusalReason.NO_EVIDENCE


def test_config_is_validated() -> None:
    with pytest.raises(ValueError, match="min_support"):
        ExtractiveConfig(min_support=1.5)


def test_the_sentence_cache_is_bounded_and_changes_no_answer() -> None:
    tiny = ExtractiveGenerator(OnnxMiniLMEmbedder(), ExtractiveConfig(cache_sentences=2))
    question = "How do I resume a stream after a disconnect?"
    for _ in range(2):  # cold, then partly cached
        scored = tiny.score(question, PASSAGES)
        assert [(s.text, round(s.support, 5)) for s in scored] == [
            (s.text, round(s.support, 5)) for s in GEN.score(question, PASSAGES)
        ]
        assert len(tiny._cache) == 2


def test_a_requests_own_threshold_replaces_the_configured_one() -> None:
    question = "How do I resume a stream after a disconnect?"

    async def final(min_support: float | None) -> Final:
        request = GenerationRequest(question, PASSAGES, min_support=min_support)
        events = [e async for e in GEN.generate(request)]
        assert isinstance(events[-1], Final)
        return events[-1]

    default, strict = asyncio.run(final(None)), asyncio.run(final(0.999))
    assert default.verdict is Verdict.GROUNDED
    assert strict.verdict is Verdict.REFUSED
    assert strict.refusal_reason is RefusalReason.WEAK_EVIDENCE
    assert "< 0.999" in strict.refusal_detail
