"""What the extractive generator reads once per set of passages, not once per question."""

from __future__ import annotations

from ragway import spelling
from ragway.embedding import OnnxMiniLMEmbedder
from services.generator.backends import extractive
from services.generator.backends.base import Passage
from services.generator.backends.extractive import ExtractiveGenerator, question_terms

PASSAGES = [
    Passage(1, "plans#prices", "plans", "Plans", "Prices", "The Pro plan costs $20 a month."),
    Passage(
        2,
        "plans#table",
        "plans",
        "Plans",
        "Limits",
        "| Plan | Seats |\n| --- | --- |\n| Starter | 3 |\n| Business | 50 |\n",
    ),
    Passage(3, "exports", "exports", "Exports", "", "Exports are kept for seven days."),
]


def test_a_set_of_passages_is_read_once_for_every_question_and_the_evidence() -> None:
    generator = ExtractiveGenerator(OnnxMiniLMEmbedder())
    for question in ("How much is the Pro plan?", "How many seats does the Team plan have?"):
        scored = generator.score(question, PASSAGES)
        generator.evidence(question, PASSAGES, scored)
    assert len(generator._readings) == 1
    reading = generator._reading(PASSAGES)
    # The terms both questions asked about are known or not once, as _known says.
    asked = question_terms("How many seats does the Team plan have?")
    assert asked <= reading.known.keys()
    assert reading.known == {t: extractive._known(t, reading.vocabulary) for t in reading.known}
    assert reading.absent(asked) == {"team"}
    # The same passages numbered otherwise are another set (row keys go by number).
    renumbered = [Passage(n + 10, *(p.source_id, p.document_id, p.title, p.section, p.text))
                  for n, p in enumerate(PASSAGES)]  # fmt: skip
    generator.score("How much is the Pro plan?", renumbered)
    assert len(generator._readings) == 2


def test_a_question_of_english_words_gathers_no_words_to_repair_it_from() -> None:
    generator = ExtractiveGenerator(OnnxMiniLMEmbedder())
    assert generator.repaired("How long are exports kept?", PASSAGES) == (
        "How long are exports kept?"
    )
    assert generator._lexicon.cache_info().currsize == 0
    # A misspelt word is repaired from the passages' words, gathered once per set.
    assert not spelling.suspects("How long are exports kept?")
    assert generator.repaired("How long are exprots kept?", PASSAGES) == (
        "How long are exports kept?"
    )
    assert generator.repaired("How long are expotrs kept?", PASSAGES) == (
        "How long are exports kept?"
    )
    assert generator._lexicon.cache_info().currsize == 1
