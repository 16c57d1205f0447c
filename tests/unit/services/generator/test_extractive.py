from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt
import pytest

from ragway.citations import unescape
from ragway.embedding import Embedder, OnnxMiniLMEmbedder
from ragway.question import AnswerType, parts
from ragway.text import stem, words
from ragway.unit_vectors import embed_chunks
from ragway.units import Unit, units
from services.generator.answerability import AnswerabilityModel, Evidence
from services.generator.backends.base import (
    Delta,
    Final,
    GenerationEvent,
    GenerationRequest,
    Passage,
    RefusalReason,
    Usage,
    Verdict,
)
from services.generator.backends.extractive import (
    ExtractiveConfig,
    ExtractiveGenerator,
    ScoredUnit,
    _calendar_terms,
    _fullest,
    _holds_asked,
    _names,
    _one_paragraph,
    _outside,
    _quote,
    _unknown_rows,
    _with_asked_value,
    _without_repeats,
    _without_told_changes,
    content_terms,
    question_terms,
)
from services.generator.grounding import citations, review_final
from services.generator.unit_ranker import UNIT_FEATURES, UnitRanker
from tests.unit.services.retriever.fakes import FakeEmbedder

# As the generator serves by default: the floor, the packaged answerability model
# and the packaged unit ranker.
EMBEDDER = OnnxMiniLMEmbedder()
GEN = ExtractiveGenerator(
    EMBEDDER, answerability=AnswerabilityModel.load(), ranker=UnitRanker.load()
)


def _evidence(question: str, *passages: Passage) -> Evidence:
    """The evidence the default generator weighs for ``question`` over ``passages``."""
    return GEN.evidence(question, list(passages), GEN.score(question, list(passages)))


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


def run(
    question: str, passages: list[Passage] = PASSAGES, gen: ExtractiveGenerator = GEN
) -> list[GenerationEvent]:
    async def collect() -> list[GenerationEvent]:
        return [e async for e in gen.generate(GenerationRequest(question, passages))]

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


def test_each_delta_is_one_quoted_sentence_with_its_citation() -> None:
    # Four-word deltas cost a gRPC message, a Redis event and an SSE event each while
    # pacing nothing (the answer is known at once): one delta per quoted unit.
    events = run("How do I resume a stream after a disconnect?")
    deltas = [e for e in events if isinstance(e, Delta)]
    final = events[-1]
    assert isinstance(final, Final)
    assert len(deltas) == final.answer.count(" [")  # one citation marker a sentence
    for d in deltas:
        assert re.search(r"\[\d+\]$", d.text), d.text


def test_delta_words_paces_the_answer_in_pieces_that_join_to_it() -> None:
    paced = ExtractiveGenerator(
        EMBEDDER,
        ExtractiveConfig(delta_words=4),
        answerability=AnswerabilityModel.load(),
        ranker=UnitRanker.load(),
    )
    events = run("How do I resume a stream after a disconnect?", gen=paced)
    deltas = [e for e in events if isinstance(e, Delta)]
    final = events[-1]
    assert isinstance(final, Final)
    assert len(deltas) > final.answer.count(" [")
    assert all(len(d.text.split()) <= 4 for d in deltas)
    assert [d.index for d in deltas] == list(range(len(deltas)))
    assert "".join(d.text for d in deltas) == final.answer


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


PLANS = Passage(
    1,
    "plans#compare",
    "plans",
    "Plans and pricing",
    "Compare plans",
    "| Plan | Price per seat | Storage | Max members |\n"
    "|---|---|---|---|\n"
    "| Free | $0 | 5 GB per workspace | 10 |\n"
    "| Starter | $4.50 | 20 GB per seat | 150 |\n"
    "| Business | $11.75 | 100 GB per seat | 2,000 |\n",
)
TRASH = Passage(
    2,
    "files#trash",
    "files",
    "Deleted files",
    "The trash",
    "Deleting a file moves it to the trash. Files stay in the trash\n"
    "for 30 days, after which they are purged for good.\n",
)
EXPORT = Passage(
    3,
    "export#how",
    "export",
    "Exporting data",
    "Start an export",
    "The following roles can export data:\n\n- Owner\n- Compliance officer\n\n"
    "To export your data:\n\n1. Open Admin console.\n2. Choose Standard export or Full export.\n"
    "3. Click Start export.\n",
)


def answer_of(question: str, passages: list[Passage]) -> Final:
    final = run(question, passages)[-1]
    assert isinstance(final, Final)
    return final


def test_a_table_cell_is_answered_with_its_row_key_and_column_header() -> None:
    final = answer_of("How much storage do I get on the Starter plan?", [PLANS, TRASH])
    assert final.verdict is Verdict.GROUNDED
    assert "Starter — Storage: 20 GB per seat. [1]" in final.answer
    assert "Business" not in final.answer


def test_each_part_of_a_two_part_question_is_answered_from_its_own_passage() -> None:
    final = answer_of(
        "How many members can a Business workspace have, and how long do files stay in the trash?",
        [PLANS, TRASH],
    )
    assert "2,000" in final.answer and "30 days" in final.answer
    assert final.cited_passages == [1, 2]


def test_a_lead_in_is_answered_with_its_items_and_a_next_step_with_the_step_after() -> None:
    roles = answer_of("Which roles can export data?", [EXPORT, TRASH])
    assert "Compliance officer" in roles.answer
    after = answer_of("What do I click after choosing Standard or Full export?", [EXPORT, TRASH])
    assert "Click Start export" in after.answer
    # The next step's own number is left out: joined into a sentence it would read as a value.
    assert "3. Click" not in after.answer


def test_markdown_syntax_never_reaches_the_answer() -> None:
    passage = Passage(
        1,
        "codes#a",
        "codes",
        "Backup codes",
        "Backup codes",
        "You get **10 backup codes** when you turn on `2FA`.",
    )
    final = answer_of("How many backup codes do I get?", [passage])
    assert "10 backup codes" in final.answer
    assert "**" not in final.answer and "`" not in final.answer


def test_a_pages_own_bracketed_numbers_are_quoted_escaped_and_cite_nothing() -> None:
    # docs/canary.md: the answer quoted "[5, 25, 50]", which the final review read as
    # citations of passages 5, 25 and 50 and recorded as an unknown_citation.
    passages = [
        Passage(
            n,
            f"canary#{n}",
            "canary",
            "Canary rollouts",
            "Automatic steps",
            text,
        )
        for n, text in (
            (1, 'In the API, send `"steps": [5, 25, 50]` to start a canary with automatic steps.'),
            (2, "A canary at 5 % sends one run in twenty to the candidate path."),
        )
    ]
    final = answer_of("How do I give a canary automatic steps in the API?", passages)
    assert '"steps": \\[5, 25, 50]' in final.answer
    assert final.cited_passages == [1]
    reviewed = review_final(final, {p.number: p for p in passages})
    assert reviewed.cited_passages == [1]
    assert reviewed.degraded == []
    assert unescape(final.answer).startswith('In the API, send "steps": [5, 25, 50] to start')


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


class CountingEmbedder:
    """The real model, counting the texts this generator embeds itself."""

    def __init__(self, inner: OnnxMiniLMEmbedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.texts.extend(texts)
        return self.inner.embed(texts)


def with_unit_vectors(embedder: Embedder, passages: list[Passage]) -> list[Passage]:
    """The passages as the retriever hands them on: with their units' stored vectors."""
    blobs = embed_chunks(embedder, [(p.title, p.section, p.text) for p in passages])
    return [replace(p, unit_vectors=b) for p, b in zip(passages, blobs, strict=True)]


def test_stored_unit_vectors_replace_embedding_and_change_nothing() -> None:
    # The retriever embeds each chunk's units at write time (ragway/unit_vectors.py);
    # the generator must score with them exactly as with its own, embedding only
    # the question.
    inner = OnnxMiniLMEmbedder()
    stored = with_unit_vectors(inner, PASSAGES)
    question = "How often is a heartbeat sent while a stream is idle?"
    own = CountingEmbedder(inner)
    mine = ExtractiveGenerator(own).score(question, PASSAGES)
    given = CountingEmbedder(inner)
    theirs = ExtractiveGenerator(given).score(question, stored)
    assert given.texts == [question] and len(own.texts) > 1
    assert [(s.passage.number, s.position, s.part) for s in theirs] == [
        (s.passage.number, s.position, s.part) for s in mine
    ]
    assert max(abs(a.support - b.support) for a, b in zip(mine, theirs, strict=True)) < 1e-3


def test_unit_vectors_of_another_model_are_not_used() -> None:
    inner = OnnxMiniLMEmbedder()
    stored = with_unit_vectors(FakeEmbedder(), PASSAGES)  # another model and dimension
    counting = CountingEmbedder(inner)
    generator = ExtractiveGenerator(counting)
    scored = generator.score("How do I resume a stream?", stored)
    assert scored[0].passage.number == 2
    assert generator.embedded_units == len(counting.texts) - 1 > 0


def test_the_retrievers_question_vectors_replace_embedding_the_question() -> None:
    # The gateway hands on the vectors the retriever embedded the question with
    # (GenerateRequest.question_vectors): the same text and model, so the same
    # scores, and the generator embeds nothing of the question itself.
    inner = OnnxMiniLMEmbedder()
    stored = with_unit_vectors(inner, PASSAGES)
    question = "How often is a heartbeat sent while a stream is idle?"
    own = CountingEmbedder(inner)
    mine = ExtractiveGenerator(own).score(question, stored)
    given = CountingEmbedder(inner)
    generator = ExtractiveGenerator(given)
    request = GenerationRequest(
        question=question,
        passages=stored,
        question_vectors={question: inner.embed([question])[0].tolist()},
        embedding_model=inner.model_id,
    )
    theirs = generator.score(question, stored, generator.known_vectors(request))
    assert own.texts == [question] and given.texts == []
    assert [(s.passage.number, s.position, s.part, s.support) for s in theirs] == [
        (s.passage.number, s.position, s.part, s.support) for s in mine
    ]


def test_question_vectors_of_another_model_or_text_are_not_used() -> None:
    inner = OnnxMiniLMEmbedder()
    question = "How do I resume a stream?"
    counting = CountingEmbedder(inner)
    generator = ExtractiveGenerator(counting)
    right = inner.embed([question])[0].tolist()
    for vectors, model in [
        ({question: right}, "another-model"),  # another model's vectors
        ({question: right[:100]}, inner.model_id),  # another dimension
        ({"How do I resume a stream": right}, inner.model_id),  # another text
    ]:
        request = GenerationRequest(
            question=question, passages=PASSAGES, question_vectors=vectors, embedding_model=model
        )
        counting.texts.clear()
        scored = generator.score(question, PASSAGES, generator.known_vectors(request))
        assert scored[0].passage.number == 2 and question in counting.texts


APP_SESSION = Passage(
    2,
    "using-public-chargers#app",
    "using-public-chargers",
    "Using public chargers",
    "Start a session with the app",
    "Before you start, make sure a payment card is saved under **Account → Payment**.\n\n"
    "1. Plug the cable into your car first.\n"
    "2. In the app, tap **Charge** and scan the QR code on the charger.\n"
    "3. Pick the connector you plugged in (A or B) and check the price shown.\n\n"
    "If nothing happens after 60 seconds, stop the attempt in the app and try once more.",
)


def test_a_lead_in_already_said_is_not_said_again_with_its_item() -> None:
    # Seen on a held-in servicehub question: the lead-in quoted as a sentence and
    # then again before its first step, whose "1." the audit read as a value.
    every = GEN._all_units(APP_SESSION)[0]
    lead_in, first = every[0], every[1]
    assert first.kind == "item" and first.key == lead_in.text
    terms = question_terms("what do I have to do first?")
    part = parts("what do I have to do first?")[0]

    def scored(u: Unit) -> ScoredUnit:
        return ScoredUnit(APP_SESSION, u.position, _quote(u, terms, part), 0.5, u)

    both = _without_repeats([scored(lead_in), scored(first)])
    assert [s.text for s in both] == [lead_in.text, "Plug the cable into your car first."]
    # The other way round, the sentence the item's quote holds is left out.
    item_first = _without_repeats([scored(first), scored(lead_in)])
    assert [s.text for s in item_first] == [f"{lead_in.text} Plug the cable into your car first."]


def test_an_answer_says_no_sentence_twice() -> None:
    question = "When I start a session with the app, what do I have to do first?"
    final = run(question, [APP_SESSION])[-1]
    assert isinstance(final, Final) and final.verdict == Verdict.GROUNDED
    sentences = [s for s in re.split(r"(?<=[.;])\s+", re.sub(r"\[\d+\]", "", final.answer)) if s]
    assert len(sentences) == len(set(sentences)), final.answer
    assert "Plug the cable into your car first" in final.answer
    assert "1." not in final.answer


def test_a_hyphenated_question_word_meets_a_column_written_apart() -> None:
    # "first-response target" asks for the "First response" column of the row: the
    # answer names that cell, not every cell of the row.
    table = Passage(
        1,
        "runbook#severity",
        "runbook",
        "Incident runbook",
        "Severity levels",
        "| Severity | Definition | First response |\n|---|---|---|\n"
        "| Sev1 | Messaging down for many workspaces | 15 minutes |\n"
        "| Sev2 | One feature degraded | 1 hour |",
    )
    best = GEN.score("What's the first-response target for a Sev1?", [table])[0]
    assert best.text == "Sev1 — First response: 15 minutes"


WEBINARS = Passage(
    1,
    "pricing#add-ons",
    "pricing",
    "Plans and pricing",
    "Add-ons",
    "| Add-on | Price |\n|---|---|\n| Webinars 1,000 | $79 per host / month |\n"
    "| Webinars 3,000 | $199 per host / month |\n| Large Meetings 500 | $45 per host / month |\n"
    "\nBusiness customers can buy the API Plus add-on, which doubles the per-minute limit.\n",
)
ERRORS = Passage(
    1,
    "errors#codes",
    "errors",
    "Error codes",
    "Error codes",
    "| Code | Meaning |\n|---|---|\n| LM-4410 | The host's licence has expired. |\n"
    "| LM-6001 | The app version is no longer supported. |\n",
)


def test_a_row_whose_key_differs_only_by_its_number_is_another_row() -> None:
    # "Webinars 10,000" is neither "Webinars 1,000" nor "Webinars 3,000": the row
    # named by the question gains, the rows it does not name lose.
    def support(question: str) -> dict[str, float]:
        return {s.text.split(" — ")[0]: s.support for s in GEN.score(question, [WEBINARS])}

    named = support("How much does Webinars 3,000 cost per host?")
    other = support("How much does Webinars 10,000 cost per host?")
    assert named["Webinars 3,000"] > named["Webinars 1,000"] + 0.15
    assert other["Webinars 3,000"] < named["Webinars 3,000"] - 0.15


def test_a_row_key_met_only_in_the_brand_name_is_another_row() -> None:
    # "Homestead Essentials" shares only "Homestead", which every passage says, with
    # the row "Homestead Lite": that row is another plan's, not the one asked about.
    plans = Passage(
        1,
        "plans#glance",
        "broadband-plans",
        "Homestead broadband plans",
        "Plans at a glance",
        "| Plan | Avg. download | Avg. upload |\n|---|---|---|\n"
        "| Fibre 150 | 150 Mbps | 30 Mbps |\n| Homestead Lite | 25 Mbps | 5 Mbps |\n",
    )
    social = Passage(
        2,
        "plans#essentials",
        "broadband-plans",
        "Homestead broadband plans",
        "Homestead Essentials",
        "If you get Universal Credit you can choose Homestead Essentials: 50 Mbps download "
        "for £15.00 a month with no contract.",
    )
    help_page = Passage(
        3,
        "wifi#tips",
        "wifi",
        "Better Wi-Fi with Homestead",
        "Tips",
        "Move the Homestead Hub off the floor and away from the microwave.",
    )
    passages = [plans, social, help_page]

    def lite(question: str) -> float:
        return next(
            s.support for s in GEN.score(question, passages) if s.text.startswith("Homestead Lite")
        )

    assert lite("What upload speed do you get on Homestead Essentials?") < (
        lite("What upload speed do you get on Homestead Lite?") - 0.15
    )


def test_an_identifier_one_digit_off_is_not_a_misspelling() -> None:
    final = answer_of("What does error LM-7002 mean?", [ERRORS])
    assert final.verdict is Verdict.REFUSED, final.answer
    known = answer_of("What does error LM-6001 mean?", [ERRORS])
    assert "no longer supported" in known.answer


def test_asked_for_a_phone_number_a_page_about_phones_without_one_is_refused() -> None:
    # A plans table with a phone column that gives no number: its rows were quoted
    # as "the phone number" ("Enterprise — Support: 24/7 phone; Phone number: On
    # your account page") before.
    support = Passage(
        1,
        "support#plans",
        "support",
        "Contacting support",
        "Support by plan",
        "| Plan | Support | Phone number |\n|---|---|---|\n| Starter | Email | - |\n"
        "| Enterprise | 24/7 phone | On your account page |\n",
    )
    final = answer_of("What's the phone number for support?", [support])
    assert final.verdict is Verdict.REFUSED, final.answer
    assert final.refusal_detail == "The knowledge base gives no phone number for this question."
    numbered = replace(
        support, text=support.text + "\nEnterprise customers call +1 415 555 0142 at any hour.\n"
    )
    answered = answer_of("What's the phone number for support?", [numbered])
    assert "+1 415 555 0142" in answered.answer, answered.refusal_detail


def test_asked_what_something_weighs_a_spec_table_without_a_weight_is_refused() -> None:
    specs = Passage(
        1,
        "chargers#models",
        "chargers",
        "Home chargers",
        "Models",
        "| Model | Max power | Connectivity |\n|---|---|---|\n| Home S | 7.4 kW | Wi-Fi |\n"
        "| Home 22 Pro | 22 kW | Wi-Fi, 4G |\n",
    )
    final = answer_of("How much does the Home 22 Pro weigh?", [specs])
    assert final.verdict is Verdict.REFUSED, final.answer
    assert "no weight" in final.refusal_detail
    weighed = replace(
        specs,
        text=specs.text.replace("| Connectivity |", "| Connectivity | Weight |")
        .replace("|---|---|---|", "|---|---|---|---|")
        .replace("Wi-Fi |\n| Home 22", "Wi-Fi | 3.1 kg |\n| Home 22")
        .replace("4G |", "4G | 4.2 kg |"),
    )
    answered = answer_of("How much does the Home 22 Pro weigh?", [weighed])
    assert "4.2 kg" in answered.answer, answered.refusal_detail


def test_a_how_many_question_is_answered_by_a_number_of_what_it_counts() -> None:
    passage = Passage(
        1,
        "meetings#co-hosts",
        "meetings",
        "Meetings",
        "Co-hosts",
        "A host can add co-hosts during the first 10 minutes of a meeting. "
        "A host can add up to 8 co-hosts to a meeting.",
    )
    question = "How many co-hosts can a host add to a meeting?"
    # The number of co-hosts leads; the other sentence, nearly as close, may join it.
    assert GEN.score(question, [passage])[0].text.startswith("A host can add up to 8 co-hosts")
    assert "up to 8 co-hosts" in answer_of(question, [passage]).answer


def test_the_llm_prompt_text_is_the_passage_as_standalone_units() -> None:
    text = GEN.standalone_text(WEBINARS)
    lines = text.splitlines()
    assert "Webinars 3,000 — Price: $199 per host / month" in lines
    assert "|" not in text and "---" not in text
    steps = GEN.standalone_text(EXPORT).splitlines()
    # A lead-in on its line, then its items: each item reads with the line above.
    at = steps.index("To export your data:")
    assert steps[at + 1 : at + 3] == [
        "1. Open Admin console.",
        "2. Choose Standard export or Full export.",
    ]


def test_the_llm_prompt_text_escapes_a_pages_bracketed_numbers() -> None:
    passage = Passage(1, "canary#steps", "canary", "Canary", "Steps",
                      'Send `"steps": [5, 25, 50]` to start a canary.')  # fmt: skip
    text = GEN.standalone_text(passage)
    assert text == 'Send "steps": \\[5, 25, 50] to start a canary.'
    assert citations(text) == []


def test_usage_is_the_words_read_and_written() -> None:
    question = "How often does the gateway send a heartbeat?"
    final = run(question)[-1]
    assert isinstance(final, Final) and final.usage is not None
    # The question's words and each passage's title, section and text, word by word (8 + 52).
    read = len(words(question)) + sum(
        len(words(f"{p.title} {p.section} {p.text}")) for p in PASSAGES
    )
    assert read == 60
    assert final.usage == Usage(input_tokens=read, output_tokens=len(words(final.answer)))
    assert final.usage.output_tokens > 0
    refused = run("What is the capital of France?")[-1]
    assert isinstance(refused, Final) and refused.usage is not None
    assert refused.usage.output_tokens == 0 and refused.usage.input_tokens > 0


def test_the_words_of_the_asking_are_neither_covered_nor_missing() -> None:
    # "computed" is how the question asks; a passage that answers it says "is 0.7
    # times…". Counted as missing, it refused the question in the demo QA set.
    assert question_terms("How is sentence support computed?") == {"sentenc", "support"}
    assert question_terms("How long do I get to download an export?") == {"download", "export"}


def test_a_day_of_the_week_is_no_name_in_the_plural_either() -> None:
    # "Saturdays" read as a name the pages lack refused "When is reception staffed at
    # the Newstead club on Saturdays?" beside "Sat: 7 am to 11 am".
    assert _names("When is reception staffed at the Newstead club on Saturdays?") == {
        stem("newstead")
    }


def test_what_time_of_day_names_no_day_column() -> None:
    # "What time of day does the delivery usually come?" met a rounds table with
    # "Day" and "Time" columns; its "day" picked "Day: Thursday" over "Time: 9am-2pm".
    assert question_terms("What time of day does the delivery usually come?") == {
        "deliveri",
        "usual",
        "come",
    }


def test_how_frequently_asks_as_how_often_does() -> None:
    # "How frequently are bank transactions pulled in?" beside a section "How often
    # feeds refresh": "frequently" was an absent word that weighed 0.24 in
    # ``missing``, as if the question were about something the pages never cover.
    often = question_terms("How often are bank transactions pulled in?")
    assert question_terms("How frequently are bank transactions pulled in?") == often
    assert question_terms("How quickly are refunds paid?") == question_terms(
        "How soon are refunds paid?"
    )
    assert question_terms("How big can an upload be?") == {"upload"}
    # Only the asking goes: a page's own "frequently asked questions" keeps its words.
    assert "frequent" in question_terms("Where are the frequently asked questions?")


def test_a_prohibition_is_one_idea_however_it_is_worded() -> None:
    assert question_terms("What are guests not allowed to do?") == {"guest", "cannot"}
    assert question_terms("Which members aren't permitted to post?") == {"member", "cannot", "post"}
    assert "cannot" in content_terms("Guests can't install apps.")
    assert "cannot" in content_terms("Guests are unable to install apps.")


GUESTS = Passage(
    1,
    "guests#limits",
    "guest-accounts",
    "Guest accounts",
    "Guest permissions",
    "Guests can read and post in the channels they are invited to.\n\n"
    "Guests cannot:\n\n"
    "- install apps\n"
    "- create channels or invite other people\n"
    "- see the member directory\n"
    "- start a huddle with more than 3 people\n"
    "- export data\n\n"
    "Shared-channel participants don't count as guests and don't use up your guest allowance.",
)


def test_several_items_of_one_list_answer_as_the_whole_list() -> None:
    # Three of the five items chosen one by one read as if they were all of them.
    final = answer_of("What are guests not allowed to do?", [GUESTS, TRASH])
    assert final.verdict is Verdict.GROUNDED
    assert final.answer.startswith("Guests cannot: install apps; create channels")
    for item in ("member directory", "more than 3 people", "export data"):
        assert item in final.answer
    assert final.answer.count("Guests cannot") == 1


PREVIEWS = Passage(
    1,
    "files#previews",
    "file-previews",
    "File previews",
    "Previews",
    "Video previews are generated for MP4 and MOV files; other formats can be downloaded "
    "but do not play inline. Northwind generates previews for images up to 40 megapixels "
    "and for PDFs up to 300 pages. Previews are cached for a week.",
)


def test_a_question_after_a_limit_is_answered_by_the_sentence_stating_one() -> None:
    question = "Up to how long can a PDF be and still get an inline preview?"
    best = GEN.score(question, [PREVIEWS])[0]
    assert "PDFs up to 300 pages" in best.text
    assert "300 pages" in answer_of(question, [PREVIEWS]).answer


REPORTS = Passage(
    4,
    "reports#kinds",
    "reports",
    "Reports",
    "Kinds of report",
    "| Report | History available |\n|---|---|\n"
    "| Participant report | 6 months |\n| Recording report | 12 months |\n",
)


def test_a_row_the_question_names_that_no_table_has_is_unknown() -> None:
    rows = [units(PLANS.text)]
    assert _unknown_rows("How much storage does the Team plan include?", rows) == {"team"}
    assert _unknown_rows("How much storage does the Starter plan include?", rows) == set()
    assert _unknown_rows("What does the business plan cost?", rows) == set()  # not a name
    assert _unknown_rows("How much storage does the Buisness plan include?", rows) == set()
    # Rows named with the noun itself ("Participant report") are not read this way.
    assert _unknown_rows("How far back does a CSV report go?", [units(REPORTS.text)]) == set()


def test_a_plan_the_table_does_not_have_is_a_missing_name() -> None:
    # "team" is a word of the pages ("invite your team"), but no row of the plans table.
    invite = Passage(3, "members#invite", "members", "Members", "", "Invite your team by email.")
    passages = [PLANS, TRASH, invite]

    def evidence(question: str) -> Evidence:
        return _evidence(question, *passages)

    team = evidence("How much storage does the Team plan include?")
    starter = evidence("How much storage does the Starter plan include?")
    assert "team" not in team.missing_words  # a word the pages have
    assert (team.names, team.missing_names) == (1.0, ("Team",))
    assert (starter.names, starter.missing_names) == (0.0, ())
    assert GEN.answerability is not None
    assert GEN.answerability.probability(team) < GEN.answerability.probability(starter)
    assert "“Team”" in GEN.answerability.reason(team)


def test_a_name_in_the_story_before_the_question_is_the_askers_not_a_missing_one() -> None:
    # "Rufus" (a dog) refused an answerable question: "does not cover “Rufus”". A name
    # the asking sentence gives is still one the pages must know.
    carers = Passage(
        1, "portal#carers", "portal", "Client portal", "Shared carers",
        "The account holder can invite up to 3 shared carers, for example a partner or a "
        "dog walker. Shared carers can book, move and cancel appointments. Only the "
        "account holder can see invoices and payment details.",
    )  # fmt: skip
    story = _evidence(
        "Our dog walker books appointments for Rufus through the portal as a shared "
        "carer. Can she see what our bills come to?",
        carers,
    )
    assert (story.names, story.missing_names) == (0.0, ())
    asked = _evidence("Can a shared carer for Rufus see what our bills come to?", carers)
    assert (asked.names, asked.missing_names) == (1.0, ("Rufus",))
    # A plan named in the asking sentence after a story is still a plan the pages lack.
    team = _evidence("We have five people. How much storage does the Team plan include?", PLANS)
    assert team.missing_names == ("Team",)
    # A question of two parts: the first, cut before ", and", has lost its "?" and still
    # asks only in its last sentence ("does not cover “Rufus”" before).
    parted = _evidence(
        "Our dog walker books appointments for Rufus through the portal as a shared "
        "carer. Can she see what our bills come to, and can she cancel them?",
        carers,
    )
    assert (parted.names, parted.missing_names) == (0.0, ())


def test_a_measure_typed_as_one_word_is_a_value_not_an_identifier() -> None:
    # "75lbs" has a digit, and was read as an identifier no page has: "The knowledge
    # base does not cover “75lbs”". A code the question gives still counts.
    pets = Passage(
        1, "pets#dogs", "pets", "Pet policy", "Dogs",
        "Dogs are welcome in every community.\n\n- Maximum adult weight: 80 lb per dog\n"
        "- Pet rent: $35 a month per pet",
    )  # fmt: skip
    weight = _evidence("is there a weight limit 4 dogs, my lab is like 75lbs", pets)
    assert (weight.names, weight.missing_names) == (0.0, ())
    code = _evidence("is there a weight limit for dogs in building PX-75?", pets)
    assert code.missing_names == ("PX-75",)


def test_the_company_every_page_names_at_a_sentence_start_need_not_be_in_the_answer() -> None:
    # "Fleetway" weighed most of the question, and the answering section does not say
    # it; the other pages do, but at a sentence's start or in a title, which were not
    # read as names. So the answer's passage "left unsaid" what the question hung on.
    length = Passage(
        1, "fleetway/plans#length", "fleetway/plans", "Membership plans and prices",
        "Booking length",
        "The shortest booking is 30 minutes. After that, bookings go up in 15-minute "
        "steps. You can book a car for up to 7 days in one booking.",
    )  # fmt: skip
    about = Passage(
        2, "fleetway/plans#intro", "fleetway/plans", "Membership plans and prices", "",
        "Fleetway is a pay-as-you-drive car club: you book a car by the hour or by the "
        "day, unlock it with the app and pay for the time you use.",
    )  # fmt: skip
    charges = Passage(
        3, "fleetway/charges#intro", "fleetway/charges", "Fleetway charges guide", "",
        "Fees and charges that may apply to your bookings and account.",
    )  # fmt: skip
    question = "What's the shortest booking I can make with Fleetway?"
    passages = [length, about, charges]
    assert GEN.unsaid(question, passages, GEN.score(question, passages)) < 0.1


def test_the_product_every_page_names_is_no_row_a_table_lacks() -> None:
    # Counted before as a missing name: "Quillpad" stands before "app", the noun of
    # the apps table's key column, and no row of that table is keyed "Quillpad".
    apps = Passage(
        1,
        "apps#systems",
        "apps",
        "Desktop and mobile apps",
        "Supported systems",
        "| App | Minimum version |\n|---|---|\n"
        "| iPhone and iPad | iOS 16 |\n| Android phones and tablets | Android 10 |\n",
    )
    plans = Passage(
        2,
        "plans#intro",
        "plans",
        "Plans and pricing",
        "",
        "There are four plans, and every plan of Quillpad includes real-time co-editing.",
    )
    history = Passage(
        3,
        "history#intro",
        "history",
        "Version history",
        "",
        "While you type, Quillpad saves your work, so there is no save button.",
    )
    question = "Which Android version do I need for the Quillpad app?"
    assert _evidence(question, apps, plans, history).names == 0.0
    # Written by one document only, the name may well be a row the table lacks.
    assert _evidence(question, apps, plans).missing_names == ("Quillpad",)


OPS = [
    Passage(
        1,
        "operations#ports",
        "operations",
        "Operations",
        "Ports",
        "The gateway serves HTTP on port 8000. The retriever listens for gRPC on port 7101, "
        "and the generator on port 7102.",
    ),
    Passage(
        2,
        "knowledge-base#ids",
        "knowledge-base",
        "Knowledge base",
        "Chunk ids",
        "Every chunk id is built from the document id and the slug of the heading path, "
        "so an id stays the same when a page is loaded again.",
    ),
]


def test_a_misspelt_question_is_answered_as_the_user_meant_it() -> None:
    # Refused before: "chunck", "bulit" and "genrator" were the rarest terms of the
    # question, in no passage, so coverage never counted them.
    ids = answer_of("how are chunck ids bulit?", OPS)
    assert ids.verdict is Verdict.GROUNDED, ids.refusal_detail
    assert "slug of the heading path" in ids.answer
    port = answer_of("wich port dose the genrator use", OPS)
    assert port.verdict is Verdict.GROUNDED, port.refusal_detail
    assert "7102" in port.answer


def test_a_misspelt_word_is_repaired_from_the_headings_too() -> None:
    # "gardn" was kept: the passages' texts never write "garden", only the page's
    # title and heading do (the retriever's respelling already read them).
    bins = Passage(
        1,
        "garden-waste#prices",
        "garden-waste",
        "Garden waste subscription",
        "Prices",
        "| Bin | Price for the year | With Council Tax Reduction |\n|---|---|---|\n"
        "| First brown bin | £52 | £36 |\n| Each additional bin | £45 | £30 |\n",
    )
    assert GEN.repaired("how much is gardn waste for 1 bin", [bins]) == (
        "how much is garden waste for 1 bin"
    )


def test_a_sentence_that_leans_on_the_one_before_is_answered_with_it() -> None:
    zones = Passage(
        1,
        "delivery-zones#faq",
        "delivery-zones",
        "Delivery zones",
        "FAQ",
        "**Do you ship to PO boxes?**\n"
        "Only USPS and Royal Mail deliver to PO boxes. Other carriers reject the label with "
        "error\n`PCL-2207`.\n",
    )
    final = answer_of("The API rejected my label with PCL-2207. What's wrong?", [zones, PLANS])
    assert final.verdict is Verdict.GROUNDED, final.refusal_detail
    # Before, the answer was "Other carriers reject the label with error PCL-2207." alone.
    assert "PO boxes" in final.answer and "PCL-2207" in final.answer


def test_a_row_is_quoted_with_the_footnote_its_cell_points_to() -> None:
    deadlines = Passage(
        1,
        "payroll#deadlines",
        "payroll",
        "Payroll run deadlines",
        "",
        "| Run type | Approve by |\n"
        "|---|---|\n"
        "| Standard (2-day) | 5:00 p.m. ET, 2 business days before pay day |\n"
        "| Same-day (off-cycle) | 10:00 a.m. ET on pay day† |\n\n"
        "† Same-day runs are limited to $25,000 per run and are meant for final paychecks\n"
        "and corrections, not for regular payroll.\n",
    )
    final = answer_of("What is the limit for a same-day off-cycle pay run?", [deadlines, PLANS])
    assert final.verdict is Verdict.GROUNDED, final.refusal_detail
    # One unit: the row and the note its "†" points to, not the note on its own;
    # beside the note the mark is left out.
    assert "on pay day. Same-day runs are limited to $25,000 per run" in final.answer
    assert "†" not in final.answer


HUB_RETURN = Passage(
    1,
    "cancelling#sending-back-your-hub",
    "cancelling",
    "Cancelling your contract",
    "Sending back your Hub",
    "When your broadband ends, we'll send you a prepaid returns bag. Pop the Hub and its power"
    " cable\ninside and take it to any Post Office or parcel shop within **30 days**. You don't"
    " need to send\nback cables, microfilters or Wi-Fi Boost discs you bought outright. If we"
    " don't get the Hub, we'll\nadd a Hub not returned charge to your final bill.\n\n"
    "Returns are free: the bag is prepaid, so there's no postage to pay.\n",
)


def test_a_sentence_that_lacks_the_asked_value_is_quoted_with_the_next_that_holds_it() -> None:
    question = "How long do I have to send my Hub back after my broadband ends?"
    scored = GEN.score(question, [HUB_RETURN])
    bag = next(s for s in scored if s.text.startswith("When your broadband ends"))
    # In service the second slot went to another page's sentence, so the answer
    # was the first sentence alone: it says how, never how long.
    (quoted,) = _with_asked_value([bag], scored, [AnswerType.DURATION])
    assert quoted.text == (
        "When your broadband ends, we'll send you a prepaid returns bag. Pop the Hub and its"
        " power cable inside and take it to any Post Office or parcel shop within 30 days."
    )
    # Asked for a name (what a sentence "holds" is loose there), or with the next
    # sentence already in the answer, the sentence stays as it is.
    assert _with_asked_value([bag], scored, [AnswerType.NAME])[0].text == bag.text
    pop = next(s for s in scored if s.text.startswith("Pop the Hub"))
    assert [s.text for s in _with_asked_value([bag, pop], scored, [AnswerType.DURATION])] == [
        bag.text,
        pop.text,
    ]


def test_the_asked_value_is_taken_only_from_the_same_paragraph() -> None:
    bag = "When your broadband ends, we'll send you a prepaid returns bag."
    pop = (
        "Pop the Hub and its power cable inside and take it to any Post Office or parcel"
        " shop within 30 days."
    )
    # Wrapped lines and emphasis ("**30 days**") are one paragraph as read.
    assert _one_paragraph(HUB_RETURN.text, bag, pop)
    # A blank line apart, the "14 days" is the final bill's, not the Hub's.
    bill = "Your final bill arrives within 14 days of your last day."
    assert not _one_paragraph(f"{bag}\n\n{bill}\n", bag, bill)
    assert not _one_paragraph(HUB_RETURN.text, pop, bag)  # in order only


def test_a_row_quoted_with_its_note_shows_no_stray_asterisk() -> None:
    # "Early termination charge*" beside "We never charge more…": the reader saw a
    # raw Markdown-looking asterisk in the answer.
    fees = Passage(
        1,
        "fees#charges-list",
        "fees",
        "Fees and charges",
        "Charges list",
        "| Charge | Great Britain & NI | When it applies |\n"
        "|---|---|---|\n"
        "| Early termination charge* | £8.50 per remaining month | Leaving Fibre 40 early |\n"
        "| Late payment fee | £7.50 | A bill unpaid 14 days after its due date |\n\n"
        "\\* We never charge more than the monthly payments left on your contract.\n",
    )
    final = answer_of("What is the early termination charge per month?", [fees, PLANS])
    assert final.verdict is Verdict.GROUNDED, final.refusal_detail
    assert "Early termination charge — " in final.answer
    assert "We never charge more than the monthly payments left" in final.answer
    assert "*" not in final.answer


def test_a_row_is_quoted_with_a_cell_that_says_what_the_question_asks_about() -> None:
    browsers = Passage(
        1,
        "web-client#browsers",
        "web-client",
        "Web client requirements",
        "",
        "| Browser | Minimum version | Huddles supported | Notes |\n"
        "|---|---|---|---|\n"
        "| Google Chrome | 118 | Yes | |\n"
        "| Mozilla Firefox | 115 ESR | Yes | Screen sharing needs Firefox 121 |\n"
        "| Apple Safari | 16.4 | Audio only | Video huddles on the roadmap |\n",
    )
    final = answer_of("firefox verison needed to screenshare in the web app", [browsers, PLANS])
    assert final.verdict is Verdict.GROUNDED, final.refusal_detail
    # Before, the row was quoted with its Minimum version cell alone ("115 ESR"): the
    # Notes cell, which says screen sharing in the question's own words, was left out.
    assert "Minimum version: 115 ESR" in final.answer
    assert "Notes: Screen sharing needs Firefox 121" in final.answer
    assert "Huddles supported" not in final.answer


def test_how_many_times_is_answered_by_a_count_of_attempts() -> None:
    # "How many times can I type the wrong password" counts repetitions, which a page
    # says as attempts, tries or retries: the unit holds the asked kind of value.
    lockout = "After 5 failed password attempts in a row the account is locked for 15 minutes."
    assert _holds_asked(lockout, AnswerType.NUMBER, stem("times"))
    assert _holds_asked("Failed deliveries are retried 8 times.", AnswerType.NUMBER, stem("times"))
    # Other nouns are still counted as themselves.
    assert not _holds_asked(lockout, AnswerType.NUMBER, stem("codes"))


def test_the_llm_prompt_text_keeps_an_faqs_question_above_its_answer() -> None:
    faq = Passage(
        1,
        "zones#faq",
        "delivery-zones",
        "Delivery zones",
        "FAQ",
        "**Do you ship to PO boxes?**\n"
        "Only USPS and Royal Mail deliver to PO boxes. Other carriers reject the label.\n",
    )
    assert GEN.standalone_text(faq).splitlines() == [
        "Do you ship to PO boxes?",
        "Only USPS and Royal Mail deliver to PO boxes.",
        "Other carriers reject the label.",
    ]


def test_an_acronym_the_page_spells_out_is_answered_not_refused() -> None:
    page = Passage(
        1,
        "security#sso",
        "security",
        "Security",
        "Single sign-on",
        "Single sign-on is available on the Scale plan. Members then sign in through "
        "your identity provider.",
    )
    final = run("Which plan has SSO?", [page])[-1]
    assert isinstance(final, Final)
    assert final.verdict == Verdict.GROUNDED, final.refusal_detail
    assert "Scale plan" in final.answer


RESET = Passage(
    1,
    "account#reset",
    "account",
    "Account",
    "Resetting your password",
    "To reset your password:\n\n"
    "1. Click Forgot password under the sign-in button.\n"
    "2. Enter the email address you signed up with.\n"
    "3. Open the email we send you and click the reset link.\n"
    "4. Choose a new password of at least 12 characters.\n",
)


def test_a_step_asked_by_number_is_answered_alone() -> None:
    final = run("What's the third step to reset my password?", [RESET])[-1]
    assert isinstance(final, Final)
    assert "click the reset link" in final.answer
    # Not the whole list: the neighbouring steps are not the answer.
    assert "Enter the email address" not in final.answer
    assert "12 characters" not in final.answer


def test_the_last_step_and_the_first_thing_are_steps_asked_by_their_place() -> None:
    # "What's the first thing I should do?" led with step 3, which says more of the
    # question's words; "the last step" is the list's last item, whatever its number.
    security = Passage(
        1,
        "account-security#someone-else",
        "account-security",
        "Keeping your account safe",
        "If someone else is using your account",
        "If you see orders you didn't place:\n\n"
        "1. Tap Account → Security → Sign out of all devices.\n"
        "2. Remove saved cards you don't recognise.\n"
        "3. Report unknown orders on your account within 7 days through Help → Report a "
        "problem. Orders reported later are checked, but we can't promise a refund.\n",
    )
    first = answer_of(
        "I think someone else is ordering on my account. What's the first thing I should do?",
        [security],
    )
    assert "Sign out of all devices" in first.answer, first.answer
    assert "Report unknown orders" not in first.answer, first.answer
    last = answer_of("What's the last step to reset my password?", [RESET])
    assert "12 characters" in last.answer, last.answer
    assert "Forgot password" not in last.answer, last.answer


def test_a_whole_list_joins_its_items_without_doubled_punctuation() -> None:
    guests = Passage(
        1,
        "guests#rules",
        "guests",
        "Guest access",
        "Guest access",
        "Guests cannot:\n\n- create channels.\n- see the member directory.\n- install apps.\n",
    )
    final = run("What are guests not allowed to do?", [guests])[-1]
    assert isinstance(final, Final)
    assert "create channels; see the member directory; install apps" in final.answer
    assert ".;" not in final.answer
    # Items that end as a sentence running through its list does ("…bill;", "…; or").
    waived = Passage(
        1, "cancelling#waived", "cancelling", "Cancelling", "When we waive the fee",
        "We'll waive the early exit fee if:\n\n- you're moving more than 25 km away;\n"
        "- you can't train for medical reasons; or\n- you're in financial hardship.\n",
    )  # fmt: skip
    final = run("When do you waive the early exit fee?", [waived])[-1]
    assert isinstance(final, Final)
    assert (
        "moving more than 25 km away; you can't train for medical reasons; you're in "
        "financial hardship"
    ) in final.answer
    assert ";;" not in final.answer and "; or;" not in final.answer


def test_a_name_a_page_is_titled_with_is_known_even_where_a_table_lacks_its_row() -> None:
    # "my Max plan" beside a table of fleet plans: the memberships page is titled with
    # Max, so the question is about something the pages know.
    fleet = Passage(
        1, "fleet#plans", "fleet", "Fleet accounts", "Fleet plans",
        "| Plan | Price |\n|---|---|\n| Fleet Essentials | £9 |\n| Fleet Pro | £19 |\n",
    )  # fmt: skip
    pause = Passage(
        2, "members#pause", "members", "Memberships — Go, Plus and Max", "Pausing",
        "You can pause a paid membership for 1, 2 or 3 months, once per calendar year.",
    )  # fmt: skip
    question = "Can I stop paying for my Max plan for a while without cancelling it?"
    evidence = _evidence(question, fleet, pause)
    assert (evidence.names, evidence.missing_names) == (0.0, ())
    # Without the title, Max is a plan the fleet table does not have, as before.
    untitled = replace(pause, title="Memberships")
    evidence = _evidence(question, fleet, untitled)
    assert evidence.missing_names == ("Max",)


def test_a_question_told_as_a_story_leans_towards_its_closing_question() -> None:
    story = "I left my car at a fast charger while I had lunch."
    asked = "How much is the fee for every minute it sits there?"
    embedder = OnnxMiniLMEmbedder()
    generator = ExtractiveGenerator(embedder)
    whole, last = embedder.embed([f"{story} {asked}", asked])
    focused = generator._focused(parts(f"{story} {asked}"), {})[0]
    assert float(focused @ last) > float(whole @ last)
    assert float(np.linalg.norm(focused)) == pytest.approx(1.0, abs=1e-5)
    # A one-sentence question is embedded as it is.
    assert np.allclose(generator._focused(parts(asked), {})[0], last, atol=1e-6)


def _unit(part: int, passage: int, text: str, support: float) -> ScoredUnit:
    p = Passage(passage, f"s{passage}", f"d{passage}", "Billing", "", text)
    return ScoredUnit(p, 0, text, support, part=part)


def test_each_part_takes_a_close_runner_up_after_every_part_has_its_best() -> None:
    # Ranked order within each part; the balance rule ranked second for part 0.
    scored = [
        _unit(0, 1, "Money in your balance is used for postage first.", 0.48),
        _unit(0, 2, "You can withdraw a balance over $50 to your bank account.", 0.45),
        _unit(0, 3, "Refunds go to your balance.", 0.30),  # under 85 % of the best
        _unit(1, 4, "Withdrawals reach your bank in 3 business days.", 0.50),
        _unit(1, 5, "Withdrawals are free of charge for every plan.", 0.47),
    ]
    one = ExtractiveGenerator(FakeEmbedder(), ExtractiveConfig(part_sentences=1))
    assert [s.passage.number for s in one.select(scored, 256)] == [1, 4]
    two = ExtractiveGenerator(FakeEmbedder(), ExtractiveConfig(part_sentences=2))
    # Two per part: each part's runner-up joins its best. Capped at max_sentences (3)
    # as before, part 1's runner-up never fitted.
    assert [s.passage.number for s in two.select(scored, 256)] == [1, 2, 4, 5]
    # max_sentences is the length of a one-part answer, not of this one.
    short = ExtractiveGenerator(FakeEmbedder(), ExtractiveConfig(max_sentences=2))
    assert [s.passage.number for s in short.select(scored, 256)] == [1, 2, 4, 5]
    one_part = [s for s in scored if s.part == 0]
    assert [s.passage.number for s in short.select(one_part, 256)] == [1, 2]
    # Every part's best comes before any part's runner-up: with the answer's token
    # budget left for three units, part 1's runner-up is the one left out.
    assert [s.passage.number for s in two.select(scored, 34)] == [1, 2, 4]


def test_a_runner_up_four_fifths_as_well_supported_joins_the_answer() -> None:
    # "how far in advance can you book a car": the ranker put the longest booking
    # first, and "Up to 3 months ahead." (80 % of its support) was left out at 85 %.
    scored = [
        _unit(0, 1, "You can book a car for up to 7 days in one booking.", 0.689),
        _unit(0, 2, "Up to 3 months ahead.", 0.551),
        _unit(0, 2, "Popular cars at weekends go quickly, so book early.", 0.52),
    ]
    chosen = ExtractiveGenerator(FakeEmbedder()).select(scored, 256)
    assert [s.text for s in chosen] == [scored[0].text, scored[1].text]


def test_an_amount_written_short_is_a_number_not_a_name_the_pages_lack() -> None:
    # "$100k" is "$100,000" written short; like a plain number it is a value the
    # question asks about, not a product or plan the pages do not know.
    taxes = Passage(
        1, "taxes#us", "taxes", "Taxes", "US sales tax",
        "Automatic tax calculation is free for your first $100,000 in US sales each "
        "calendar year. After that, it costs 0.5% of each taxed order.",
    )  # fmt: skip
    question = "We'll go past $100k in US sales. Does automatic tax calculation cost money then?"
    evidence = _evidence(question, taxes)
    assert evidence.missing_names == ()
    # An identifier the pages lack is still a name they do not know.
    question = "Does automatic tax calculation cost money on the TX-900 add-on?"
    evidence = _evidence(question, taxes)
    assert evidence.missing_names == ("TX-900",)


def test_a_chat_shorthand_is_the_word_it_stands_for_not_a_name_the_pages_lack() -> None:
    # "b4" holds a digit: it read as an identifier no page has ("does not cover “b4”").
    text = "If a card is declined, we freeze the store. After 60 days frozen, we close it."
    frozen = Passage(1, "payments#frozen", "payments", "Payments", "Frozen stores", text)
    question = "store frozen card declined, how many days b4 u close it"
    assert GEN.repaired(question, [frozen]).endswith("how many days before you close it")
    assert _evidence(question, frozen).missing_names == ()


def test_a_labelled_line_is_keyed_by_its_label_as_a_row_by_its_first_cell() -> None:
    # "Variants per product: 250" answers "how many variants can one product have"
    # as the row "Variants per product | 250" would; the label gets the row key's due.
    limits = Passage(
        1, "products#limits", "products", "Products", "Limits",
        "These limits are the same on every plan:\n\n"
        "- **Options per product:** 3\n"
        "- **Variants per product:** 250\n"
        "- **Images per product:** 200, each up to 20 MB\n",
    )  # fmt: skip
    scored = GEN.score("How many variants can one product have?", [limits])
    keyed = {s.unit.text: s.features[UNIT_FEATURES.index("row_key")] for s in scored if s.unit}
    assert keyed["Variants per product: 250"] == 1.0
    assert keyed["Options per product: 3"] == 0.0  # "options" is not asked about
    assert keyed["Images per product: 200, each up to 20 MB"] == 0.0
    support = {s.unit.text: s.support for s in scored if s.unit}
    assert support["Variants per product: 250"] > support["Options per product: 3"]


SLA = Passage(
    1, "support#sla", "support", "Support plans and uptime SLA", "Uptime SLA",
    "If we miss the SLA in a calendar month, you can claim a credit on that month's plan "
    "and compute charges:\n\n"
    "| Monthly uptime (Scale) | Credit |\n|---|---|\n"
    "| Below 99.95% but at least 99.0% | 10% |\n"
    "| Below 99.0% but at least 95.0% | 25% |\n"
    "| Below 95.0% | 50% |\n\n"
    "Credits are capped at 50% of the month's charges.",
)  # fmt: skip


def test_the_tier_a_value_of_the_question_falls_in_answers_it() -> None:
    # No row's key writes "98.5%", and "Scale" (a name) read every row as another
    # row's: the answer was the cap beneath the table.
    question = (
        "We're on Scale and our monthly uptime came in at 98.5%. What credit does that get us?"
    )
    final = answer_of(question, [SLA])
    assert final.verdict is Verdict.GROUNDED
    assert final.answer.startswith("Below 99.0% but at least 95.0% — Credit: 25%.")
    # The customer's own value is no name the pages lack.
    assert _evidence(question, SLA).missing_names == ()


NOTICE = Passage(
    1, "refunds#cancelling", "refunds", "Cancellations and refunds", "Cancelling a booking",
    # A plain-text clause as ingestion passes it on: its lettered tiers as list items.
    "1.2 The refund you receive depends on how much notice you give before the departure "
    "time of the first sailing on the booking:\n\n"
    "- (a) 7 days or more before departure: a full refund, less a cancellation fee of "
    "£4.00 per booking;\n"
    "- (b) less than 7 days but at least 24 hours before departure: a refund of 50% of "
    "the fare;\n"
    "- (c) less than 24 hours before departure, or if you do not travel and do not "
    "cancel: no refund.\n",
)  # fmt: skip


def test_the_notice_tier_a_question_falls_in_answers_it() -> None:
    # "five days away" is in the tier "less than 7 days but at least 24 hours": no term
    # of the question names it, and the answer was another page's sentence.
    question = (
        "I booked a crossing for next Thursday but now I can't go, and that's five days "
        "away. What will I get back if I cancel now?"
    )
    scored = GEN.score(question, [NOTICE])
    keyed = {s.unit.text: s.features[UNIT_FEATURES.index("row_key")] for s in scored if s.unit}
    tiers = {text[:3]: key for text, key in keyed.items() if text[:3] in ("(a)", "(b)", "(c)")}
    assert tiers == {"(a)": 0.0, "(b)": 1.0, "(c)": 0.0}
    final = answer_of(question, [NOTICE])
    assert final.verdict is Verdict.GROUNDED
    assert "a refund of 50% of the fare" in final.answer
    assert "cancellation fee of £4.00" not in final.answer


def test_a_row_keyed_by_a_length_of_time_answers_that_length_written_short() -> None:
    # "1hr" is the row "1 hour"; every row key's one term ("hour") named them all, and
    # the answer led with "1.5 hours" and "2 hours".
    prices = Passage(
        1, "prices#lessons", "prices", "Lesson prices", "Pay as you go",
        "| Lesson length | Manual | Automatic |\n|---|---|---|\n"
        "| 1 hour | £43 | £47 |\n| 1.5 hours | £63 | £69 |\n| 2 hours | £84 | £92 |\n",
    )  # fmt: skip
    final = answer_of("how much is a 1hr automatic lesson??", [prices])
    assert final.verdict is Verdict.GROUNDED
    assert final.answer.startswith("1 hour — Automatic: £47.")
    assert "£92" not in final.answer
    assert content_terms("a 1hr lesson") == content_terms("a 1 hour lesson")
    assert "min" in content_terms("min/max password length")  # a minimum, not minutes


def test_hours_written_short_hold_the_day_asked_about() -> None:
    # "Sat 9 a.m.-1 p.m." answers "on a Saturday"; "Mon-Fri" holds a Wednesday, and a
    # season "Apr-Oct" holds August.
    hours = "Mon\u2013Fri 8 a.m.\u20139 p.m.; Sat 9 a.m."
    assert {"saturday", "friday", "wednesday"} <= content_terms(hours)
    assert "sunday" not in content_terms(hours)
    assert stem("august") in content_terms("Summer (Apr\u2013Oct): £95")
    # Not every "sat", "Sun" or "may" is a day or a month.
    assert _calendar_terms("I sat down. Sun Life, you may to the end") == set()
    lines = Passage(
        1, "pharmacy#hours", "pharmacy", "Pharmacist hours and contact", "Phone lines",
        "| Line | Number | Hours |\n|---|---|---|\n"
        "| Member Services | 1-800-555-0150 | Mon\u2013Fri 7 a.m.\u201310 p.m. |\n"
        "| Prescriber line | 1-800-555-0133 | Mon\u2013Fri 8 a.m.\u20139 p.m.; "
        "Sat 9 a.m.\u20131 p.m. |\n",
    )  # fmt: skip
    scored = GEN.score("Which line can I call on a Saturday?", [lines])
    coverage = {s.text.split(" — ")[0]: s.coverage for s in scored}
    assert coverage["Prescriber line"] > coverage["Member Services"]
    assert max(scored, key=lambda s: s.support).text.startswith("Prescriber line")


def test_the_words_for_a_weight_or_an_amount_are_said_by_the_value() -> None:
    # "heavy" and "amount" name the kind of value asked; "about 24 kg" and "£5" say
    # them. Counted as words the pages lack, both questions were refused.
    bikes = Passage(
        1, "bikes#ebikes", "bikes", "Bike rentals guide", "E-bikes",
        "Don't carry e-bikes on a car's trunk rack. They weigh about 24 kg; use a hitch "
        "rack rated for e-bikes.",
    )  # fmt: skip
    evidence = _evidence("How heavy are your e-bikes?", bikes)
    assert evidence.missing_words == ()
    assert evidence.unsaid == 0.0
    wallet = Passage(
        1, "laundry#wallet", "laundry", "Laundry", "Paying for laundry",
        "Download the WashPoint app and add money to your wallet. The minimum top-up is "
        "£5, and wallet money doesn't expire.",
    )  # fmt: skip
    evidence = _evidence("What's the smallest amount I can top up in the WashPoint app?", wallet)
    assert "amount" not in evidence.missing_words
    assert evidence.unsaid == 0.0


def test_a_month_or_a_day_is_no_name_the_pages_lack() -> None:
    hold = Passage(
        1, "suspending#fees", "suspending", "Suspending your membership", "Fees",
        "You can suspend your membership for 1 to 12 weeks at a time. "
        "A suspension costs $3.50 per week, charged on the day it starts.",
    )  # fmt: skip
    question = (
        "I'm away for six weeks in March. Can I suspend my membership, and what does it cost?"
    )
    assert _evidence(question, hold).missing_names == ()
    # A name the pages do not know still is one.
    question = "Can I suspend my Titanium membership in March?"
    assert _evidence(question, hold).missing_names == ("Titanium",)


def test_a_count_no_row_of_a_counted_table_has_is_a_row_the_pages_lack() -> None:
    # Before: "a 48-month certificate" was a value, no name, and the 36-month row's
    # APY answered it.
    rates = Passage(
        1, "certificates#rates", "certificates", "Share certificates", "Rates",
        "| Term | Minimum deposit | APY |\n|---|---|---|\n"
        "| 6 months | $500 | 3.50% |\n| 12 months | $500 | 3.75% |\n"
        "| 36 months | $1,000 | 3.45% |",
    )  # fmt: skip
    assert _evidence("What's the APY on a 48-month share certificate?", rates).names == 1.0
    # The counts the table has are its rows, and a count of something else is a value.
    assert _evidence("What's the APY on a 12-month share certificate?", rates).names == 0.0
    assert _evidence("What's the APY if I deposit for 48 hours?", rates).names == 0.0
    final = answer_of("What's the APY on a 12-month share certificate?", [rates])
    assert final.verdict is Verdict.GROUNDED and "12 months — APY: 3.75%" in final.answer


def test_a_year_the_question_asks_about_that_no_passage_writes_is_not_covered() -> None:
    # Before: a year was a number, always "known", and the current year's dates
    # answered "What are the order deadlines for Christmas 2027?".
    deadlines = Passage(
        1, "holiday-shipping#deadlines", "holiday-shipping", "Holiday shipping", "Deadlines",
        "Holiday order deadlines for 2026: to get your order by December 24, place it by "
        "December 14 for Standard shipping and December 18 for Expedited.",
    )  # fmt: skip
    asked = "What are the order deadlines for delivery by Christmas 2027?"
    assert _evidence(asked, deadlines).missing_names == ("2027",)
    # The year the pages write is covered, and a year told in the story is the asker's.
    assert _evidence("What are the deadlines for Christmas 2026?", deadlines).names == 0.0
    told = "I ordered a gift in 2025 and it never came. What are the order deadlines?"
    assert _evidence(told, deadlines).names == 0.0
    # A financial year written "2026-27" is one term, and it writes 2026 all the same.
    charges = Passage(
        1, "council-tax#bands", "council-tax", "Council Tax", "Charges",
        "| Band | Annual charge 2026-27 |\n|---|---|\n| A | £1,512.88 |\n| B | £1,765.03 |",
    )  # fmt: skip
    assert _evidence("What is the Council Tax for a Band B home in 2026?", charges).names == 0.0


def test_the_form_of_a_reference_answers_what_it_looks_like() -> None:
    # Before: "What does a booking reference look like?" was refused: the form
    # shares few words with the question, and several passages touched on bookings.
    changing = Passage(
        1, "changing-your-booking#before", "changing-your-booking", "Changing your booking",
        "Before you start",
        "Have your booking reference to hand. It's 8 characters long, starts with QF and "
        "is at the top of your confirmation email (for example QF4KT27M).",
    )  # fmt: skip
    account = Passage(
        2, "your-account#account", "your-account", "Your account, sign-in and security",
        "Your Quayside account",
        "A Quayside account lets you see all your bookings in one place, save your vehicle "
        "details and keep your Islander Card number on file. You don't need an account to "
        "book, but you do need one to use the Quayside app.",
    )  # fmt: skip
    errors = Passage(
        3, "booking-errors#codes", "booking-errors", "Booking error codes", "Error codes",
        "If something goes wrong while you book, our website and the Quayside app show an "
        "error code starting with QFE-. Passwords must be at least 10 characters.",
    )  # fmt: skip
    asked = "What does a Quayside booking reference look like? I can't find mine."
    final = answer_of(asked, [account, changing, errors])
    assert final.verdict is Verdict.GROUNDED
    assert "8 characters long, starts with QF" in final.answer
    # A reference no passage gives the form of is not answered by another one's form.
    final = answer_of("What does a Quayside gift voucher code look like?", [account, errors])
    assert "characters" not in final.answer


def test_a_deadline_asked_is_said_by_the_limit_a_page_states() -> None:
    # Before: "deadline" was a word no passage holds, so "group rooming list deadline"
    # was refused beside "must reach us at least 14 days before arrival".
    groups = Passage(
        1, "group-bookings#names", "group-bookings", "Group bookings", "Names and payment",
        "2.3 The names of all guests (the rooming list) must reach us at least 14 days "
        "before arrival. 2.4 The balance is due 30 days before arrival.",
    )  # fmt: skip
    evidence = _evidence("group rooming list deadline", groups)
    assert "deadline" not in evidence.missing_words
    assert evidence.missing == 0.0


def test_a_company_known_by_its_address_is_no_name_the_pages_lack() -> None:
    # Before: "Shieldline" was a name the evidence does not cover, because the pages
    # wrote it only in "consumeraffairs@shieldline.example", which is one term.
    conditions = Passage(
        1, "policy-conditions#suit", "policy-conditions", "Policy conditions", "Suit against us",
        "No action can be brought against us unless the action is started within 2 years "
        "after the date of loss. Complaints: write to consumeraffairs@shieldline.example.",
    )  # fmt: skip
    asked = "How long after a loss do I have to start a lawsuit against Shieldline?"
    assert _evidence(asked, conditions).missing_names == ()
    assert _evidence("Can Coverline sue on my behalf?", conditions).missing_names == ("Coverline",)


def test_a_rule_for_ages_answers_a_question_that_gives_one() -> None:
    # Before: refused. "I'm 20 … Am I old enough to join?" shares no word with
    # "you must be aged between 21 and 79": the age the question gives is the key.
    passages = [
        Passage(
            1, "driver-eligibility#age", "driver-eligibility",
            "Who can drive: driver eligibility rules", "DRIVER ELIGIBILITY RULES",
            "1. AGE\n\n1.1 To join, you must be aged between 21 and 79. Members can keep "
            "driving until their 80th birthday.\n\n1.2 Members aged 21 to 24 have a higher "
            "insurance excess; see Damage, insurance excess and Excess Reduction.",
        ),
        Passage(
            2, "faq#extend", "faq", "Booking and account FAQs",
            "Q: Can I extend a booking while I'm driving?",
            "Yes, in the app, as long as the car isn't booked by someone else straight after "
            "you. Extend at least 15 minutes before your booking ends.",
        ),
        Passage(
            3, "driver-eligibility#points", "driver-eligibility",
            "Who can drive: driver eligibility rules", "3. ENDORSEMENTS AND CONVICTIONS",
            "3.1 You may have no more than 6 penalty points on your licence.\n\n3.2 You can't "
            "join if, in the last 5 years, you have had a driving ban of any length.",
        ),
    ]  # fmt: skip
    final = answer_of("I'm 20 and passed my test a while back. Am I old enough to join?", passages)
    assert final.verdict is Verdict.GROUNDED
    assert final.answer.startswith("1.1 To join, you must be aged between 21 and 79.")


def test_a_size_typed_without_spaces_names_the_row_written_with_them() -> None:
    prints = Passage(
        1, "print-prices#metal", "print-prices", "Print sizes and prices", "Metal prints",
        "| Size (in) | Metal print ($) | Canvas ($) |\n|---|---|---|\n"
        "| 8 x 10 | 44.99 | 39.99 |\n| 12 x 12 | 59.99 | 54.99 |\n| 16 x 20 | 109.99 | 89.99 |",
    )  # fmt: skip
    # Before: "12x12" was a name the pages lack ("does not cover “12x12”").
    assert _evidence("What does a 12x12 metal print cost?", prints).missing_names == ()
    final = answer_of("What does a 12x12 metal print cost?", [prints])
    assert final.verdict is Verdict.GROUNDED and "12 x 12" in final.answer


def test_a_holiday_is_no_name_the_pages_lack() -> None:
    # Before: "does not cover “Christmas”", where the page gives the closure's dates.
    closure = Passage(
        1, "service-desk#closure", "service-desk", "Service desk hours", "End-of-year closure",
        "The Service Desk is closed from 24 December to 2 January. During the closure, "
        "urgent issues can be reported on the after-hours line, (03) 5550 4199.",
    )  # fmt: skip
    question = "What number do I ring for an urgent outage during the Christmas closure?"
    assert _evidence(question, closure).missing_names == ()
    final = answer_of(question, [closure])
    assert final.verdict is Verdict.GROUNDED and "(03) 5550 4199" in final.answer


def test_a_number_of_something_and_the_pronoun_i_are_no_names_the_pages_lack() -> None:
    # "24-hour" was read as an identifier no page has ("does not cover “24-hour”"),
    # and "After I cancel" as naming an "I" row of a table keyed "When you cancel".
    contacts = Passage(
        1, "runbook#contacts", "runbook", "Disruption runbook", "Who to call",
        "Operations Control Centre (OCC), 24 hours: 020 7946 0877. "
        "Call the OCC before you cancel a sailing.",
    )  # fmt: skip
    assert (
        _evidence(
            "What's the 24-hour phone number for the Operations Control Centre?", contacts
        ).missing_names
        == ()
    )
    refunds = Passage(
        1, "refunds#table", "refunds", "Cancellations and refunds", "What you get back",
        "| When you cancel | Refund |\n|---|---|\n"
        "| More than 7 days before sailing | Full refund |\n"
        "| 7 days or less before sailing | 50% |\n\nRefunds usually arrive within 7 working days.",
    )  # fmt: skip
    assert (
        _evidence(
            "After I cancel, how long does a refund to my card usually take to arrive?", refunds
        ).missing_names
        == ()
    )
    # An identifier the pages do not have still is one.
    assert _evidence("What does error OCC-24 mean?", contacts).missing_names == ("OCC-24",)


def test_a_price_question_is_answered_with_the_unit_that_gives_a_price() -> None:
    # The waiver list's lead-in names the fee and the agreement and ranked first; a
    # price question answered without a price answers nothing.
    cancelling = Passage(
        1, "cancelling#fees", "cancelling", "Cancelling your membership", "Fees",
        "12-month agreements can be cancelled without a fee once the 12 months are up. "
        "If you cancel before the end of the 12 months, you pay an early exit fee of $149 "
        "as well as the 30 days' notice.",
    )  # fmt: skip
    waived = Passage(
        2, "cancelling#waived", "cancelling", "Cancelling your membership",
        "When we waive the early exit fee",
        "We'll cancel a 12-month agreement without the early exit fee if:\n\n"
        "- you're moving house more than 25 km from the nearest club;\n"
        "- you're experiencing financial hardship.\n",
    )  # fmt: skip
    final = answer_of("What's the early exit fee on a 12-month agreement?", [cancelling, waived])
    assert final.answer.startswith("If you cancel before the end of the 12 months, you pay an")
    assert "$149" in final.answer


def test_a_value_is_quoted_as_it_stands_not_from_the_note_that_changed_it() -> None:
    # The changelog's sentence ranked first and put the old value in the answer beside
    # the new one; the plans page says it plainly.
    changelog = Passage(
        1, "changelog#april", "changelog", "Changelog", "April 2025",
        "Free Hobby instances now sleep after 30 minutes without traffic instead of "
        "15 minutes, and wake faster.",
    )  # fmt: skip
    plans = Passage(
        2, "plans#hobby", "plans", "Plans and pricing", "Hobby",
        "On Hobby, each app gets one instance free. Free instances sleep after 30 minutes "
        "without traffic and wake on the next request.",
    )  # fmt: skip
    final = answer_of("How long before a free Hobby instance goes to sleep?", [changelog, plans])
    assert "30 minutes" in final.answer
    assert "15 minutes" not in final.answer
    # Alone, the note still answers: the new value is in it.
    final = answer_of("How long before a free Hobby instance goes to sleep?", [changelog])
    assert "30 minutes" in final.answer


def test_a_row_keyed_with_instead_of_names_an_option_and_tells_no_change() -> None:
    # "Store credit instead of refund" read as a release note's "instead of": the row
    # was set aside for its neighbours, and the answer quoted every other action's limit.
    limits = Passage(
        1, "authority#limits", "authority", "Refund authority", "Approval limits",
        "| Action | Tier 1 agent | Tier 2 agent |\n|---|---|---|\n"
        "| Free reprint (order value) | up to $150 | up to $500 |\n"
        "| Refund to original payment | up to $75 | up to $300 |\n"
        "| Store credit instead of refund | up to $100 | up to $400 |\n",
    )  # fmt: skip
    final = answer_of("What's the store credit limit for a Tier 2 agent?", [limits])
    assert "up to $400" in final.answer


def test_a_band_named_by_its_letter_answers_alone() -> None:
    # "a Band E car" met every band's row on "band" (one letter is no term), and the
    # answer quoted three bands' prices; the letter with its noun tells the row.
    permits = Passage(
        1, "permits#prices", "permits", "Resident parking permits", "Prices",
        "| Band | CO2 emissions (g/km) | First permit (£) | Second permit (£) |\n"
        "|---|---|---|---|\n"
        "| A | 0 | 30 | 60 |\n"
        "| B | 1 to 110 | 80 | 135 |\n"
        "| C | 111 to 150 | 115 | 180 |\n"
        "| E | 186 to 225 | 185 | 280 |\n",
    )  # fmt: skip
    final = answer_of("How much is a second permit for a Band E car?", [permits])
    assert "280" in final.answer
    assert "135" not in final.answer and "180" not in final.answer


def test_a_column_the_question_says_most_of_answers_alone() -> None:
    # Every column was "Price by species (£) <species>", and none is said in full, so
    # the answer quoted the dog's and the cat's prices beside the rabbit's.
    fees = Passage(
        1, "fees#procedures", "fees", "Consultation and procedure fees", "Routine procedures",
        "| | Price by species (£, inc. VAT) | | |\n|---|---:|---:|---:|\n"
        "| **Procedure** | **Dog** | **Cat** | **Rabbit** |\n"
        "| Spay (female neuter) | 425.00 | 139.00 | 165.00 |\n"
        "| Castration (male neuter) | 315.00 | 99.00 | 129.00 |\n",
    )  # fmt: skip
    final = answer_of("What's the price to castrate a male rabbit?", [fees])
    assert "Rabbit: 129.00" in final.answer
    assert "315.00" not in final.answer and "99.00" not in final.answer


def test_a_header_naming_the_row_is_not_the_asked_column() -> None:
    # "Proportion of Band D" met "the Band D charge" on the row's own name, and the
    # answer gave the proportion, not the charge.
    bands = Passage(
        1, "council-tax#bands", "council-tax", "Council Tax bands and charges", "Charges",
        "| Band | Proportion of Band D | Annual charge (£) |\n|---|---|---|\n"
        "| C | 8/9 | 2,017.17 |\n| D | 9/9 | 2,269.32 |\n| E | 11/9 | 2,773.61 |\n",
    )  # fmt: skip
    final = answer_of("What's the Band D charge this year?", [bands])
    assert "Annual charge (£): 2,269.32" in final.answer
    assert "2,017.17" not in final.answer


def test_opening_times_are_said_by_the_hours_a_page_gives() -> None:
    # Before: refused. "opening times" was no time-of-day question, and its words,
    # absent from "Hours: Monday to Friday, 9am to 5pm", weighed as what it hung on.
    support = Passage(
        1, "branches#client-support", "branches", "Branches and opening hours",
        "Client Support",
        "For questions about your account, the Pet Health Plan, invoices or the client "
        "portal, contact our Client Support team.\n\n- Phone: 0113 496 0150\n"
        "- Email: support@ashgrove.example\n- Hours: Monday to Friday, 9am to 5pm",
    )  # fmt: skip
    branch = Passage(
        2, "branches#leeds", "branches", "Branches and opening hours", "Leeds",
        "Our Leeds branch is on Kirkstall Road, with free parking behind the building. "
        "Nurse clinics run on Tuesday and Thursday afternoons.",
    )  # fmt: skip
    final = answer_of("client support opening times?? need to sort my plan dd", [support, branch])
    assert final.verdict is Verdict.GROUNDED
    assert "Monday to Friday, 9am to 5pm" in final.answer


def test_a_sentence_that_only_shares_an_identifier_with_another_is_no_release_note() -> None:
    # "no longer available" tells no change of a value: both units stay in the answer.
    errors = Passage(
        1, "api#errors", "api", "API", "Errors",
        "Errors have an HTTP status and a code such as BW-E2204:\n\n"
        "| Code | HTTP | Meaning |\n|---|---|---|\n"
        "| BW-E2204 | 409 | The slot is no longer available (double booking prevented). |\n",
    )  # fmt: skip
    final = answer_of("An API call failed with BW-E2204. What does it mean?", [errors])
    assert "The slot is no longer available" in final.answer


def test_us_in_capitals_names_the_country_and_us_the_pronoun_nothing() -> None:
    # "a US card" was read as the pronoun "us", so the question named no row of a
    # table keyed "Cards (US cards)" / "International cards".
    assert "us" in question_terms("What's the processing fee for a US card?")
    assert "us" in question_terms("Do you ship to the U.S.?")
    assert "us" not in question_terms("Can you send us the invoice again?")


def test_a_header_said_by_one_word_yields_to_the_one_said_most_of() -> None:
    # "What's the annual-billing price of Team per user per month?" said "Users" in
    # full ("per user") and quoted "Team — Users: 2 to 50"; the price column answers.
    q = {stem(w) for w in ("annual", "billing", "price", "team", "user", "month")}
    users = {stem("users")}
    annual = {stem(w) for w in ("price", "billed", "annually", "eur", "user", "month")}
    monthly = {stem(w) for w in ("price", "billed", "monthly", "eur", "user", "month")}
    assert _fullest([(0, users), (1, annual), (2, monthly)], q) == [1]
    # Said in full and no other said much more: the whole name still answers.
    assert _fullest([(0, {"pro"}), (1, {"pro", "plus"})], {"pro", "cost"}) == [0]
    # A number the question says counts twice: "an under-18 visitor" names "Junior
    # visitor (under 18)" more than "Visitor", which it says whole.
    junior = {"junior", "visitor", "18"}
    assert _fullest([(0, {"visitor"}), (1, junior)], {"visitor", "18", "round", "pay"}) == [1]


def test_a_number_joined_to_its_unit_or_bound_is_the_number_and_the_word() -> None:
    # "an under-18 visitor" kept "under-18" as one term, which no row key holds, so the
    # row "Junior visitor (under 18)" was not named; "a 50-minute lesson" missed "50
    # minutes" the same way.
    assert {"18", "visitor"} <= question_terms("What does an under-18 visitor pay?")
    assert {"50", stem("minutes"), stem("lesson")} <= content_terms("a 50-minute lesson")
    assert {"24", stem("hour")} <= content_terms("our 24-hour helpline")
    # Codes keep their hyphens.
    assert "rp-14" in content_terms("Fine code RP-14")


def test_a_unit_a_column_names_by_its_symbol_is_the_word_a_question_says() -> None:
    # "Water tanks (L) Fresh: 120" held no "litres", so "Kea 6 fresh water litres" found
    # its last word unsaid by the table that answers it, and was refused.
    tanks = content_terms("Family — Water tanks (L) Fresh: 120")
    assert {stem("litres"), stem("liters")} <= tanks
    assert {stem("metres"), stem("meters")} <= content_terms("Height (m): 3.1")
    # Case as written: "(M)" is a size, not metres.
    assert not {stem("metres"), stem("meters")} & content_terms("T-shirt (M): 2 left")


def test_a_class_code_before_a_rows_name_is_not_part_of_the_name_asked() -> None:
    # "CA · Compact automatic" was a name said only in part (nobody says "CA"), so
    # "C · Compact", said whole, answered "What does a compact automatic cost?".
    rates = Passage(
        1,
        "car-hire-prices#rates",
        "car-hire-prices",
        "Car hire prices",
        "Daily and weekly rates",
        "| Car group | Daily rate 1-2 days | Daily rate 3-6 days | Weekly rate 7 days |\n"
        "|---|---|---|---|\n"
        "| B · Economy | £38 | £33 | £196 |\n"
        "| C · Compact | £46 | £40 | £238 |\n"
        "| CA · Compact automatic | £52 | £45 | £266 |\n"
        "| E · SUV | £67 | £59 | £357 |\n",
    )
    final = answer_of("What does a compact automatic cost for a single day?", [rates])
    assert "£52" in final.answer, final.answer
    assert "£46" not in final.answer, final.answer


def test_a_change_after_the_plain_value_is_left_out() -> None:
    # The table's row answered, and the price notice after it put the old "400" into
    # the answer beside the current 500 (a stale value).
    plain = _unit(0, 1, "Business — Envelopes per month: 500 (shared)", 0.6)
    change = _unit(
        0, 2, "Business goes from EUR 40 to EUR 45, with 500 envelopes a month instead of 400.", 0.5
    )
    other_part = _unit(1, 2, "Team goes from EUR 22 to EUR 25 per user per month.", 0.5)
    assert _without_told_changes([plain, change, other_part]) == [plain, other_part]
    # A change that leads its part is its answer.
    assert _without_told_changes([change, plain]) == [change, plain]


SKI_HIRE = Passage(
    1,
    "ski-hire#prices",
    "ski-hire",
    "Ski and board hire",
    "Prices",
    "| Package | Day rate, standard season | Day rate, peak season¹ |\n"
    "|---|---|---|\n"
    "| Adult skis and poles | €32 | €41 |\n"
    "| Child skis and poles | €19 | €24 |\n"
    "| Snowboard and boots | €35 | €45 |\n",
)
SHOP_HOURS = Passage(
    2,
    "ski-hire#hours",
    "ski-hire",
    "Ski and board hire",
    "Shop hours",
    "| Shop | Hours |\n"
    "|---|---|\n"
    "| Hire shop, peak season | 7:30am to 7pm every day |\n"
    "| Hire shop, rest of the year | 9am to 5pm, Tuesday to Sunday |\n",
)


def test_a_question_about_outside_a_season_is_answered_by_the_rest_of_the_year() -> None:
    # "outside peak season" named the peak column and the peak row: the answer
    # quoted the peak price and the peak hours, the very ones the question sets aside.
    final = answer_of("How much are child skis per day outside peak season?", [SKI_HIRE])
    assert final.verdict is Verdict.GROUNDED, final.refusal_detail
    assert "€19" in final.answer
    assert "€24" not in final.answer
    hours = GEN.score("When is the hire shop open outside peak season?", [SHOP_HOURS])
    assert max(hours, key=lambda s: s.rank).text.startswith("Hire shop, rest of the year")
    # A thing asked about plainly is still that thing.
    final = answer_of("How much are child skis per day in peak season?", [SKI_HIRE])
    assert "€24" in final.answer


def test_what_a_question_sets_aside_is_each_thing_after_outside() -> None:
    assert _outside("What's the delivery time if I live outside the US and the EU?") == (
        frozenset({"us"}),
        frozenset({"eu"}),
    )
    assert _outside("Who do I ring outside office hours?") == (frozenset({"offic", "hour"}),)
    assert _outside("How much is a room outside peak season, please?") == (
        frozenset({"peak", "season"}),
    )
    assert _outside("How much is a room in August?") == ()
    # "outside" with nothing after it sets nothing aside.
    assert _outside("Can I leave the bike outside?") == ()


def test_what_a_member_of_staff_may_grant_is_refused_from_pages_that_never_name_them() -> None:
    # A customer's search does not see the staff handbook; the public refunds page
    # meets "refund" closely, and was quoted as the agent's limit before.
    refunds = Passage(
        1,
        "refunds#how",
        "refunds",
        "Refunds",
        "How refunds work",
        "You choose how to receive a refund:\n\n"
        "- DishDash Credits: in your account immediately, valid for 12 months.\n"
        "- Back to your card: 3 to 5 working days, depending on your bank.\n\n"
        "Refund requests must be made within 30 days of the order. Refunds over $100 are "
        "checked by our payments team before they are paid.",
    )
    question = "What's the most a support agent can refund me for one order?"
    final = answer_of(question, [refunds])
    assert final.verdict is Verdict.REFUSED, final.answer
    assert final.refusal_detail == (
        "No passage in the knowledge base says what the question's “support agent” can grant."
    )
    handbook = Passage(
        2,
        "staff/goodwill#limits",
        "staff/goodwill",
        "Goodwill and refund limits",
        "Limits by role",
        "| Role | Refund without approval |\n|---|---|\n| Support agent | $40 per order |\n"
        "| Team leader | $150 per order |\n",
    )
    answered = answer_of(question, [refunds, handbook])
    assert "$40 per order" in answered.answer, answered.refusal_detail


def test_a_shorter_copy_of_the_best_units_fact_on_another_page_is_no_rival() -> None:
    # The rooms page and a charges guide's PDF lines both say a cot is free; the line
    # counted as another passage's answer, nearly as close, and the margin (0.026)
    # made the question look like one that several pages touch without answering.
    rooms = Passage(
        1,
        "rooms#families",
        "rooms",
        "Rooms and rates",
        "Travelling with children",
        "Children aged 4 to 12 can share their parents' room on a rollaway bed. A rollaway "
        "bed costs €35 per night. A travel cot with bedding is free on request; please ask "
        "when you book, as each hotel has a limited number.",
    )
    # A charges guide as a PDF's text comes out: one line per item.
    extras = Passage(
        2,
        "guest-charges-guide#extras",
        "guest-charges-guide",
        "Guest charges guide",
        "Extras",
        "Rollaway bed                         €35 per night\n\n"
        "Travel cot                           Free\n\n"
        "Late checkout until 1 p.m.           €25",
    )
    question = "Do you charge for a travel cot?"
    scored = GEN.score(question, [rooms, extras])
    best = max(scored, key=lambda s: s.support)
    rival = next(s for s in scored if s.passage.number != best.passage.number and "cot" in s.text)
    evidence = _evidence(question, rooms, extras)
    assert evidence.margin > best.support - rival.support, (best.text, rival.text)
