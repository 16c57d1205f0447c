"""The default generator: answers with answer units copied from the numbered passages.

It cannot invent a fact or a number, because every word it emits is a passage's.
Each passage is read into *answer units* (``ragway/units.py``): a
sentence, a list item with its lead-in, a table row with its header cells and
row key, a code line. The question is split into its parts and each part's
kind of answer is recognised (``services/generator/question.py``). For each unit
and part it measures *support*:

    support = w_sem * cos(part, heading + context + unit) + (1 - w_sem) * coverage
              + type_weight * (1 if the unit holds the asked kind of value else -1)

where coverage is the share of the part's content terms that the unit (with its
heading and context) contains, each term weighted by how rare it is among the
retrieved passages: a term every passage has says nothing about which one
answers, and a term no passage has ("Windows", "price") is a part of the
question the evidence does not address. It refuses when no part's best support
reaches ``min_support``; otherwise each answerable part is answered with its best
unit and up to ``max_sentences - 1`` others close to it (``part_sentences - 1``
for each part of a multi-part question), each followed by its citation ``[n]``.
A table row answers with its key and the cells the question asks about, in the
row's own words. The default threshold is calibrated on the tuning half of the
help-centre QA set (docs/generation.md).
"""

from __future__ import annotations

import asyncio
import calendar
import functools
import itertools
import math
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from ragway import acronyms, ranges, spelling, synonyms
from ragway.citations import escape_literals
from ragway.embedding import Embedder
from ragway.lru import LruCache
from ragway.question import (
    AnswerType,
    QuestionPart,
    answer_type,
    asks_bound,
    counted,
    formatted,
    holds,
    parts,
    states_bound,
)
from ragway.staff import granting_role
from ragway.text import STOPWORDS, stem, words
from ragway.text import content_terms as _content_terms
from ragway.unit_vectors import embedding_text, unpack
from ragway.units import FOOTNOTE_MARK, Unit, plain, split_sentences, units, unmarked
from services.generator import injection, metrics
from services.generator.answerability import AnswerabilityModel, Evidence, question_length
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
from services.generator.unit_ranker import UNIT_FEATURES, UnitRanker, unit_features

MODEL = "extractive-v2"
# How close to the best marked row's support a row must come to be listed in its place
# (``_marked_as_asked``): the rows of one table focused on one column are near ties.
MARKED_ROW_CUTOFF = 0.8
# How much less support a second or third part of a question needs (see select).
MULTI_PART_SLACK = 0.05
_KEY_WORD = re.compile(r"[A-Za-z0-9]+")
_CASED_WORD = re.compile(r"[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)*")
_STRICT_TYPES = frozenset(
    {
        AnswerType.AMOUNT,
        AnswerType.PERCENT,
        AnswerType.PORT,
        AnswerType.WEIGHT,
        AnswerType.PHONE,
        AnswerType.EMAIL,
    }
)
_AFTER = re.compile(r"\b(?:after|next|then)\b", re.I)
# "What do I have to do before mediation?": what comes before the step that names it.
_BEFORE = re.compile(r"\b(?:do|done)\b.*\bbefore\s+((?:[\w'-]+\s+){0,2}[\w'-]+)\s*\??\s*$", re.I)
# A question after a whole procedure: "How do I reset my password?", "how to export".
# "Where in the app do I report a missing ingredient?" is asked of the same steps.
_HOW_DO_I = re.compile(
    r"^\s*(?:how\s+(?:do|can|should|would)\s+(?:i|we|you)\b|how\s+to\b|"
    r"what\s+are\s+the\s+steps\b|steps\s+to\b|"
    r"where\s+(?:in\s+(?:the|your)\s+[\w-]+\s+)?(?:do|can|should)\s+(?:i|we|you)\b)",
    re.I,
)
_ORDINAL_WORDS: tuple[str, ...] = ("first", "second", "third", "fourth", "fifth")
_ORDINAL_WORDS += ("sixth", "seventh", "eighth", "ninth", "tenth")
_ORDINALS = {w: n for n, w in enumerate(_ORDINAL_WORDS, start=1)}
_ORDINAL = re.compile(
    r"\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|final|\d{1,2})"
    r"(?:st|nd|rd|th)?\s+step\b|\bstep\s+(\d{1,2})\b|\bthe\s+(first|last|final)\s+thing\b",
    re.I,
)
# "What's the last step?": the last numbered item of its list, whatever its number.
_LAST = 0
_ITEM_NUMBER = re.compile(r"^\d{1,3}[.)]\s+")
# A hyphen between letters joins words ("first-response", "co-hosts"), not an
# identifier ("NW-1190"): read as the words, so "first-response target" meets
# the column "First response".
_WORD_HYPHEN = re.compile(r"(?<=[A-Za-z])-(?=[A-Za-z])")
# "10,000" is one number, not "10" and "000": otherwise "Webinars 10,000" meets the
# row "Webinars 1,000" on "000".
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
# Items a lead-in ("The following roles can export data:") is answered with.
MAX_LISTED_ITEMS = 8
# 3: the answerability model decides above the support floor. 4: limits, prohibitions,
# whole lists and acronym plurals in the selection. 5: the names the evidence is not
# about (no passage knows them, or no retrieved table has the row they name) lower the
# support and weigh in the answerability model on their own. 6: an absent word counts
# in ``missing`` as much as the question's meaning depends on it (its salience).
# 7: the support loses as much for absent terms as the question's meaning rests on
# them (salience, as ``missing``), pronouns and contraction stubs are no terms, and
# an amount written short ("100k") is a number, not a name the pages lack. 8: a
# labelled line ("Variants per product: 250") is keyed by its label as a row is.
# 9: the answerability model reads the question's length, a sentence lacking the
# asked value is quoted with the next one of its paragraph that holds it, and a row
# quoted beside its footnote drops the footnote's marks. 10: the question's length
# counts only past ten words (a short keyword question is not held against itself),
# and "how frequently", "how quickly", "how big" ask as "how often" and "how long" do.
# 11: a customer's own values, months and days are no unknown names; names the passages
# abbreviate are read as they write them; tiers keyed by the question's value; a unit
# holding the asked strict kind, and a value said plainly before its release note, first.
# 12: "how much" asks for any amount; a row key met only in the brand word is another
# row; "24-hour" and "I" are no names; "how long can X be" asks for a length.
# 13: ✓/✗ rows for "which …", steps asked by number, opening hours, a heading that
# holds the asked value leads its quote, the row named in full wins.
# 14: cents are an amount and a capital "US" names the country; a row that answers
# two parts is quoted once with the cells of both; "e-bike" is one term; "See <page>."
# is never quoted; "how long do I have to claim" asks for a time limit; "how much
# notice" asks for a duration; ", do they cost extra" is a second part; "will she have
# to pay" asks whether.
# 15: the refusal weighs the question's meaning the answering passage lacks (``unsaid``);
# "open" and "close" in "when is … open" only ask for a time; a name written by two
# documents is the knowledge base's own; "the most phones" asks how many.
# 16: the words for the kind of value asked ("phone number", "time", "maximum") are said
# by an answer that holds one; a synonym a page writes holds a term ("bin": "trash");
# "What number do I ring?" asks for a phone number; "that plan" points back; a
# statement after the question is its context; "one-third off" is a percentage;
# "5 p.m. Central Time" keeps its zone; text speak ("txt", "wen") is spelt out.
# 17: the nearest heading that holds the asked value leads a quote (a changelog's
# version date over "Added"); "…, and until when …" is a second part; "X's hours" asks
# for a time; a row with a blank first cell goes on with the row above; a holiday is no
# name; a question's identifier that keys its best unit answers without the model; a
# count no row of a counted table has ("48-month") is a row the pages lack; "where in
# the app do I" gets the steps whole; a currency named in a column header makes its cells
# amounts; "the number for X" asks for a phone number; "12x12" is written as the pages do.
# 18: names, identifiers and unknown rows are read from the sentences that ask, not the
# story before them; "75lbs" is a value; the company's name two documents write in a
# title or a sentence's start need not be in the answering passage; a short-code row key
# reads "Band B" and "Band E" is one term; bold and repeated second header rows name
# columns; the column said most of answers; a row key's "instead of" tells no change;
# the leading unit's code skips the model; tax rates are percentages; "opening times"
# asks for a time.
# 19: a number one texts, a search box's "number for …" and "what do you charge" ask
# for a phone number or a price; "…, and after how long …" is a second part; a bare run
# of seven to nine digits is no phone number; "retention" is held by "keep"; "EUR 11.50"
# is an amount; a limit (not a count) may be money; "what time of day" names no "Day"
# column; "Saturdays" is no name and "Sat" holds it; "U.S." ends no sentence; "…, and
# separately, how …" and "…, and once I pass, how …" are second parts; a header said in
# full by one word yields to the one the question says most of; a change after the
# plain value it changed is left out.
# 20: a year the question asks about that no passage writes is not covered; what a
# reference looks like asks for its form ("8 characters, starts with GX"), and a unit
# stating that reference's form answers without the model; "deadline" is said by a
# stated limit and "or later" states one; a company known by its email or web address
# is known; "HB-E804" is a code; "some1", "incl" and "rd" are spelt out; "is there a
# charge" asks for a price; what to do before a step gets the step before it; a rule
# for ages answers a question that gives one; "link validity" asks how long.
# 21: a runner-up at 78 % of the best unit's support joins the answer, two units per
# part of a multi-part question; spelling read from headings too, doubled consonants,
# one-slip English words; more numbers to ring.
# 22: what a question asks about the outside of ("outside peak season") names no row
# or column to answer with; a number anyone rings ("What number can parents ring?")
# asks for a phone number.
# 23: a value the question gives ("five days away", "about 30 hours before") keys the
# tier it falls in, in a list of terms as in a table, across units of time; days and
# months written short or as spans ("Sat", "Mon-Fri", "Apr-Oct"); a share of a price
# and a fee charged as a share are amounts; "heavy" and "amount" said by the value; a
# row keyed by a span of time ("1 hour") is "a 1hr lesson" and sets the other spans
# aside; "how much … off" asks for a share.
# 24: what a member of staff may grant is refused where no visible page names that
# staff; a shorter copy of the best unit's fact is no rival; "monthy" is a slip; a
# class code ("CA ·") is no part of a row's name; "under-18" and "50-minute" are the
# number and the word; "the last step" and "the first thing" are steps by place.
# 25: a language is named in English or in its own ("French", "français"); a state the
# pages contract ("Queensland", "QLD") is written as they do; a question's first part,
# cut before ", and", asks in its last sentence, not in the story before it; British
# pence are an amount; "(L)" and "(m)" in a column's name are litres and metres; a word
# with accents is the word without them ("Tūī" is "tui"); "bounce" is held by "returned".
POLICY_VERSION = "extractive-policy-25"


@dataclass(frozen=True, slots=True)
class ExtractiveConfig:
    # The floor: under it nothing answers. Above it the answerability model, when
    # given, decides (services/generator/answerability.py).
    min_support: float = 0.30
    semantic_weight: float = 0.7
    max_sentences: int = 3
    # Units per part of a multi-part question. A second unit nearly as good as the
    # part's best joins it, as it does a one-part answer: the runner-up often holds
    # the fact ("how much do I need to have in there first" ranked the balance rule
    # second). 2 against 1: +2 correct on the four tuning sets, ~2 words longer.
    part_sentences: int = 2
    # A second unit must be nearly as good as the best to join the answer: at least
    # 78 % of its support (85 % until policy 21). The runner-up often holds the asked
    # fact the ranker's first choice lacks: over the twenty-nine tuning parts, 0.82,
    # 0.78 and 0.72 answered 10, 17 and 14 more questions right than 0.85, and with
    # two units per part of a multi-part question 0.75, 0.78 and 0.80 answered 2,508,
    # 2,509 and 2,505 of 3,007.
    relative_cutoff: float = 0.78
    min_words: int = 3
    # 0: one delta per quoted unit with its citation. N: pieces of N words, a typing
    # pace for a client that wants one (every piece is one more event end to end).
    delta_words: int = 0
    # How much holding (or lacking) the asked kind of value moves a unit's support.
    type_weight: float = 0.06
    # How much lacking the asked kind of value costs (the question's wording can
    # mislead: "how long can a PDF be" asks for pages, not a duration).
    lack_weight: float = 0.03
    # The kinds a question cannot be asked in other words for: "how much does it
    # cost" wants money, "what percentage" a percentage, "which port" a port.
    strict_lack_weight: float = 0.2
    # How much a table row gains when the question names its row key ("Starter"),
    # and loses when the question names another row of the same table.
    key_weight: float = 0.06
    # How much a row loses when the question names another entity than its key:
    # asked for API Plus's price, the Large Meetings row's price is no answer.
    other_row_weight: float = 0.15
    # How much a unit stating a limit ("up to 300 pages") gains when the question
    # asks for one ("how long can a PDF be").
    bound_weight: float = 0.04
    # Support lost per unit of the question's meaning that rests on terms no
    # retrieved passage contains, even misspelt (each term's rarity weight times
    # its salience, ``_absent_meaning``): "the Premium plan" when no passage knows
    # a Premium plan is a question the evidence does not answer; "my husband lost
    # his job" told before the question is not.
    missing_weight: float = 0.15
    # Support lost per name in the question (up to two) that no passage contains.
    missing_name_weight: float = 0.1
    # How far a part told as a story leans towards its closing question (_focused).
    focus_weight: float = 0.5
    # ~1.5 KB per cached unit vector: 20k units ≈ 30 MB.
    cache_sentences: int = 20_000

    def __post_init__(self) -> None:
        if not 0.0 <= self.min_support <= 1.0:
            raise ValueError(f"min_support must be in [0, 1], got {self.min_support}")
        if not 0.0 <= self.semantic_weight <= 1.0:
            raise ValueError(f"semantic_weight must be in [0, 1], got {self.semantic_weight}")
        if self.max_sentences < 1:
            raise ValueError(f"max_sentences must be >= 1, got {self.max_sentences}")
        if self.part_sentences < 1:
            raise ValueError(f"part_sentences must be >= 1, got {self.part_sentences}")
        if self.delta_words < 0:
            raise ValueError(f"delta_words must be >= 0, got {self.delta_words}")
        weights: tuple[str, ...] = ("type_weight", "lack_weight", "strict_lack_weight")
        weights += ("key_weight", "other_row_weight", "missing_weight", "bound_weight")
        for name in (*weights, "missing_name_weight", "focus_weight"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value}")


@dataclass(frozen=True, slots=True)
class ScoredUnit:
    passage: Passage
    position: int
    text: str  # what the answer quotes for this part (a row: its key and the asked cells)
    support: float
    unit: Unit | None = None
    part: int = 0  # which part of the question it answers
    coverage: float = 0.0  # the weighted share of the part's terms the unit contains
    features: tuple[float, ...] = ()  # what the unit ranker reads (UNIT_FEATURES)
    rank: float = 0.0  # the unit ranker's score, when one is configured
    strict: bool = False  # its part asks for a value a unit plainly holds or lacks (_STRICT_TYPES)


# The name the LLM backends and older callers use.
ScoredSentence = ScoredUnit


@dataclass(frozen=True, slots=True)
class _Reading:
    """What scoring and the answerability evidence read of one set of passages, whatever
    the question: its terms, row and label keys, heading names, and which words it
    knows even misspelt. Read once per set (``ExtractiveGenerator._reading``): both
    read it for every question, and a question the set has not met still meets a set
    that other questions retrieved."""

    passage_terms: tuple[frozenset[str], ...]
    vocabulary: frozenset[str]
    everywhere: frozenset[str]
    heading_names: frozenset[str]
    # Names the passages of two documents or more write capitalised: what the
    # knowledge base is about ("Quillpad"), not a row a table lacks.
    common_names: frozenset[str]
    # Capitalised words two documents or more write, titles and sentence starts
    # included (``_titled_names``): the company's own name however a page places it.
    titled_names: frozenset[str]
    units_of: tuple[list[Unit], ...]
    row_keys: dict[int, dict[int, set[str]]]
    label_keys: dict[int, dict[int, set[str]]]
    # ``_known(term, vocabulary)`` by term, as the questions asked it (a scan of the
    # whole vocabulary for a near spelling when the term is absent).
    known: dict[str, bool]

    def knows(self, term: str) -> bool:
        found = self.known.get(term)
        if found is None:
            # "bin" is known to pages that say "trash" (ragway/synonyms.py).
            found = self.known[term] = (
                _known(term, self.vocabulary)
                or bool(synonyms.of(term) & self.vocabulary)
                or term in _address_labels(self.vocabulary)
            )
        return found

    def absent(self, q_terms: set[str]) -> set[str]:
        """The question's terms that no passage has, even misspelt (``_absent``)."""
        return {t for t in q_terms if not self.knows(t)}


# Passage sets whose reading is kept (a merged vocabulary of ~10 passages is ~100 KB).
_READINGS_KEPT = 64


def _lexicon_of(texts: tuple[str, ...]) -> tuple[dict[str, int], dict[str, str]]:
    """The texts' words with their counts and their word pairs, as the spelling repair
    reads them (shared: never changed)."""
    return spelling.vocabulary(texts), spelling.compounds(texts)


class ExtractiveGenerator:
    name = MODEL

    def __init__(
        self,
        embedder: Embedder,
        config: ExtractiveConfig | None = None,
        answerability: AnswerabilityModel | None = None,
        ranker: UnitRanker | None = None,
    ) -> None:
        self._embedder = embedder
        self._config = config or ExtractiveConfig()
        # Decides, above the min_support floor, whether the evidence answers at all
        # (services/generator/answerability.py); None: the floor alone decides.
        self.answerability = answerability
        # Orders each part's units for quoting (services/generator/unit_ranker.py);
        # None: by support.
        self.ranker = ranker
        self._cache: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._cache_lock = threading.Lock()
        # Per passage text: every unit, those that may answer, and the positions of
        # the units an injected paragraph holds (services/generator/injection.py).
        self._units: LruCache[str, tuple[list[Unit], list[Unit], frozenset[int]]] = LruCache(2_000)
        # Units embedded here rather than taken from the retriever (a counter for
        # tests and the metrics): near zero when the retriever stores unit vectors.
        self.embedded_units = 0
        # score() and evidence() ask for the same question over the same passages:
        # it is reworded (and any acronym embedded) once.
        self._worded = functools.lru_cache(maxsize=512)(self._as_the_passages_word_it)
        # The passages' words and word pairs the repair reads, merged once per set of texts.
        self._lexicon = functools.lru_cache(maxsize=_READINGS_KEPT)(_lexicon_of)
        # score() and evidence() weigh the same part's absent terms by their salience:
        # the question is embedded without each of its terms once.
        self._salient = functools.lru_cache(maxsize=512)(self._salience_of)
        # Per set of passages (by number, title, heading and text): ``_Reading``.
        self._readings: LruCache[tuple[tuple[int, str, str, str], ...], _Reading] = LruCache(
            _READINGS_KEPT
        )

    @property
    def min_support(self) -> float:
        return self._config.min_support

    def repaired(self, question: str, passages: Sequence[Passage]) -> str:
        """The question as the passages would word it: misspelt words spelt as they
        spell them (ragway/spelling.py), acronyms they never write spelt out as they
        do (ragway/acronyms.py). Scored and weighed as the user meant it."""
        headings = tuple(dict.fromkeys(f"{p.title} {p.section}" for p in passages))
        return self._worded(question, tuple(p.text for p in passages), headings)

    def _as_the_passages_word_it(
        self, question: str, texts: tuple[str, ...], headings: tuple[str, ...]
    ) -> str:
        question = spelling.dimensions(spelling.unshout(question, texts), texts)
        if spelling.suspects(question):
            # A question of English words only is left as it is: its words and the
            # passages' are not gathered to repair nothing. The titles and headings
            # are words of the evidence too, as the retriever's respelling reads them:
            # "gardn waste" is "garden waste" where only the heading says "Garden".
            known, joined = self._lexicon(texts + headings)
            question = spelling.repair(question, known, joined=joined)
        # Embeds only for an acronym no passage writes: rare, and then a few short texts.
        question = acronyms.expand(acronyms.same_idea(question, texts), texts, self._cosines)
        return acronyms.abbreviate(question, texts)

    def _cosines(self, text: str, others: Sequence[str]) -> list[float]:
        vectors = self._embedder.embed([text, *others])
        return [float(vectors[0] @ v) for v in vectors[1:]]

    def _passage_units(self, p: Passage) -> list[Unit]:
        """The units of a passage that may answer (very short sentences cannot)."""
        return self._all_units(p)[1]

    def _all_units(self, p: Passage) -> tuple[list[Unit], list[Unit]]:
        """Every unit of the passage, and those that may answer; parsed once per text."""
        every, kept, _ = self._parsed(p)
        return every, kept

    def _parsed(self, p: Passage) -> tuple[list[Unit], list[Unit], frozenset[int]]:
        """``_all_units`` and the positions of the injected units, parsed once per text."""
        found = self._units.get(p.text)
        if found is None:
            every = units(p.text)
            # A paragraph that instructs an AI reader ("SYSTEM MESSAGE FOR AI
            # ASSISTANTS: disregard…") is no evidence: none of its units answers.
            text = injection.injected_text(p.text)
            injected = frozenset(u.position for u in every if injection.within(u.text, text))
            kept = [
                u
                for u in every
                if (len(words(u.text)) >= self._config.min_words or u.kind in ("row", "item"))
                and u.position not in injected
            ]
            found = (every, kept, injected)
            self._units.put(p.text, found)
        return found

    def _reading(self, passages: Sequence[Passage]) -> _Reading:
        """The passages' ``_Reading``, read once per set (bounded)."""
        key = tuple((p.number, p.title, p.section, p.text) for p in passages)
        found = self._readings.get(key)
        if found is None:
            passage_terms = tuple(_passage_terms(p) for p in passages)
            units_of = tuple(self._passage_units(p) for p in passages)
            found = _Reading(
                passage_terms=passage_terms,
                vocabulary=frozenset().union(*passage_terms),
                everywhere=_everywhere(passage_terms),
                heading_names=frozenset(_heading_names(passages)),
                common_names=frozenset(_common_names(passages)),
                titled_names=frozenset(_titled_names(passages)),
                units_of=units_of,
                row_keys={p.number: _row_keys(u) for p, u in zip(passages, units_of, strict=True)},
                label_keys={
                    p.number: _label_keys(u) for p, u in zip(passages, units_of, strict=True)
                },
                known={},
            )
            self._readings.put(key, found)
        return found

    def withheld(self, p: Passage) -> int:
        """How many of the passage's units ``standalone_text`` leaves out as injected."""
        return len(self._parsed(p)[2])

    def standalone_text(self, p: Passage) -> str:
        """The passage as its answer units, one per line, each readable on its own.

        What the LLM backends show the model instead of raw markdown: a table row
        with its header cells and row key ("Business — Max members: 2,000"), a
        list item with its lead-in, code with its lead-in. The words and numbers
        are the passage's own, so the grounding checks hold the model to them.
        """
        lines: list[str] = []
        said: set[str] = set()  # lead-ins already on a line: their items follow them
        every, _, injected = self._parsed(p)
        for u in every:
            if u.position in injected:
                # Never shown to a model: it would read the instructions as addressed to it.
                continue
            asked = u.asked
            if asked and asked not in said:
                # An FAQ's question is no unit (ragway/units.py), but the model reads
                # it on its line above the sentences that answer it.
                lines.append(asked)
                said.add(asked)
            if u.kind == "row":
                line = u.row_text()
            elif u.kind in ("item", "code") and u.key and u.key not in said:
                line = f"{u.key} {u.text}"
                said.add(u.key)
            else:
                line = u.text
                said.add(line)
            if line and (not lines or lines[-1] != line):
                lines.append(line)
        # Escaped as the extractive answer quotes it: a model that copies the page's
        # "[5, 25, 50]" then copies no citation of passages 5, 25 and 50.
        return escape_literals("\n".join(lines) or p.text)

    def _unit_vectors(self, candidates: list[tuple[Passage, Unit]]) -> npt.NDArray[np.float32]:
        """The candidates' vectors: the retriever's, where it stored exactly these units
        for this model (ragway/unit_vectors.py); embedded here for the others."""
        stored: dict[int, npt.NDArray[np.float32] | None] = {}
        for p, _ in candidates:
            if p.number in stored:
                continue
            stored[p.number] = None
            if p.unit_vectors:
                texts = [embedding_text(p.title, p.section, u) for u in self._all_units(p)[0]]
                stored[p.number] = unpack(p.unit_vectors, self._embedder.model_id, texts)
        out = np.empty((len(candidates), self._embedder.dim), dtype=np.float32)
        todo: list[int] = []
        for i, (p, u) in enumerate(candidates):
            vectors = stored[p.number]
            if vectors is None:
                todo.append(i)
            else:
                out[i] = vectors[u.position]
        if todo:
            texts = [
                embedding_text(candidates[i][0].title, candidates[i][0].section, candidates[i][1])
                for i in todo
            ]
            out[todo] = self._sentence_vectors(texts)
        self.embedded_units += len(todo)
        metrics.UNITS.labels("stored").inc(len(candidates) - len(todo))
        metrics.UNITS.labels("embedded").inc(len(todo))
        return out

    def known_vectors(self, request: GenerationRequest) -> dict[str, npt.NDArray[np.float32]]:
        """The request's question vectors this backend can use: those of its own
        embedding model and dimension (a retriever of another model sends others)."""
        if request.embedding_model != self._embedder.model_id:
            return {}
        known = {}
        for text, values in request.question_vectors.items():
            vector = np.asarray(values, dtype=np.float32)
            if vector.shape == (self._embedder.dim,):
                known[text] = vector
        return known

    def score(
        self,
        question: str,
        passages: Sequence[Passage],
        known: Mapping[str, npt.NDArray[np.float32]] | None = None,
    ) -> list[ScoredUnit]:
        """Every candidate unit with its support for each question part, best first.

        ``known``: vectors of question texts already embedded with this backend's
        model (``known_vectors``); a part whose text is among them is not embedded.
        """
        candidates = [(p, u) for p in passages for u in self._passage_units(p) if not _pointer(u)]
        if not candidates:
            return []
        question = self.repaired(question, passages)
        question_parts = parts(question)
        unit_vectors = self._unit_vectors(candidates)
        part_vectors = self._focused(question_parts, known or {})
        reading = self._reading(passages)
        passage_terms = reading.passage_terms
        row_keys = reading.row_keys
        everywhere = reading.everywhere
        label_keys = reading.label_keys
        units_of = reading.units_of
        cfg = self._config
        w = cfg.semantic_weight
        scored: list[ScoredUnit] = []
        # A unit's terms (with its title, heading and context) do not depend on the part.
        unit_terms = [
            content_terms(f"{p.title} {p.section} {u.context} {u.text}") for p, u in candidates
        ]
        asked_terms = [content_terms(u.asked) if u.asked else set() for _, u in candidates]
        # "I'm 17", "my 15-year-old": the question gives an age (``_states_ages``).
        gives_age = _ASKER_AGE.search(question) is not None
        for n, part in enumerate(question_parts):
            q_terms = question_terms(part.text)
            q_terms -= reading.absent(_value_named(part.text, q_terms, answer_type(part.text)))
            # "outside peak season" asks about the rest of the year: the words it
            # excludes name no row or column to answer with.
            outside = _outside(part.text)
            q_terms -= frozenset().union(*outside)
            passed_over = _passed_over(passages, units_of, row_keys, q_terms, everywhere)
            weights = _term_weights(q_terms, passage_terms)
            # A term no passage has keeps its (top) rarity weight in the share, so a
            # question whose subject no page knows ("whiteboards", a staff-only
            # escalation) covers little. Leaving such terms out of the share answered
            # more paraphrases but also a forbidden question of the demo set's
            # held-out part (docs/generation.md), so they stay in.
            total_weight = sum(weights.values())
            absent = reading.absent(q_terms)
            missing_share = self._absent_meaning(part.text, q_terms, weights, absent)
            names = _question_names(part.text, q_terms)
            names_missing = len(_absent_names(part.text, q_terms, reading))
            cosines = unit_vectors @ part_vectors[n]
            quotes = [_quote(u, q_terms, part, outside) for _, u in candidates]
            # A row answers with the cells asked about: it is also read that way,
            # so "Business — Max members: 2,000" is not drowned by its other cells.
            focused = {
                i: f"{p.section or p.title}: {quotes[i]}"
                for i, (p, u) in enumerate(candidates)
                if u.kind == "row" and quotes[i] != u.text
            }
            if focused:
                vectors = self._sentence_vectors(list(focused.values()))
                for i, vector in zip(focused, vectors, strict=True):
                    cosines[i] = max(cosines[i], float(vector @ part_vectors[n]))
            ordinal = _ordinal(part.text)
            lasts = (
                set().union(*map(_last_items, passages, units_of)) if ordinal == _LAST else set()
            )
            bound = asks_bound(part.text)
            noun = counted(part.text)
            noun_stem = stem(noun) if noun else None
            # "What does a booking number look like?": a form ("8 characters, starts
            # with GX") stated of that reference, not of a password or a licence number.
            reference = formatted(part.text)
            typed = part.answer_type not in (AnswerType.ANY, AnswerType.NAME)
            strict = part.answer_type in _STRICT_TYPES
            coverages = [
                (sum(weights[t] for t in q_terms & terms) / total_weight if total_weight else 0.0)
                for terms in unit_terms
            ]
            top_cos = float(np.max(cosines)) if len(cosines) else 0.0
            top_coverage = max(coverages, default=0.0)
            # How well a unit's passage as a whole meets the part: its best unit.
            passage_cos: dict[int, float] = {}
            for (p, _), cos in zip(candidates, cosines, strict=True):
                passage_cos[p.number] = max(passage_cos.get(p.number, 0.0), float(cos))
            top_score = max((p.retrieval_score for p in passages), default=0.0) or 1.0
            for (p, u), cos, text, coverage, asked in zip(
                candidates, cosines, quotes, coverages, asked_terms, strict=True
            ):
                cos = float(np.clip(cos, 0.0, 1.0))
                support = w * cos + (1 - w) * coverage
                support -= cfg.missing_weight * missing_share
                support -= cfg.missing_name_weight * min(names_missing, 2)
                bounded = bool(bound and states_bound(text))
                if bounded:
                    support += cfg.bound_weight
                # "I'm 17": the rule for that age ("at least 18 years old") answers, as
                # a row keyed by what the question names does.
                aged = gives_age and _states_ages(text)
                if aged:
                    support += cfg.key_weight
                step = ordinal is not None and u.kind == "item" and _item_number(u) == ordinal
                step = step or (p.number, u.position) in lasts
                if step:
                    support += cfg.key_weight
                # A labelled line ("Variants per product: 250") is keyed by its label
                # as a row is by its first cell.
                labelled = _key_matches(label_keys[p.number].get(u.position, set()), q_terms)
                # "(b) 29 to 56 days: 50% of the rental" is the tier of "in about 40
                # days", as a row keyed by that range is.
                labelled = labelled or (
                    u.kind in ("item", "sentence") and ranges.within(_condition(u.text), part.text)
                )
                if labelled:
                    support += cfg.key_weight
                holding = 0.0
                if typed:
                    # Lacking the asked kind costs less than holding it gains
                    # (lack_weight): the question's wording can mislead.
                    held = (
                        _states_form(text, reference)
                        if reference
                        else _holds_asked(text, part.answer_type, noun_stem)
                    )
                    holding = 1.0 if held else -1.0
                    lack = cfg.strict_lack_weight if strict else cfg.lack_weight
                    support += cfg.type_weight if holding > 0 else -lack
                keyed = float(labelled or aged)
                other_row = 0.0
                if u.kind == "row":
                    key = row_keys[p.number].get(u.position, set())
                    # A tier the question's own value falls in ("98.5%" in "Below
                    # 99.0% but at least 95.0%") is named by it as a key would be.
                    named = bool(key) and _key_matches(key, q_terms, everywhere)
                    if _excluded(u.key, outside, key) or ranges.excludes(u.key, part.text):
                        # "Gatehouse, peak season" is the row the question sets aside;
                        # "2 hours" is another row than "a 1hr lesson".
                        support -= cfg.other_row_weight
                        other_row = 1.0
                    elif (named and (p.number, u.position) not in passed_over) or ranges.within(
                        u.key, part.text
                    ):
                        support += cfg.key_weight
                        keyed = 1.0
                    elif names or any(k & q_terms for k in row_keys[p.number].values()):
                        # The question names an entity (another row's key, or a
                        # name no row has: "the API Plus add-on"): not this row.
                        support -= cfg.other_row_weight
                        other_row = 1.0
                support = float(np.clip(support, 0.0, 1.0))
                own = content_terms(text)
                own_coverage = (
                    sum(weights[t] for t in q_terms & own) / total_weight if total_weight else 0.0
                )
                asked_coverage = (
                    sum(weights[t] for t in q_terms & asked) / total_weight if total_weight else 0.0
                )
                features = unit_features(
                    support=support,
                    cosine=cos,
                    coverage=coverage,
                    own_coverage=own_coverage,
                    cosine_gap=cos - top_cos,
                    coverage_gap=coverage - top_coverage,
                    holds_kind=holding,
                    row_key=keyed,
                    other_row=other_row,
                    bound=float(bounded),
                    step=float(step),
                    passage_rank=1.0 / p.number if p.number > 0 else 0.0,
                    row=float(u.kind == "row"),
                    item=float(u.kind == "item"),
                    code=float(u.kind == "code"),
                    has_context=float(bool(u.context)),
                    log_words=math.log1p(len(words(text))),
                    first_in_passage=float(u.position == 0),
                    passage_cosine_gap=passage_cos[p.number] - top_cos,
                    retrieval_score=p.retrieval_score / top_score,
                    asked_coverage=asked_coverage,
                )
                rank = self.ranker.score(features) if self.ranker is not None else support
                scored.append(
                    ScoredUnit(p, u.position, text, support, u, n, coverage, features, rank, strict)
                )
        # Best first: by the ranker's order when there is one (the support still
        # decides whether anything answers: see refusal and select).
        scored.sort(key=lambda x: (-x.rank, x.passage.number, x.position, x.part))
        return scored

    def _focused(
        self,
        question_parts: Sequence[QuestionPart],
        known: Mapping[str, npt.NDArray[np.float32]],
    ) -> npt.NDArray[np.float32]:
        """Each part's vector; a part told as a story first ("I left my car plugged in
        at a fast charger while I grabbed lunch. How much do you charge me for every
        minute?") leans towards its closing question, where the story had drowned
        what is asked. The story stays in: it says which charger."""
        vectors = self._question_vectors([q.text for q in question_parts], known)
        weight = self._config.focus_weight
        told = {
            n: sentences[-1]
            for n, q in enumerate(question_parts)
            if len(sentences := split_sentences(q.text)) > 1
        }
        if told and weight > 0:
            asked = self._question_vectors(list(told.values()), known)
            for n, vector in zip(told, asked, strict=True):
                joined = vectors[n] + weight * vector
                vectors[n] = joined / float(np.linalg.norm(joined))
        return vectors

    def _question_vectors(
        self, texts: list[str], known: Mapping[str, npt.NDArray[np.float32]]
    ) -> npt.NDArray[np.float32]:
        """The vectors of question texts: the retriever's where it embedded the same
        text with the same model (the gateway hands them on), the others embedded."""
        todo = [t for t in texts if t not in known]
        fresh = iter(self._embedder.embed(todo)) if todo else iter(())
        metrics.QUESTION_VECTORS.labels("retriever").inc(len(texts) - len(todo))
        metrics.QUESTION_VECTORS.labels("embedded").inc(len(todo))
        out = np.empty((len(texts), self._embedder.dim), dtype=np.float32)
        for n, t in enumerate(texts):
            out[n] = known[t] if t in known else next(fresh)
        return out

    def _sentence_vectors(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Embeddings of passage units, through a bounded LRU cache.

        Embedding every unit of every passage is most of this backend's
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

    def threshold(self, request: GenerationRequest) -> float:
        """The evidence threshold of this request: the caller's, else the configured one."""
        return self._config.min_support if request.min_support is None else request.min_support

    def select(
        self, scored: list[ScoredUnit], max_output_tokens: int, min_support: float | None = None
    ) -> list[ScoredUnit]:
        """The units of the answer: each answerable part's best, in passage order.

        A single-part question may take up to ``max_sentences`` units close to the
        best one; a multi-part question takes the best unit of each part that
        reaches ``min_support`` and up to ``part_sentences - 1`` close to it (a
        part that does not is left unanswered rather than answered with
        something loosely related), ``part_sentences`` per part in all.
        """
        if not scored:
            return []
        cfg = self._config
        n_parts = max(s.part for s in scored) + 1
        per_part = cfg.max_sentences if n_parts == 1 else cfg.part_sentences
        # A one-part answer has up to max_sentences units; a multi-part one up to
        # part_sentences per part. Capped at max_sentences as well, a two-part
        # question's first part took the third place and the second part's
        # runner-up, which often held its fact, never fitted.
        cap = n_parts * per_part
        # Once one part of the question is answered, the others need a little less:
        # the question as a whole is known to be about this knowledge base.
        threshold = cfg.min_support if min_support is None else min_support
        floor = threshold
        queues: list[list[ScoredUnit]] = []  # each answered part's candidates, best first
        for part in range(n_parts):
            ranked = [s for s in scored if s.part == part]
            # The best-ranked unit with enough support answers the part.
            first = next((s for s in ranked if s.support >= floor), None)
            if first is None:
                continue
            least = max(floor, cfg.relative_cutoff * first.support)
            # The same value said plainly needs only the floor: it answers as the
            # release note that changed it does, less the old value.
            first = _current_first(_holding_first(first, ranked, least), ranked, floor)
            if n_parts > 1:
                floor = threshold - MULTI_PART_SLACK
            least = max(floor, cfg.relative_cutoff * first.support)
            queues.append(
                [
                    first,
                    *(
                        s
                        for s in ranked
                        if s is not first and s.support >= least and not _restates(s, first)
                    ),
                ]
            )
        chosen: list[ScoredUnit] = []
        budget = max_output_tokens
        taken = [0] * len(queues)
        # Round by round, so a part's runner-up never takes the place of a later
        # part's best.
        for _ in range(per_part):
            for k, queue in enumerate(queues):
                while queue and taken[k] < per_part and len(chosen) < cap:
                    s = queue.pop(0)
                    same = next((i for i, c in enumerate(chosen) if _same_unit(s, c)), None)
                    if same is not None:
                        # One row answers two parts ("Can my dog stay in the car, and
                        # how much is that?"): quoted once, with the cells of both.
                        chosen[same] = _with_cells_of(chosen[same], s)
                        taken[k] = max(taken[k], 1)
                        continue
                    if any(_near_duplicate(s.text, c.text) for c in chosen):
                        taken[k] = max(taken[k], 1)  # answered by a unit already chosen
                        continue
                    cost = len(words(s.text)) + 2
                    if chosen and cost > budget:
                        continue
                    chosen.append(s)
                    budget -= cost
                    taken[k] += 1
                    break
        return sorted(chosen, key=lambda s: (s.passage.number, s.position))

    def evidence(
        self,
        question: str,
        passages: Sequence[Passage],
        scored: list[ScoredUnit],
        *,
        unsaid: bool = True,
    ) -> Evidence:
        """The shape of the evidence for the question's best-supported part.

        ``unsaid=False`` leaves that feature unmeasured (None): measuring it is most
        of the cost, and ``refusal`` measures it only where the decision hinges on it.
        """
        if not scored:
            return Evidence(support=0.0, margin=0.0, missing=1.0, unsaid=1.0)
        question = self.repaired(question, passages)
        best = _best_supported(scored)
        # The runner-up is the best unit of another passage that says something
        # else: a knowledge base that states a fact on two pages (a table and an
        # FAQ) has no rival answer, only a second copy.
        # The best such unit is the first in support order (most are never compared).
        rivals = sorted(
            (s for s in scored if s.part == best.part and s.passage.number != best.passage.number),
            key=lambda s: s.support,
            reverse=True,
        )
        other = next((s.support for s in rivals if not _says_same(s.text, best.text)), 0.0)
        text = parts(question)[best.part].text
        reading = self._reading(passages)
        q_terms = question_terms(text)
        q_terms -= _said_by_value(text, q_terms, best.text, reading)
        weights = _term_weights(q_terms, reading.passage_terms)
        absent = reading.absent(q_terms)
        said = [w for w in words(_WORD_HYPHEN.sub(" ", text)) if stem(w) in absent]
        absent_names = _absent_names(text, q_terms, reading)
        named = [w for w in _surface_words(text) if stem(w.lower()) in absent_names]
        # The names have a feature of their own; ``missing`` is the other words,
        # each as much as the question's meaning depends on it.
        others = absent - absent_names
        missing = self._absent_meaning(text, q_terms, weights, others)
        if others:
            # The refusal names the words the question hangs on first.
            salience = self._salience(text, q_terms)
            said.sort(key=lambda w: -salience.get(stem(w), 0.0))
        return Evidence(
            support=best.support,
            margin=best.support - other,
            missing=missing,
            missing_words=tuple(dict.fromkeys(said)),
            names=float(min(len(absent_names), 2)),
            missing_names=tuple(dict.fromkeys(named)),
            words=question_length(question),
            unsaid=self._unsaid_in(question, passages, scored) if unsaid else None,
        )

    def unsaid(self, question: str, passages: Sequence[Passage], scored: list[ScoredUnit]) -> float:
        """The ``unsaid`` feature of the evidence: the share of the best-supported
        part's meaning (its terms' salience) that rests on terms the best unit's own
        passage does not hold.

        ``missing`` only counts terms no passage holds. "How many messages can be
        pinned in one channel?" meets "1 message per second per channel" in a page
        about rate limits; other pages say "pinned", this one does not, and the
        question hangs on it.
        """
        return self._unsaid_in(self.repaired(question, passages), passages, scored)

    def _unsaid_in(
        self, repaired: str, passages: Sequence[Passage], scored: list[ScoredUnit]
    ) -> float:
        """``unsaid`` for the question as ``repaired`` words it. The product's own name
        ("Tallyo", written by the pages of two documents or more) is no term a page
        must repeat: "How long is an invitation to join a Tallyo workspace valid
        for?" is answered by "Invitations are valid for 14 days"."""
        best = _best_supported(scored)
        text = parts(repaired)[best.part].text
        q_terms = question_terms(text)
        reading = self._reading(passages)
        held = _passage_terms(best.passage) | reading.common_names
        held |= _brands(text, reading.titled_names)
        held = held | {t for t in q_terms if synonyms.of(t) & held}
        held |= _said_by_value(text, q_terms, best.text, reading)
        unheld = {t for t in q_terms if t not in held}
        if not unheld:
            return 0.0
        salience = self._salience(text, q_terms)
        meaning = sum(salience.values())
        return sum(salience[t] for t in unheld) / meaning if meaning else 0.0

    def _absent_meaning(
        self, text: str, q_terms: set[str], weights: Mapping[str, float], absent: set[str]
    ) -> float:
        """How much of the question's meaning rests on its ``absent`` terms: each
        one's share of the rarity weight times its salience, over the question's
        whole salience.

        The rarity share alone made a customer's story cost as much as an
        undocumented subject: "My husband lost his job … anything cheaper?" lost
        most of its support for "husband" and "job", which no page has and the
        question hardly hangs on, while "whiteboards" in "Can I use whiteboards?"
        is what the question is about.
        """
        total = sum(weights.values())
        if not absent or not total:
            return 0.0
        salience = self._salience(text, q_terms)
        meaning = sum(salience.values())
        if not meaning:
            return 0.0
        return sum(weights[t] / total * salience[t] for t in absent) / meaning

    def _salience(self, text: str, q_terms: set[str]) -> Mapping[str, float]:
        """Each term's salience in ``text`` (``_salience_of``), once per question."""
        return self._salient(text, frozenset(q_terms))

    def _salience_of(self, text: str, q_terms: frozenset[str]) -> Mapping[str, float]:
        """How much the question's meaning depends on each of its terms: how far its
        embedding moves when the term's words are left out (1 - cosine).

        A paraphrase's own wording ("worst case", "sit in the trash") barely moves
        it; the thing asked about ("whiteboards", "webinar") moves it most. So an
        absent word the question hangs on says the evidence does not answer, and
        an absent turn of phrase does not.
        """
        spoken = words(_WORD_HYPHEN.sub(" ", text))
        terms = sorted(q_terms)
        variants = [" ".join(w for w in spoken if stem(w) != t) for t in terms]
        # The whole question written the same way (words only), so that only the
        # left-out term moves it.
        vectors = self._embedder.embed([" ".join(spoken), *variants])
        return {
            t: max(0.0, 1.0 - float(vectors[0] @ vectors[i])) for i, t in enumerate(terms, start=1)
        }

    def refusal(self, request: GenerationRequest, scored: list[ScoredUnit]) -> Final | None:
        """The refusal these scores call for, or None when the evidence answers.

        A question that only a value answers (a phone number, an email address, a
        weight) is refused when no passage holds one; under the min_support floor
        nothing answers; above it the answerability model (when configured)
        decides from the shape of the evidence.
        """
        if not request.passages:
            return _refusal(
                RefusalReason.NO_EVIDENCE, "No passage in the knowledge base matched the question."
            )
        top = _best_supported(scored) if scored else None
        best = top.support if top is not None else 0.0
        # Before the floor: "gives no phone number" says more than a support figure.
        lacking = _lacking_value(request.question, request.passages)
        if lacking is not None:
            return _refusal(
                RefusalReason.WEAK_EVIDENCE,
                f"The knowledge base gives no {lacking} for this question.",
                best,
            )
        # What a member of staff may grant is for the pages that speak of them.
        role = granting_role(self.repaired(request.question, request.passages))
        if role is not None and not any(
            role.named_in(f"{p.title} {p.section} {p.text}") for p in request.passages
        ):
            return _refusal(
                RefusalReason.WEAK_EVIDENCE,
                f"No passage in the knowledge base says what the question's “{role.phrase}” "
                "can grant.",
                best,
            )
        threshold = self.threshold(request)
        if best < threshold:
            return _refusal(
                RefusalReason.WEAK_EVIDENCE,
                "The knowledge base has no passage that answers this question "
                f"(best support {best:.3f} < {threshold:.3f}).",
                best,
            )
        # The answer leads with the best-ranked unit that reaches the floor; keyed by
        # the question's code, it answers it however much more another unit says.
        leading = next((s for s in scored if s.support >= threshold), None)
        coded = _code_answered(request.question, top) or _code_answered(request.question, leading)
        coded = coded or _form_stated(request.question, leading)
        if self.answerability is not None and not coded:
            evidence = self.evidence(request.question, request.passages, scored, unsaid=False)
            answerable = self.answerability.settled(evidence)
            if answerable is None:
                evidence = replace(
                    evidence, unsaid=self.unsaid(request.question, request.passages, scored)
                )
                answerable = self.answerability.answerable(evidence)
            if not answerable:
                return _refusal(
                    RefusalReason.WEAK_EVIDENCE, self.answerability.reason(evidence), best
                )
        return None

    def _kinds(self, request: GenerationRequest) -> list[AnswerType]:
        """The kind of answer each part of the question asks for, as ``score`` split it."""
        return [p.answer_type for p in parts(self.repaired(request.question, request.passages))]

    def _complete(self, chosen: ScoredUnit, question: str) -> ScoredUnit:
        """A unit that only makes sense with its neighbours, completed from the passage.

        A lead-in ("The following roles can export data:") is answered with its
        items; a step asked about as "what do I do after X" with the step after X.
        """
        unit = chosen.unit
        if unit is None:
            return chosen
        siblings = self._passage_units(chosen.passage)
        if unit.kind == "sentence" and unit.text.endswith(":"):
            listed = _listed(siblings, unit.text)
            if listed:
                return replace(chosen, text=listed)
        if unit.kind == "item" and unit.text.endswith(":"):
            # A step that leads into a nested list ("2. Click Export and pick a
            # format:") says what it offers only with that list's items.
            own = f"{unit.context} {_unnumbered(unit.text)}".strip()
            nested = [
                _ITEM_END.sub("", u.text)
                for u in siblings
                if u.kind == "item" and u.position > unit.position and u.context == own
            ][:MAX_LISTED_ITEMS]
            if nested:
                return replace(chosen, text=f"{chosen.text} {'; '.join(nested)}")
        if unit.kind == "item" and _AFTER.search(question):
            following = [
                u
                for u in siblings
                if u.kind == "item" and u.key == unit.key and u.position > unit.position
            ]
            if following:
                after = _unnumbered(following[0].text)
                # Items of a list written as one sentence ("…in the last 48 hours;")
                # go on with a semicolon; steps each end as a sentence.
                running = unit.text.rstrip().endswith((";", ","))
                head = chosen.text
                joined = f"{head}; {after}" if running else f"{_sentence(head)} {after}"
                return replace(chosen, text=joined)
        ahead = _BEFORE.search(question)
        if (
            unit.kind == "item"
            and ahead is not None
            and content_terms(ahead.group(1)) <= content_terms(unit.text)
        ):
            # "What do I have to do before mediation?": the step before the one that
            # names mediation ("(a) first give us 30 days … (b) then try mediation").
            preceding = [
                u
                for u in siblings
                if u.kind == "item" and u.key == unit.key and u.position < unit.position
            ]
            if preceding:
                before = preceding[-1]
                running = before.text.rstrip().endswith((";", ","))
                step = before.text if running else _sentence(before.text)
                # The lead-in the chosen item is quoted with stays in front of both.
                lead = chosen.text[: -len(unit.text)] if chosen.text.endswith(unit.text) else ""
                if lead:
                    step = _unnumbered(step)
                # Inside the sentence a list number ("… first run. 5. Type DELETE")
                # reads as a value no passage gives; the step's own one may open it.
                rest = _unnumbered(chosen.text[len(lead) :])
                return replace(chosen, text=f"{lead}{step} {rest}")
        return chosen

    def _whole_lists(self, question: str, chosen: list[ScoredUnit]) -> list[ScoredUnit]:
        """Two or more items of one list answer as the list: its lead-in and items.

        "What are guests not allowed to do?" matches several items of "Guests
        cannot:", and three of its five items would read as the whole answer.
        """
        steps = bool(_HOW_DO_I.match(question))
        groups: dict[tuple[int, str, int], list[int]] = {}
        for i, s in enumerate(chosen):
            if s.unit is not None and s.unit.kind == "item":
                groups.setdefault(self._list_of(s, steps), []).append(i)
        # A list of tiers ("(b) less than 7 days but at least 24 hours before
        # departure: …") answers "that's five days away" with the tier it falls in.
        tiers = {
            key: [i for i in group if _tier_of(chosen[i], question)]
            for key, group in groups.items()
        }
        out: list[ScoredUnit] = []
        for i, s in enumerate(chosen):
            unit = s.unit
            key = self._list_of(s, steps)
            group = groups.get(key) if unit is not None else None
            if unit is None or group is None or len(group) < 2:
                out.append(s)
            elif tiers[key]:
                if i in tiers[key]:
                    out.append(s)
            elif group[0] == i:
                siblings = self._all_units(s.passage)[0]
                start = key[2]
                out.append(replace(s, text=_listed(siblings, unit.key, start)))
        return out

    def _list_of(self, s: ScoredUnit, steps: bool) -> tuple[int, str, int]:
        """Which list an item belongs to: its passage, its lead-in, and, asked how to
        do something, for numbered steps with no lead-in (right under their heading,
        "How do I reset my password?") the position their run starts at, so two
        such lists of one passage stay apart. -1 for a list with a lead-in (and for
        no item). Any other item without a lead-in is a list of its own: bullets
        are often a page's facts one by one ("OCC, 24 hours: 020 7946 0877"), and a
        question after one step ("what's shown only once?") wants that step; the
        whole list would bury it."""
        unit = s.unit
        if unit is None or unit.kind != "item":
            return (s.passage.number, "", -1)
        if unit.key:
            return (s.passage.number, unit.key, -1)
        if not steps or not _ITEM_NUMBER.match(unit.text):
            return (s.passage.number, "", -2 - unit.position)
        every = self._all_units(s.passage)[0]
        start = unit.position
        while start > 0 and every[start - 1].kind == "item" and not every[start - 1].key:
            start -= 1
        return (s.passage.number, "", start)

    async def generate(self, request: GenerationRequest) -> AsyncIterator[GenerationEvent]:
        async for event in self._generate(request):
            yield with_word_usage(event, request)

    async def _generate(self, request: GenerationRequest) -> AsyncIterator[GenerationEvent]:
        # Scoring and the answerability check embed (units, term salience): CPU work,
        # off the event loop, in one trip to a thread (each trip's hand-back wakes
        # the loop: with two a request, the wake-ups were 28 % of the generator's
        # samples under load; docs/performance.md).
        def decide() -> tuple[list[ScoredUnit], Final | None]:
            scored = self.score(request.question, request.passages, self.known_vectors(request))
            return scored, self.refusal(request, scored)

        scored, refused = await asyncio.to_thread(decide)
        async for event in self._answer(request, scored, refused):
            yield event

    async def answer(
        self, request: GenerationRequest, scored: list[ScoredUnit]
    ) -> AsyncIterator[GenerationEvent]:
        """The answer from units already scored (LLM backends fall back to this)."""
        # The answerability check may embed (term salience): off the event loop.
        refused = await asyncio.to_thread(self.refusal, request, scored)
        async for event in self._answer(request, scored, refused):
            yield with_word_usage(event, request)

    async def _answer(
        self, request: GenerationRequest, scored: list[ScoredUnit], refused: Final | None
    ) -> AsyncIterator[GenerationEvent]:
        if refused is not None:
            yield refused
            return
        best = _best_supported(scored).support
        selected = self.select(scored, request.max_output_tokens, request.min_support)
        kinds = self._kinds(request)
        chosen = _without_repeats(
            self._whole_lists(
                request.question,
                [
                    self._complete(u, request.question)
                    for u in _asked_step(
                        _marked_as_asked(
                            _with_asked_value(selected, scored, kinds),
                            scored,
                            request.question,
                            kinds,
                            self._config.max_sentences,
                        ),
                        request.question,
                    )
                ],
            )
        )
        chosen = _with_heading(_without_told_changes(chosen), kinds, request.question)
        # One delta per quoted unit with its citation, as the LLM backends send one
        # checked sentence per delta. The whole answer is known at once, so smaller
        # pieces paced nothing for the reader; each cost a gRPC message, an event in
        # the run's Redis log and an SSE event to every stream (four-word deltas: ten
        # to a typical answer; docs/performance.md has what one per unit saved).
        pieces: list[str] = []
        for n, unit in enumerate(chosen):
            # A page's own "[5, 25, 50]" must not read as citations (ragway/citations.py).
            quoted = escape_literals(_sentence(unit.text))
            text = ("" if n == 0 else " ") + f"{quoted} [{unit.passage.number}]"
            for piece in _word_pieces(text, self._config.delta_words):
                yield Delta(text=piece, index=len(pieces))
                pieces.append(piece)
        cited = list(dict.fromkeys(s.passage.number for s in chosen))
        yield Final(
            answer="".join(pieces),
            verdict=Verdict.GROUNDED,
            model=MODEL,
            prompt_version=POLICY_VERSION,
            cited_passages=cited,
            evidence_score=best,
        )


def with_word_usage(event: GenerationEvent, request: GenerationRequest) -> GenerationEvent:
    """A final with its usage in words: no model tokenizer reads the passages here.

    Input: the words (``ragway.text.words``) of the question and of each passage's
    title, section and text, all of which the backend reads; output: the words of
    the answer (a refusal has none). Citation markers ``[n]`` count as a word each.
    """
    if not isinstance(event, Final):
        return event
    given = [request.question]
    for p in request.passages:
        given += (p.title, p.section, p.text)
    read = sum(len(words(text)) for text in given)
    return replace(event, usage=Usage(input_tokens=read, output_tokens=len(words(event.answer))))


# "outside peak season", "outside the US and the EU", "outside office hours": what the
# question sets aside, one to three words, each alternative apart.
_OUTSIDE = re.compile(
    r"\boutside\s+(?:of\s+)?(?:the\s+|our\s+|your\s+)?([\w'-]+(?:\s+(?:and|or)\s+"
    r"(?:the\s+)?[\w'-]+|\s+(?!(?:and|or|to|for|in|on|at|if|when|but|is|are|do|does|can|"
    r"will)\b)[\w'-]+){0,2})",
    re.I,
)
# A row or column that names the set-aside thing to say it is not it: "rest of the
# season", "out of hours", "off-peak", "non-EU".
_COMPLEMENT = re.compile(r"\b(?:out of|outside|after|rest of|other|off|non|except|not)\b", re.I)


def _outside(text: str) -> tuple[frozenset[str], ...]:
    """The terms of each thing the question asks about the outside of ("outside
    peak season": peak and season), or none."""
    m = _OUTSIDE.search(text)
    if not m:
        return ()
    alternatives = re.split(r"\s+(?:and|or)\s+(?:the\s+)?", m.group(1))
    return tuple(t for t in (frozenset(content_terms(a)) for a in alternatives) if t)


def _excluded(
    label: str, outside: tuple[frozenset[str], ...], terms: AbstractSet[str] | None = None
) -> bool:
    """Whether a column header or row key (``label``; its ``terms``, by default its
    content terms) names a thing the question sets aside: all of one alternative's
    terms, and no word that says it is the rest. Nothing is set aside for most
    questions, and then no label is read."""
    if not outside:
        return False
    held = content_terms(label) if terms is None else terms
    return any(alt <= held for alt in outside) and not _COMPLEMENT.search(label)


def _quote(
    u: Unit, q_terms: set[str], part: QuestionPart, outside: tuple[frozenset[str], ...] = ()
) -> str:
    """What the answer says for this unit: the unit, or a row's key and the asked cells
    (never a column the question sets aside, ``_outside``)."""
    if u.kind == "row":
        # The words a header shares with the row's key name the row, not the column:
        # "Proportion of Band D" in the row "Band D" says nothing of "the Band D charge".
        keyed = content_terms(u.key)
        asked = _fullest(
            [
                (i, set(content_terms(header) - keyed))
                for i, (header, _) in enumerate(u.cells)
                if i > 0
                and header
                and (content_terms(header) - keyed) & q_terms
                and not _excluded(header, outside)
            ],
            q_terms,
        )
        if part.answer_type not in (AnswerType.ANY, AnswerType.NAME) and not any(
            holds(u.cells[i][1], part.answer_type) for i in asked
        ):
            # No named column holds the asked kind of value: the cells that do answer.
            # "How much is Launch per month?" names "Build minutes / month" and
            # "Bandwidth / month", but the price is in the Price column.
            asked += [
                i
                for i, (header, cell) in enumerate(u.cells)
                if i > 0
                and i not in asked
                and holds(cell, part.answer_type)
                and not _excluded(header, outside)
            ]
        if asked:
            # A cell that says what the question asks about in its own words, beyond
            # the key and the asked columns: "screen sharing" is in the Notes cell
            # ("Screen sharing needs Firefox 121"), not in the Minimum version column.
            said = content_terms(" ".join([u.key, *(" ".join(u.cells[i]) for i in asked)]))
            asked += [
                i
                for i, (_, cell) in enumerate(u.cells)
                if i > 0 and i not in asked and len((content_terms(cell) & q_terms) - said) >= 2
            ]
            asked.sort()
        # A transposed table (features as rows, plans as columns): the column
        # header is the entity ("Business"), the row key the attribute.
        quoted = u.row_text(asked or None)
        if u.note and FOOTNOTE_MARK.search(quoted):
            # The footnote a quoted cell points to ("pay day†") says what the cell
            # leaves out ("Same-day runs are limited to $25,000 per run"); beside
            # it, the mark itself is only a stray "*" or "†".
            quoted = f"{_sentence(unmarked(quoted, u.note_marks))} {u.note}"
        return quoted
    if u.kind == "item" and u.key and len(words(u.key)) <= 25:
        # Joined to its lead-in the item reads as one sentence, where "1." would
        # read as a value; an item that ends the way a list written as one sentence
        # does ("you aren't charged;", "…a utility bill; or") ends as a sentence.
        return f"{u.key} {_RUNNING_END.sub('', _unnumbered(u.text))}"
    if u.kind == "item":
        return _RUNNING_END.sub("", u.text) or u.text
    if u.kind == "sentence" and u.key:
        # A sentence that leans on the one before it is quoted with it (ragway/units.py).
        return f"{u.key} {u.text}"
    if u.kind == "code" and u.key:
        return f"{u.key} {u.text}"
    return u.text


def _sentence(text: str) -> str:
    """A unit ends like a sentence before its citation."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?", ":")) else text + "."


def _holding_first(first: ScoredUnit, ranked: Sequence[ScoredUnit], least: float) -> ScoredUnit:
    """For a part that asks for an amount, a percentage, a port, a weight, a phone
    number or an email address, the best-ranked unit that holds one, when the first
    does not and it is as well supported as a runner-up would need to be.

    "What's the early exit fee on a 12-month agreement?" ranked first the list of when
    the fee is waived (its lead-in names the fee and the agreement) over "…you pay an
    early exit fee of $149"; a price question answered without a price answers nothing.
    """
    if not first.strict or not first.features or first.features[_HOLDS_KIND] > 0:
        return first
    return next(
        (s for s in ranked if s.features and s.features[_HOLDS_KIND] > 0 and s.support >= least),
        first,
    )


# A sentence that tells a change gives the old value beside the new one: "Free Hobby
# instances now sleep after 30 minutes without traffic instead of 15 minutes".
_CHANGE = re.compile(
    r"\b(?:instead of|previously|used to be|was formerly|"
    r"(?:up|down|raised|lowered|increased|reduced|changed|cut|goes|go|going|went|moves|rises|"
    r"falls|drops) from)\b",
    re.I,
)


def _tells_change(s: ScoredUnit) -> bool:
    """Whether the unit tells how a value changed. A row's key names an option ("Store
    credit instead of refund — Tier 1 agent: up to $100"), so only its cells can."""
    unit = s.unit
    if unit is not None and unit.kind == "row":
        return any(_CHANGE.search(cell) for _, cell in unit.cells[1:])
    return _CHANGE.search(s.text) is not None


def _without_told_changes(chosen: list[ScoredUnit]) -> list[ScoredUnit]:
    """The answer's units less those that tell how a value an earlier unit of the same
    part gives came to be: the part is answered, and the change only brings the old
    value back ("Business — Envelopes per month: 500" then "…with 500 envelopes a month
    instead of 400")."""
    kept: list[ScoredUnit] = []
    for s in chosen:
        if not any(k.part == s.part and _restates(s, k, by_value=True) for k in kept):
            kept.append(s)
    return kept


def _current_first(first: ScoredUnit, ranked: Sequence[ScoredUnit], least: float) -> ScoredUnit:
    """A unit that gives the same value without the old one (with support ``least``),
    before a release note's sentence that gives both.

    The changelog's "now sleep after 30 minutes … instead of 15 minutes" ranked above
    the plans page's "Free instances sleep after 30 minutes"; quoted, it puts the stale
    value in the answer beside the right one.
    """
    if not _tells_change(first):
        return first
    return next((s for s in ranked if s.support >= least and _restates(first, s)), first)


def _restates(change: ScoredUnit, current: ScoredUnit, *, by_value: bool = False) -> bool:
    """``change`` tells how a value ``current`` gives plainly came to be: a runner-up
    that would only bring the old value back into the answer. ``by_value``: the
    numbers alone are compared, so a table's "Envelopes per month: 500" is the
    change's "500 envelopes"."""
    if not _tells_change(change) or _tells_change(current):
        return False
    told = {q.value if by_value else q for q in ranges.quantities(change.text)}
    given = {q.value if by_value else q for q in ranges.quantities(current.text)}
    # The value both give ("30 minutes"), and another only the change gives: the old one.
    return bool(told & given) and bool(told - given)


def _best_supported(scored: Sequence[ScoredUnit]) -> ScoredUnit:
    """The unit with the most support (the first, unless a ranker orders them)."""
    return max(scored, key=lambda s: s.support)


# "See Delay Repay compensation.", "For details, see Fees and charges.": a sentence
# that only sends the reader to another page, named by its title. It shares the
# question's words (the page's name) and says nothing, so it is never an answer; "See
# your invoices under Billing → Invoices" says where, and stays.
_POINTER = re.compile(
    r"^(?:(?i:for|to)\s[^,.]{1,60},\s+)?(?i:please\s+)?(?i:see)\s+(?i:also:?\s+)?(?:the\s+)?"
    r"[A-Z][\w'\u2019&-]*(?:\s+[\w'\u2019&-]+){0,7}\.?$"
)


def _pointer(u: Unit) -> bool:
    return u.kind == "sentence" and _POINTER.match(u.text) is not None and not _has_digit(u.text)


def _same_unit(a: ScoredUnit, b: ScoredUnit) -> bool:
    return a.passage.number == b.passage.number and a.position == b.position


def _with_cells_of(kept: ScoredUnit, other: ScoredUnit) -> ScoredUnit:
    """A row quoted for one part, with the cells another part quoted of it too.

    Only plain cell quotes are merged: a quote that is more than its row's cells (a
    footnote it points to) stays as it was.
    """
    unit = kept.unit
    if unit is None or unit.kind != "row" or kept.text == other.text:
        return kept
    quoted = [_cells_in(unit, t) for t in (kept.text, other.text)]
    if any(
        unit.row_text(cells) != t for cells, t in zip(quoted, (kept.text, other.text), strict=True)
    ):
        return kept
    return replace(kept, text=unit.row_text(sorted(set(quoted[0]) | set(quoted[1]))))


def _cells_in(unit: Unit, text: str) -> list[int]:
    """The cells (indexes, the key excluded) a row's quote says."""
    return [
        i
        for i, (header, cell) in enumerate(unit.cells)
        if i > 0 and cell and f"{header}: {cell}" in text
    ]


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


# How a question asks, not what it asks about: "how long", "at what point", "do I
# get", "if we just don't". A passage that answers need not contain them, so they
# neither count as covered nor as missing.
_ASKING = re.compile(
    # "how much notice" first: as a whole it asks how long before, as "how long" does.
    r"\b(?:how much (?:advance )?(?:notice|warning)"
    r"|how (?:long|many|much|often|frequently|regularly|soon|quickly|far|big|large)"
    # "What time of day does the delivery come?" asks for a clock time: its "day" is
    # no "Day" column's (a round's "Day: Thursday" answered it in place of "9am-2pm").
    r"|at what point|what point|up to|what time(?: of (?:the )?day)?|what hours"
    # "What does a booking reference look like?" asks for its form (ragway/question.py).
    r"|looks? like|what format)\b",
    re.I,
)
# "What are your support hours?" asks for a time (ragway/question.py): "hours" says
# which kind of value, as "how long" does, and pages write "Monday to Friday, 9:00 to 17:30".
_HOURS_OF = re.compile(
    r"\b(opening|office|business|support|phone|helpline|hotline|service|staffed)\s+hours\b", re.I
)
# "When is phone support open?", "what time does the club close?": "open" and "close"
# say that a time is asked, as "what hours" does, and the page's "Monday to Friday,
# 9:00 to 17:30" need not say them.
_OPEN_WHEN = re.compile(r"^(\s*(?:when|what time)\b.*?)\b(?:open|opens|close|closes)\b", re.I)
_FILLER = frozenset(stem(w) for w in (
    "get", "gets", "got", "getting", "just", "dont", "don't", "doesnt", "didnt", "ask", "asks",
    "asked", "actually", "really", "anyone", "anything", "someone", "something", "thing",
    "things", "guys", "pls", "please", "ok", "okay", "still", "need", "needs", "want", "wants",
    "whats", "hows", "wheres", "whos",
    # How a question asks about a thing, not the thing: "How is support computed?",
    # "What happens if …", "What does NW-1190 mean?", "How does resume work?".
    "computed", "calculated", "determined", "happens", "happen", "mean", "means", "work",
    "works",
    # Who a customer's story is about ("my daughter … she's still getting on sites she
    # shouldn't"), and what is left of a contraction once the apostrophe splits it
    # ("isn't" reads as "isn" and "t"): no page states them, and they name nothing.
    "he", "him", "his", "she", "her", "hers", "herself", "himself", "myself", "ourselves",
    "yourself", "yourselves", "themselves", "us", "am", "isn", "aren", "wasn", "weren", "don",
    "doesn", "didn", "won", "wouldn", "shouldn", "couldn", "haven", "hasn", "hadn", "ll", "re",
    "ve",
))  # fmt: skip


def question_terms(text: str) -> set[str]:
    """A question's content terms, without the words of its asking, nor those that
    say which step it asks for ("the second step", "step 2"): they point into a
    numbered list, which says "2." rather than "second step", so they are no subject
    the passages lack (``_ordinal`` still reads them)."""
    asking = _HOURS_OF.sub(r"\1", _ASKING.sub(" ", _OPEN_WHEN.sub(r"\1", text)))
    terms = set(content_terms(_ORDINAL.sub(" ", asking)) - _FILLER)
    if _COUNTRY_US.search(text):
        # "a US card" names a country, as the page's "(US cards)" does; "us" the
        # pronoun is filler.
        terms.add("us")
    return terms


_COUNTRY_US = re.compile(r"\bUS\b|\bU\.S\.")

# Asked for a value whose kind the question names ("What's the 24-hour phone number for
# the Operations Control Centre?", "What number do I ring?"), a page gives the value
# without the words: "Operations Control Centre (OCC), 24 hours: 020 7946 0877". They
# say which kind of value, as "how long" does: scoring drops them where no passage has
# them, the evidence also where the answering unit holds such a value
# (``_said_by_value``). A question that names the kind while asking how to change one
# ("How do I change my phone number?") is not typed so.
_VALUE_NAMED: dict[AnswerType, frozenset[str]] = {
    AnswerType.PHONE: frozenset(
        stem(w) for w in ("phone", "telephone", "number", "numbers", "ring", "call", "dial")
    ),
    AnswerType.EMAIL: frozenset(stem(w) for w in ("email", "mail", "address", "addresses")),
    # "What's the acknowledge time for a P2 incident?": "Acknowledge within: 30 minutes".
    AnswerType.DURATION: frozenset(stem(w) for w in ("time", "times")),
    # "How heavy are your e-bikes?": "They weigh about 24 kg".
    AnswerType.WEIGHT: frozenset(
        stem(w) for w in ("heavy", "heavier", "heaviest", "weight", "weights", "weigh")
    ),
    # "the smallest amount I can top up": "The minimum top-up is £5".
    AnswerType.AMOUNT: frozenset(stem(w) for w in ("amount", "amounts")),
}


# Asked for a limit ("PayGo minimum top-up", "the longest I can keep it"), a page states
# one in its own words: "at least $20 at a time".
_BOUND_NAMED = frozenset(
    stem(w)
    for w in (
        "maximum", "max", "minimum", "min", "longest", "shortest", "largest", "biggest",
        "smallest", "highest", "lowest", "heaviest", "lightest", "most", "fewest", "least",
        "limit", "limits", "cap",
        # "group rooming list deadline": "must reach us at least 14 days before arrival".
        "deadline", "deadlines",
    )
)  # fmt: skip


def _said_by_value(text: str, q_terms: set[str], answer: str, reading: _Reading) -> set[str]:
    """The question's words for the kind of value it asks that the ``answer`` says by
    holding one: "time" where it holds "within: 30 minutes", whatever other pages say;
    where it holds none, those no passage has."""
    kind = answer_type(text)
    named = _value_named(text, q_terms, kind, answer)
    if kind in _VALUE_NAMED and holds(answer, kind):
        return named
    return reading.absent(named)


def _value_named(
    text: str, q_terms: set[str], kind: AnswerType, answer: str | None = None
) -> set[str]:
    """The question's terms that only name the ``kind`` of value it asks for; the words
    of a limit too where the ``answer`` states one."""
    named = q_terms & _VALUE_NAMED.get(kind, frozenset())
    if answer is not None and asks_bound(text) and states_bound(answer):
        named |= q_terms & _BOUND_NAMED
    return named


# Bounded: every answer reads the terms of every unit of its passages, and popular
# passages come back answer after answer (a tenth of the generator's CPU under load was
# these regular expressions over the same texts, docs/performance.md). Frozen: callers
# share the cached sets.
@functools.lru_cache(maxsize=1 << 13)
def content_terms(text: str) -> frozenset[str]:
    """The content terms the selection compares: hyphenated words as their parts,
    and every way of saying that something may not be done as one term."""
    text = _E_PREFIX.sub("e", _NOT_ALLOWED.sub(" cannot ", text))
    text = _SHORT_UNIT.sub(lambda m: f"{m.group(1)} {_UNIT_WORDS[m.group(2).lower()]}", text)
    text = _MEASURE_SYMBOL.sub(lambda m: f" {_MEASURE_WORDS[m.group(1)]} ", text)
    text = _NUMBER_HYPHEN.sub(" ", text)
    terms = _content_terms(_THOUSANDS.sub("", _WORD_HYPHEN.sub(" ", text)))
    return frozenset(terms | _letter_codes(text) | _calendar_terms(text))


# A number joined to its unit or to its bound is the number and the word: "a 50-minute
# lesson" is the row "50 minutes", "an under-18 visitor" the row "Junior visitor (under
# 18)". Codes keep their hyphens ("RP-14", "pg-pro-8").
_NUMBER_HYPHEN = re.compile(
    r"(?<=\d)-(?=(?:minute|hour|day|week|month|year|night|mile|km|inch|foot|feet|metre"
    r"|meter|litre|liter|kg|pound)s?\b)"
    r"|(?<=\b[Uu]nder)-(?=\d)|(?<=\b[Oo]ver)-(?=\d)"
)


# A unit of time written short after its number is the word a page writes in full: "a
# 1hr automatic lesson" is the row "1 hour". The spelling repair spells out such words
# standing alone, but not one joined to its number ("1hr"), nor "min", which alone may
# be a minimum.
_UNIT_WORDS = {
    w: spelling.SHORTHAND[w] for w in ("hr", "hrs", "mins", "wk", "wks", "mth", "mths", "yr", "yrs")
} | {"min": "minutes"}
_SHORT_UNIT = re.compile(rf"\b(\d+(?:\.\d+)?)\s?({'|'.join(_UNIT_WORDS)})\b", re.I)

# A unit of measure a table's column names by its symbol is the word a question says:
# "Height (m)" answers "in metres", "Water tanks (L) Fresh" "fresh water litres". Both
# spellings, as customers write either.
_MEASURE_WORDS = {
    "m": "metres meters",
    "cm": "centimetres centimeters",
    "mm": "millimetres millimeters",
    "km": "kilometres kilometers km",
    "L": "litres liters",
    "l": "litres liters",
    "kg": "kilograms kilos kg",
}
# Case as written: "(M)" is a size, "(L)" and "(l)" are litres.
_MEASURE_SYMBOL = re.compile(rf"\(({'|'.join(_MEASURE_WORDS)})\)")


# Hours tables write the days short and as spans: "Mon-Fri 8 a.m.-9 p.m.", "Sat 9 a.m.-1
# p.m." hold "on a Saturday" and "on Wednesdays". Only a capitalised short form before
# hours, a span or a list is a day ("Sat: 7 am", "Sun and public holidays"), not "sat".
_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_OF = {name[:3]: i for i, name in enumerate(_DAY_NAMES)} | {
    "tues": 1,
    "thur": 3,
    "thurs": 3,
}
_DAY = r"(?:Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)(?:day)?\.?"
_SHORT_DAY = re.compile(
    r"\b(Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)\b\.?"
    r"(?=\s*(?:[:\u2013\u2014,/&-]|\d|and\b|to\b|$))"
)
_DAY_SPAN = re.compile(rf"\b({_DAY})\s*(?:\u2013|\u2014|-|to|through|thru)\s*({_DAY})", re.I)
_DAY_STEMS = tuple(stem(name) for name in _DAY_NAMES)


# Seasons are written as spans of months: "Summer (Apr-Oct)" holds "a round in August".
# Capitalised only: "you may to" is no month.
_MONTH_NAMES = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sept?(?:ember)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_MONTH_SPAN = re.compile(rf"\b({_MONTH})\s*(?:\u2013|\u2014|-|to|through|until)\s*({_MONTH})\b")
_MONTH_STEMS = tuple(stem(name) for name in _MONTH_NAMES)
_MONTH_OF = {name[:3]: i for i, name in enumerate(_MONTH_NAMES)}


def _calendar_terms(text: str) -> set[str]:
    """The full names of the days a text writes short or spans ("Mon-Fri": all five),
    and of the months a span covers ("Apr-Oct")."""
    found = {_DAY_STEMS[_DAY_OF[m.group(1).lower()]] for m in _SHORT_DAY.finditer(text)}
    for m in _DAY_SPAN.finditer(text):
        first, last = (_DAY_OF[g.lower().rstrip(".")[:3]] for g in m.groups())
        span = (last - first) % 7
        found |= {_DAY_STEMS[(first + i) % 7] for i in range(span + 1)}
    for m in _MONTH_SPAN.finditer(text):
        first, last = (_MONTH_OF[g.lower()[:3]] for g in m.groups())
        span = (last - first) % 12
        found |= {_MONTH_STEMS[(first + i) % 12] for i in range(span + 1)}
    return found


# "Band B", "Plan A", "Zone C": a one-letter name that only its noun makes a term
# (a single letter is no content term). Without it every row of a banded table met
# "a Band E home" on "band" alone, and the answer quoted three bands.
_LETTER_CODE = re.compile(r"\b([A-Z][a-z]+) ([A-Z])\b(?![.'\u2019&-]\w)")


def _letter_codes(text: str) -> set[str]:
    return {
        f"{stem(m.group(1).lower())}_{m.group(2).lower()}"
        for m in _LETTER_CODE.finditer(text)
        if m.group(1).lower() not in STOPWORDS
    }


# "e-bike", "e bike" and "ebike" are one thing, and not a bike of any kind: split at
# the hyphen, "e-scooters" met "can I bring my bike" on "bike" alone.
_E_PREFIX = re.compile(r"\b(?:e[-\s]|E-)(?=[a-z]{3,})")


# "What are guests not allowed to do?" is answered by "Guests cannot: install apps":
# a prohibition is one idea however it is worded, so both sides read it as "cannot".
_NOT_ALLOWED = re.compile(
    r"\b(?:(?:is|are|be)\s+)?(?:not|\w+n't)\s+(?:allowed|permitted|able)(?:\s+to)?\b|"
    r"\bcan(?:'t|\s+not|not)\b|\bunable\s+to\b|\bprohibited\b|\bforbidden\s+to\b",
    re.I,
)


_COUNT_TOKEN = re.compile(r"\d[\d,.]*|[A-Za-z][\w-]*|:")


# "How many times can I type the wrong password" is answered by "5 failed password
# attempts": a count of repetitions is said with any of these nouns.
_REPETITIONS = frozenset(
    stem(w) for w in ("times", "attempts", "tries", "retries", "failures", "occurrences")
)


def _same_count_noun(word_stem: str, noun_stem: str) -> bool:
    return word_stem == noun_stem or (noun_stem in _REPETITIONS and word_stem in _REPETITIONS)


def _counts(text: str, noun_stem: str) -> bool:
    """Whether ``text`` gives a number of the counted thing: "3 times", "12 recovery
    codes" (the noun within two words after the number) or "Max members: 2,000"."""
    tokens = _COUNT_TOKEN.findall(text)
    for i, token in enumerate(tokens):
        if not token[0].isdigit():
            continue
        for word in tokens[i + 1 : i + 4]:
            if word[0].isdigit() or word == ":":
                break
            if _same_count_noun(stem(word.lower()), noun_stem):
                return True
        if (
            i >= 2
            and tokens[i - 1] == ":"
            and _same_count_noun(stem(tokens[i - 2].lower()), noun_stem)
        ):
            return True
    return False


# Kinds of answer that are a value or nothing: asked for a phone number, a
# sentence that mentions phones is not an answer, however close its words.
_VALUE_ONLY: dict[AnswerType, str] = {
    AnswerType.PHONE: "phone number",
    AnswerType.EMAIL: "email address",
    AnswerType.WEIGHT: "weight",
}


_NAMES_PHONE = re.compile(r"\b(?:(?:tele)?phone|hotline|helpline)\b", re.I)


def _lacking_value(question: str, passages: Sequence[Passage]) -> str | None:
    """The value a question can only be answered with, when no passage holds one."""
    asked = {part.answer_type for part in parts(question)}
    if len(asked) != 1 or (kind := asked.pop()) not in _VALUE_ONLY:
        return None
    if kind is AnswerType.PHONE and not _NAMES_PHONE.search(question):
        # "What number do I call to hear my voicemail?" may be a short code ("321").
        return None
    if any(holds(p.text, kind) for p in passages):
        return None
    return _VALUE_ONLY[kind]


def _holds_asked(text: str, kind: AnswerType, noun_stem: str | None) -> bool:
    """Whether ``text`` holds a value of the asked kind: for "how many codes", a
    number of codes ("12 recovery codes", "Max codes: 12"), not any number."""
    holding = holds(text, kind)
    if holding and noun_stem is not None:
        holding = _counts(text, noun_stem)
    return holding


def _row_keys(passage_units: Sequence[Unit]) -> dict[int, set[str]]:
    """Each row's distinguishing key terms, by unit position.

    The terms every row key of a table shares name the table, not the row: in
    rows "Webinars 1,000" and "Webinars 3,000" only the number tells them apart,
    so "Webinars 10,000" matches neither.
    """
    tables: dict[str, list[tuple[Unit, set[str]]]] = {}
    for u in passage_units:
        if u.kind == "row":
            tables.setdefault(u.context, []).append((u, set(content_terms(u.key))))
    return _distinguishing(tables.values())


_LABELLED = re.compile(r"^([^:.;?!]{2,40}):\s+\S")
# The condition a line or a clause of terms puts first: "(b) less than 7 days but at least
# 24 hours before departure: a refund of 50% of the fare", "If you cancel 14 days or
# fewer before arrival, you pay the full rental".
_CONDITION = re.compile(
    r"^(?:\(?[a-z0-9]{1,3}[.)]\s+)?(?:(?:if|when|where)\b([^,;:]{3,120}),|([^:]{3,120}?):\s)",
    re.IGNORECASE,
)


def _tier_of(s: ScoredUnit, question: str) -> bool:
    """Whether the unit's condition is a tier a value of the question falls in."""
    return s.unit is not None and ranges.within(_condition(s.unit.text), question)


# Asked of every item and sentence of every retrieved passage, question after question.
@functools.lru_cache(maxsize=1 << 13)
def _condition(text: str) -> str:
    """What a unit states first as its condition, or "" where it states none."""
    m = _CONDITION.match(text)
    return (m.group(1) or m.group(2)) if m else ""


def _label_keys(passage_units: Sequence[Unit]) -> dict[int, set[str]]:
    """Each labelled line's distinguishing label terms, by unit position.

    A list of limits ("Options per product: 3", "Variants per product: 250") is a
    table written as lines: the label is its row key, and as in ``_row_keys`` the
    terms every label of the list shares ("per product") name the list, not the line.
    """
    lists: dict[tuple[str, str], list[tuple[Unit, set[str]]]] = {}
    for u in passage_units:
        if u.kind in ("item", "sentence") and (m := _LABELLED.match(u.text)):
            label = m.group(1)
            if len(label.split()) <= 5 and (terms := set(content_terms(label))):
                lists.setdefault((u.kind, u.context), []).append((u, terms))
    return _distinguishing(lists.values())


def _distinguishing(groups: Iterable[list[tuple[Unit, set[str]]]]) -> dict[int, set[str]]:
    """Each keyed unit's key terms, by position, less the terms every key of its
    group shares (they name the group); a key that has no others keeps them all."""
    out: dict[int, set[str]] = {}
    for keyed in groups:
        keys = [key for _, key in keyed]
        shared: set[str] = set.intersection(*keys) if len(keys) > 1 else set()
        for u, key in keyed:
            out[u.position] = (key - shared) or key
    return out


def _key_matches(
    key: set[str], q_terms: set[str], everywhere: frozenset[str] = frozenset()
) -> bool:
    """The question names this row: it shares a key term, and every number or
    identifier in the key ("Webinars 1,000", "LM-6001") is the question's too.

    A key the question meets only in part, and only in a word that most of the
    retrieved passages say (``everywhere``: the brand), is another row: "Homestead
    Essentials" does not name the row "Homestead Lite".
    """
    shared = key & q_terms
    if not shared or not all(t in q_terms for t in key if _has_digit(t)):
        return False
    return shared == key or not shared <= everywhere


def _passed_over(
    passages: Sequence[Passage],
    units_of: Sequence[Sequence[Unit]],
    row_keys: Mapping[int, Mapping[int, set[str]]],
    q_terms: set[str],
    everywhere: frozenset[str],
) -> set[tuple[int, int]]:
    """The rows (passage number, position) whose key the question meets, but less
    fully than another row's of the same table (``_fullest``): another row."""
    out: set[tuple[int, int]] = set()
    for p, found in zip(passages, units_of, strict=True):
        tables: dict[str, list[tuple[int, set[str]]]] = {}
        for u in found:
            key = row_keys[p.number].get(u.position) if u.kind == "row" else None
            if key and _key_matches(key, q_terms, everywhere):
                # Compared whole: in a table of only "Pro" and "Pro Plus" the keys
                # that tell the rows apart are "pro" and "plus", neither within the other.
                name = _LEADING_CODE.sub("", u.key)
                tables.setdefault(u.context, []).append((u.position, set(content_terms(name))))
        for named in tables.values():
            kept = set(_fullest(named, q_terms))
            out |= {(p.number, i) for i, _ in named if i not in kept}
    return out


# A class code before a row's name ("CA · Compact automatic", "C · Compact"): nobody
# says it, so it does not make "Compact automatic" a name said only in part.
_LEADING_CODE = re.compile(r"^[A-Z][A-Z0-9]{0,3}\s*[·•|]\s*")


def _fullest(named: list[tuple[int, set[str]]], q_terms: set[str]) -> list[int]:
    """Of the names a question meets (row keys or column headers: "Pro", "Pro Plus"),
    the ones it says in full, and of those the longest; all of them when it says
    none in full.

    "How much does Pro cost?" says "Pro" whole and only part of "Pro Plus"; "How
    much is Pro Plus billed annually?" says both whole, and "Pro" only as part of
    "Pro Plus". Before, both rows (or both columns) answered each question.
    """
    whole = [(i, key) for i, key in named if key <= q_terms]
    # A number the question says counts twice: "an under-18 visitor" says more of
    # "Junior visitor (under 18)" than of "Visitor", which it says whole.
    said = {i: sum(1 + _has_digit(t) for t in key & q_terms) for i, key in named}
    if whole and max(said.values()) >= max(said[i] for i, _ in whole) + 2:
        # A name said in full by one word the question uses otherwise ("Users" in
        # "price of Team per user per month") yields to one the question says most
        # of: "Price, billed annually (EUR/user/month)".
        whole = []
    if not whole:
        # Said in part, the ones it says most of: "Price by species (£) Rabbit" over
        # "… Dog" and "… Cat" for "the price to castrate a rabbit".
        most = max(said.values(), default=0)
        return [i for i, _ in named if said[i] == most]
    return [i for i, key in whole if not any(key < other for _, other in whole)]


def _everywhere(passage_terms: Sequence[frozenset[str]]) -> frozenset[str]:
    """The terms more than half of the passages have (a brand, the product's name)."""
    if len(passage_terms) < 3:
        return frozenset()
    counts = Counter(t for terms in passage_terms for t in terms)
    return frozenset(t for t, n in counts.items() if 2 * n > len(passage_terms))


def _has_digit(term: str) -> bool:
    return any(c.isdigit() for c in term)


@functools.lru_cache(maxsize=4096)
def _terms_of(title: str, section: str, text: str) -> frozenset[str]:
    return frozenset(content_terms(f"{title} {section} {text}"))


@functools.lru_cache(maxsize=64)
def _address_labels(vocabulary: frozenset[str]) -> frozenset[str]:
    """The words inside the passages' email and web addresses: "shieldline" of
    "consumeraffairs@shieldline.example", which the terms keep whole. A company a
    question names is known to pages that give its address, even where no sentence
    of them writes its name."""
    return frozenset(
        stem(label)
        for term in vocabulary
        if "." in term or "@" in term
        for label in _ADDRESS_SEPARATOR.split(term)
        if len(label) > 3 and label.isalpha()
    )


_ADDRESS_SEPARATOR = re.compile(r"[.@/]")


def _passage_terms(p: Passage) -> frozenset[str]:
    """A passage's content terms with its title and heading; parsed once per text,
    since both the scoring and the answerability evidence read them."""
    return _terms_of(p.title, p.section, p.text)


def _question_names(question: str, q_terms: set[str]) -> set[str]:
    """Stems of the names a question gives: capitalised words inside it ("Northwind",
    "Team plan") and identifiers ("LM-7002", "v2.3"), however they are written."""
    names = {t for t in _names(question) if t in q_terms}
    said = content_terms(question)
    return names | {t for t in q_terms & said if _has_digit(t) and not _NUMBER.fullmatch(t)}


def _absent_names(question: str, q_terms: set[str], reading: _Reading) -> set[str]:
    """The question's names that the evidence (``reading``) is not about.

    A name no passage knows, even misspelt, means the question is about another
    product, tenant or plan; so does a row the question names that no retrieved
    table has ("the Team plan" beside a table of Free, Pro and Business).
    """
    asked = _asking(question)
    absent = {t for t in _question_names(asked, q_terms) if not reading.knows(t)}
    rows = _unknown_rows(asked, reading.units_of) - reading.heading_names
    # A year the question asks about ("deadlines for Christmas 2027") that no passage
    # writes is a time the pages do not cover; a number is otherwise a value, known.
    years = {t for t in q_terms & content_terms(asked) if _YEAR.fullmatch(t)}
    return (
        absent
        | (rows - reading.common_names)
        | _unknown_counts(asked, reading.units_of)
        | {y for y in years - reading.vocabulary if not _writes_year(y, reading.units_of)}
    )


def _writes_year(year: str, passage_units: Sequence[Sequence[Unit]]) -> bool:
    """Whether a passage writes the year inside a longer term: "2026" in "2026-27"."""
    return any(year in u.text or year in u.context for found in passage_units for u in found)


_YEAR = re.compile(r"(?:19|20)\d\d")


_SENTENCE = re.compile(r"[^.!?]+(?:[.!?]+|$)")


def _asking(question: str) -> str:
    """The sentences of a question that ask (end in "?"), without the story told
    before them; with none, its last sentence.

    "My Labrador weighs about 32 kg … Is there anything extra to pay because he's a
    big dog?": a pet's, a relative's or a place's name in the story is the asker's,
    not a product the pages must know. On the fifteen fixtures' tuning parts every
    name that refused an answerable question stood in the story (13 of 13), and every
    name that refused an unanswerable one stood in the asking sentence.
    """
    asking = [
        m.group(0).strip()
        for m in _SENTENCE.finditer(question)
        if m.group(0).rstrip().endswith("?")
    ]
    if asking:
        return " ".join(asking)
    # A part cut from a question has lost its "?" ("We paid in April but we're moving
    # to Leeds in September. Do we get any money back, and is anything taken off?"):
    # it asks in its last sentence, after the story. Only a full stop before a capital
    # ends a sentence here, so "8 a.m." or "£2.50" cuts nothing off.
    return _STORY_END.split(question.strip())[-1]


_STORY_END = re.compile(r"(?<=[.!])\s+(?=[A-Z])")


# A row key that is a count of something: "36 months", "12-month", "2 people".
_COUNT_KEY = re.compile(r"^\s*(\d+)[\s-]*([a-z]{3,})\s*$", re.I)
_COUNT_ASKED = re.compile(r"\b(\d+)[\s-]*([a-z]{3,})\b", re.I)


def _unknown_counts(question: str, passage_units: Sequence[Sequence[Unit]]) -> set[str]:
    """The counts the question names a row by ("a 48-month certificate") where a
    retrieved table keys two rows or more by counts of the same thing ("6 months",
    "12 months", "36 months") and none by that one: a row the pages do not have.

    "24-hour" in a question is otherwise a value, no name the pages must know.
    """
    tables: dict[tuple[str, str], set[str]] = {}
    for found in passage_units:
        for u in found:
            m = _COUNT_KEY.match(u.key) if u.kind == "row" else None
            if m:
                tables.setdefault((u.context, stem(m.group(2).lower())), set()).add(m.group(1))
    unknown: set[str] = set()
    for m in _COUNT_ASKED.finditer(question):
        count, thing = m.group(1), stem(m.group(2).lower())
        if any(t == thing and len(n) >= 2 and count not in n for (_, t), n in tables.items()):
            unknown.add(f"{count}-{m.group(2).lower()}")
    return unknown


def _common_names(passages: Sequence[Passage]) -> set[str]:
    """Stems of the names (``_NAME``) that passages of two documents or more write.

    "the Quillpad app" beside a table of apps keyed "iPhone", "Android" and "Mac"
    names the product every page is about, not an app the table lacks.
    """
    documents: dict[str, set[str]] = {}
    for p in passages:
        for w in _NAME.findall(p.text):
            documents.setdefault(stem(w.lower()), set()).add(p.document_id)
    return {name for name, titles in documents.items() if len(titles) >= 2}


# A capitalised word as a name is written anywhere, a title and a sentence's start too.
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+)*\b")


def _titled_names(passages: Sequence[Passage]) -> set[str]:
    """The capitalised words, as written, that passages of two documents or more have
    in a title or text, a sentence's first word included ("Fleetway charges guide",
    "Fleetway is a car club"): ``_common_names`` leaves a sentence's first word out,
    since any word is capitalised there."""
    documents: dict[str, set[str]] = {}
    for p in passages:
        for w in set(_CAPITALISED.findall(f"{p.title} {p.text}")):
            documents.setdefault(w, set()).add(p.document_id)
    return {w for w, found in documents.items() if len(found) >= 2}


def _brands(question: str, titled_names: AbstractSet[str]) -> set[str]:
    """Stems of the question's names that the passages' documents write as a title or
    a sentence's start does (``_titled_names``): the company every page is about, which
    a page's section need not repeat."""
    return {
        stem(w.lower())
        for w in _NAME.findall(question.strip())
        if not question.startswith(w) and w in titled_names
    }


# Where a heading's own words start: "Memberships: Go, Plus and Max", "Plans > Max".
_HEADING_PARTS = re.compile(r"\s*(?:>|:|—|\u2013|\s-\s|\|)\s*")


def _heading_names(passages: Sequence[Passage]) -> set[str]:
    """Stems of the names the retrieved pages' titles and headings give, capitalised
    inside a heading ("Memberships: Go, Plus and Max" names Plus and Max).

    A name a page is titled with is something the pages know, even when the table
    the question seems to point at ("Fleet plans") has no row for it: "my Max plan"
    asks about the Max membership. A heading's first word is capitalised anyway
    ("Team settings") and names nothing.
    """
    found: set[str] = set()
    for p in passages:
        for heading in (p.title, p.section):
            for piece in _HEADING_PARTS.split(heading or ""):
                found |= {stem(w.lower()) for w in _KEY_WORD.findall(piece)[1:] if w[:1].isupper()}
    return found


def _surface_words(text: str) -> list[str]:
    """The question's words as written (case kept), hyphenated words as their parts."""
    return _CASED_WORD.findall(_WORD_HYPHEN.sub(" ", text))


def _unknown_rows(question: str, passage_units: Sequence[Sequence[Unit]]) -> set[str]:
    """Stems of the names the question gives a table's row that no retrieved table has.

    "How much storage does the Team plan include?" names a plan; when the plans
    table's rows are Free, Pro, Business and Enterprise, the pages do not know a
    Team plan, however much they say about storage. A name is the capitalised word
    right before the noun of a table's key column ("Plan", "Add-on"). A table whose
    keys hold that noun themselves ("Participant report") names its rows otherwise,
    and is not read this way.
    """
    keys: dict[str, set[str]] = {}
    own_noun: set[str] = set()
    for found in passage_units:
        for u in found:
            if u.kind != "row" or not u.cells:
                continue
            header = u.cells[0][0].split()
            if not header:
                continue
            noun = header[-1].lower()
            key_words = {w.lower() for w in _KEY_WORD.findall(u.key)}
            if noun in key_words or stem(noun) in {stem(w) for w in key_words}:
                own_noun.add(noun)
            keys.setdefault(noun, set()).update(key_words | {stem(w) for w in key_words})
    unknown: set[str] = set()
    text = question.strip()
    for noun, known in keys.items():
        if noun in own_noun:
            continue
        # Two letters or more: "After I cancel" names no row of a "When you cancel" table.
        pattern = rf"\b([A-Z][\w+]+)\s+(?i:{re.escape(noun)})s?\b"
        for m in re.finditer(pattern, text):
            name = m.group(1)
            # A misspelt key ("Buisness plan") is still that row.
            if m.start() > 0 and not (stem(name.lower()) in known or _known(name.lower(), known)):
                unknown.add(stem(name.lower()))
    return unknown


def _term_weights(terms: set[str], passage_terms: Sequence[frozenset[str]]) -> dict[str, float]:
    """IDF of each question term over the retrieved passages (smoothed, always > 0)."""
    n = len(passage_terms)
    return {t: math.log(1 + (n + 1) / (sum(t in pt for pt in passage_terms) + 1)) for t in terms}


_NAME = re.compile(r"(?<![.?!]\s)(?<!^)\b[A-Z][a-z]+(?:[A-Z][a-z]+)*\b")


# Capitalised, but a date, not a name: "six weeks in March" says when, not what, and
# so does "during the Christmas closure" of a page that gives the closure's dates.
_HOLIDAYS = ("Christmas", "Xmas", "Easter", "Thanksgiving", "Halloween", "Hanukkah", "Diwali")
_CALENDAR = frozenset(n.lower() for n in (*calendar.month_name[1:], *calendar.day_name, *_HOLIDAYS))


def _names(question: str) -> set[str]:
    """Stems of the capitalised words inside a question (not its first word): names.
    A month or a day of the week is no name: it tells when, and the pages need not
    say it."""
    text = question.strip()
    return {
        stem(w.lower())
        for w in _NAME.findall(text)
        # "on Saturdays", "Sundays": the plural of a day tells when, too.
        if not text.startswith(w)
        and w.lower().removesuffix("s") not in _CALENDAR
        and w.lower() not in _CALENDAR
    }


# How an item of a list written as one sentence ends: "…read-only;", "…a bill; or".
_RUNNING_END = re.compile(r"\s*[;,](?:\s*(?:and|or))?\s*$")
_ITEM_END = re.compile(r"(?:[;,]\s*(?:and|or))?\s*[.;,]?\s*$")


def _listed(siblings: Sequence[Unit], lead_in: str, start: int = -1) -> str:
    """A lead-in with its list's items ("Guests cannot: install apps; …"), or "" when
    no item follows it. A list without a lead-in is the run of items from ``start``
    (a position in ``siblings``, every unit of the passage)."""
    if start < 0:
        items = [_unnumbered(u.text) for u in siblings if u.kind == "item" and u.key == lead_in]
    else:
        run = itertools.takewhile(lambda u: u.kind == "item" and not u.key, siblings[start:])
        items = [_unnumbered(u.text) for u in run]
    # Joined by "; ", an item's own closing period would read ".;", and an item that
    # ends the way a sentence running through its list does ("…a utility bill;",
    # "…your doctor; or") would read ";;".
    shown = [_ITEM_END.sub("", i) for i in items[:MAX_LISTED_ITEMS]]
    if not shown:
        return ""
    # An item that ends in a colon leads into the nested items after it ("pick a
    # format: JSON; CSV"): joined by "; " it read "pick a format:; JSON". One that
    # ends in "?" or "!" ("click Forgot password?") ends as it is, too.
    joined = shown[0]
    for before, item in itertools.pairwise(shown):
        joined += f" {item}" if before.endswith((":", "?", "!")) else f"; {item}"
    return f"{lead_in} {joined}".strip()


def _asked_step(selected: list[ScoredUnit], question: str) -> list[ScoredUnit]:
    """For "what is the third step?", the third step alone when it was chosen: its
    neighbours would otherwise turn the answer into the whole list."""
    number = _ordinal(question)
    if number is None:
        return selected
    numbered = [
        (n, s)
        for s in selected
        if s.unit is not None and s.unit.kind == "item" and (n := _item_number(s.unit)) is not None
    ]
    if number == _LAST:
        # The highest-numbered item chosen: scoring raised the list's last one.
        return [max(numbered, key=lambda pair: pair[0])[1]] if numbered else selected
    asked = next((s for n, s in numbered if n == number), None)
    return [asked] if asked is not None else selected


# "Which plans include SSO?": a question that asks which rows of a table say yes.
_WHICH = re.compile(r"^\s*(?:which|what)\b", re.I)
_NEGATED = re.compile(r"n['\u2019]t\b|\b(?:not|no|without|lacks?|excludes?)\b", re.I)
# A row quoted for one column whose cell is a yes or a no mark: "Team — SSO: ✓".
_MARKED_CELL = re.compile(r" — [^;]+:\s*(\S.*?)\s*$")
_YES_MARKS = frozenset({"✓", "✔", "✔️", "✅", "yes", "included"})
# "\u00d7" is the multiplication sign, "\u2013" an en dash: both written for "no".
_NO_MARKS = frozenset(
    {"✗", "✘", "\u00d7", "❌", "—", "\u2013", "-", "no", "not included", "not available"}
)


def _mark(s: ScoredUnit) -> int:
    """+1 a row quoted for one column whose cell says yes, -1 no, 0 anything else."""
    if s.unit is None or s.unit.kind != "row":
        return 0
    found = _MARKED_CELL.search(s.text)
    cell = found.group(1).lower() if found else ""
    return 1 if cell in _YES_MARKS else -1 if cell in _NO_MARKS else 0


def _marked_as_asked(
    selected: list[ScoredUnit],
    scored: Sequence[ScoredUnit],
    question: str,
    kinds: Sequence[AnswerType],
    most: int,
) -> list[ScoredUnit]:
    """For "which plans include SSO?", the rows whose cell says yes (for "which
    plans don't…", no) in place of the rows that say the opposite.

    The rows of a feature table meet such a question alike (the column's name is
    what it asks about), so the first row, "Free — SSO: ✗", came before the rows
    that answer it, and "Which plans don't have an audit log?" was answered with
    the plans that have one. Only a one-part "which"/"what" question, and only
    when a row of the same table says what is asked: otherwise the marks are the
    answer as they stand ("Which plans include SSO?" over a table where none does).
    """
    # ``kinds``: one per part, as the scoring split the question.
    if not _WHICH.match(question) or len(kinds) != 1:
        return selected
    marked = [s for s in selected if _mark(s)]
    if not marked:
        return selected
    want = -1 if _NEGATED.search(question) else 1
    if all(_mark(s) == want for s in marked):
        return selected
    table = marked[0].passage.number
    least = max(s.support for s in marked) * MARKED_ROW_CUTOFF
    fitting = [
        s for s in scored if s.passage.number == table and _mark(s) == want and s.support >= least
    ]
    if not fitting:
        return selected
    kept = [s for s in selected if not _mark(s)]
    room = max(most - len(kept), 1)
    chosen = kept + [s for s in fitting if not any(_same_unit(s, k) for k in kept)][:room]
    return sorted(chosen, key=lambda s: (s.passage.number, s.position))


_HOLDS_KIND = UNIT_FEATURES.index("holds_kind")
# The kinds of answer that are a value a sentence plainly holds or lacks.
_VALUE_KINDS = frozenset(AnswerType) - {
    AnswerType.SETTING,
    AnswerType.NAME,
    AnswerType.YES_NO,
    AnswerType.ANY,
}


def _with_asked_value(
    selected: list[ScoredUnit], scored: Sequence[ScoredUnit], kinds: Sequence[AnswerType]
) -> list[ScoredUnit]:
    """A chosen sentence that lacks the asked kind of value, quoted with the next
    sentence of its paragraph when that one holds it: "How long do I have to send my
    Hub back?" is answered "When your broadband ends, we'll send you a prepaid
    returns bag. Pop the Hub and its power cable inside and take it to any Post
    Office or parcel shop within 30 days.", where the first sentence alone said
    how, never how long. Only the same paragraph's next sentence: it goes on with
    the thought, where a value further away may answer something else. Only for a
    value (``kinds``: each part's asked kind): what a setting or a name "holds" is
    too loose to tell that the next sentence goes on with the answer."""
    out: list[ScoredUnit] = []
    quoted = {(s.passage.number, s.position) for s in selected}
    for s in selected:
        lacking = s.part < len(kinds) and kinds[s.part] in _VALUE_KINDS and _holding(s) < 0
        after = _next_sentence(s, scored) if lacking else None
        if after is not None and (after.passage.number, after.position) not in quoted:
            # A sentence that leans back is already quoted with this one.
            joined = (
                after.text if after.text.startswith(s.text) else f"{_sentence(s.text)} {after.text}"
            )
            s = replace(s, text=joined)
        out.append(s)
    return out


# An identifier a question may give and a heading name: "QP-402", "HS-204", "STR-4001",
# and the app error codes whose number carries a letter: "HB-E804".
_CODE = re.compile(r"\b[A-Z][A-Z0-9]{0,5}-[A-Z]?\d{2,6}\b")


_WORD_OR_CODE = re.compile(r"[\w.]+(?:-[\w.]+)*")


def _code_answered(question: str, best: ScoredUnit | None) -> bool:
    """Whether the question gives an identifier ("TW-409", "QP-402") and its best
    supported unit is keyed by it: a row or a section of that code answers it."""
    codes = set(_CODE.findall(question))
    if not codes or best is None:
        return False
    keyed = f"{best.unit.key if best.unit else ''} {best.passage.section}"
    return all(c in keyed for c in codes)


# The age a customer gives of themselves or someone they ask for: "I'm 17", "my
# 15-year-old", "My mum is 68", "turned 16".
_ASKER_AGE = re.compile(
    r"\b(\d{1,2})[- ]years?[- ]old\b|"
    r"\b(?:I'?m|im|I am|is|turned|turning|just turned)\s+(\d{1,2})\b"
    r"(?![\d:%]|[.,]\d|\s*(?:kg|km|lbs?|days?|weeks?|months?|minutes?|mins?|hours?|hrs?|am|pm|a\.m|"
    r"p\.m|percent|per|x|times|people|cm|m\b))",
    re.I,
)
# How a page states the ages a rule is for: "aged 14 to 17", "Adult (13+)", "65 and
# over", "at least 18 years old", "under 4".
_AGE_SAID = re.compile(
    r"\b(?:aged?|ages|years? old|year-olds?|birthday|adults?|child(?:ren)?|kids?|teens?|"
    r"young people|seniors?)\b",
    re.I,
)
# The ages themselves: a span, a lowest age, a highest one.
_AGE_BOUND = re.compile(
    r"\b\d{1,2}\s*(?:to|-|\u2013|and)\s*\d{1,2}\b|"
    r"\b(?:at least|over|from|aged)\s+\d{1,2}\b|"
    r"\b\d{1,2}(?:\+|\s+(?:and|or)\s+(?:over|older|above))|\b\d{1,2}(?:st|nd|rd|th) birthday|"
    r"\b(?:under|below|younger than)\s+\d{1,2}\b|\b\d{1,2}\s+(?:and|or)\s+(?:under|younger)",
    re.I,
)


def _states_ages(text: str) -> bool:
    """Whether ``text`` states which ages a rule is for: "aged 14 to 17", "Adult (13+)",
    "at least 18 years old", "Children under 14". For a question that gives an age
    such a rule answers, whether it takes the asker in (the 15-year-old travels with a
    consent form) or leaves them out (a 17-year-old is too young to ride)."""
    return _AGE_SAID.search(text) is not None and _AGE_BOUND.search(text) is not None


def _form_stated(question: str, leading: ScoredUnit | None) -> bool:
    """Whether the question asks what a reference looks like ("What does a booking
    reference look like?") and the unit the answer leads with states the form of
    that reference ("Your booking reference … is 8 characters long, starts with QF").

    Such a unit answers however little else of the question it repeats: the
    answerability model weighs support, and a form has few words in common with
    its question.
    """
    reference = formatted(question)
    return reference is not None and leading is not None and _states_form(leading.text, reference)


def _states_form(text: str, reference: str) -> bool:
    """Whether ``text`` states the form of ``reference`` ("booking number"): a form
    ("8 characters", "starts with GX") and the reference's own words, so a password
    rule or a licence number's "last 4 digits" is not one."""
    return holds(text, AnswerType.FORMAT) and content_terms(reference) <= content_terms(text)


def _unasked(heading: str, asked: set[str]) -> str:
    """The heading without the words the question says itself: "1099 threshold
    reminder" holds no new number for a question about the 1099-NEC."""
    kept = [
        w
        for w in _WORD_OR_CODE.findall(heading)
        if w.lower() not in asked and not any(w.lower() in a.split("-") for a in asked)
    ]
    return " ".join(kept)


def _with_heading(
    chosen: list[ScoredUnit], kinds: Sequence[AnswerType], question: str
) -> list[ScoredUnit]:
    """A quote whose passage's own heading says what the question asks, led by it.

    Release notes put the version and date in the heading ("4.2 — 12 March 2026")
    and error-code pages the code and its meaning ("`QP-402` — Storage limit
    reached"); the sentences under them say neither. "When was dark mode added?"
    was answered "Added dark mode to the web app.", and "I get QP-402 … What's
    wrong?" with the fix but not the fault. A sentence or item that lacks the asked
    kind of value the heading holds, or the identifier the question gives that the
    heading names, is quoted after its heading ("4.2 — 12 March 2026: Added dark
    mode to the web app."): the passage's own words, which the grounding checks
    read with its text. Once per passage; never a heading that is a question (an
    FAQ's, which the quote answers), nor a row (its header cells say what it is)."""
    codes = set(_CODE.findall(question))
    asked = {w.lower() for w in _WORD_OR_CODE.findall(question)}
    led: set[int] = set()
    out: list[ScoredUnit] = []
    for s in chosen:
        kind = kinds[s.part] if s.part < len(kinds) else AnswerType.ANY
        if s.unit is not None and s.unit.kind != "row" and s.passage.number not in led:
            heading = _heading_saying(s, kind, codes, asked)
            if heading:
                led.add(s.passage.number)
                s = replace(s, text=f"{heading}: {s.text}")
        out.append(s)
    return out


def _heading_saying(s: ScoredUnit, kind: AnswerType, codes: set[str], asked: set[str]) -> str:
    """The nearest heading over ``s`` that says what the question asks and ``s`` does
    not, or "". Nearest first: a changelog puts the date on the version's heading and
    the change under "Added" ("5.3.0 — November 18, 2025 > Added")."""
    for raw in reversed((s.passage.section or "").split(" > ")):
        heading = plain(raw).strip()
        if (
            heading
            and not heading.endswith("?")
            and heading.lower() not in s.text.lower()
            and (
                (
                    kind in _VALUE_KINDS
                    and not holds(s.text, kind)
                    and holds(_unasked(heading, asked), kind)
                )
                or any(c in heading and c not in s.text for c in codes)
            )
        ):
            return heading
    return ""


def _next_sentence(s: ScoredUnit, scored: Sequence[ScoredUnit]) -> ScoredUnit | None:
    """The sentence after sentence ``s`` in its paragraph, when it holds the part's
    asked kind of value; else None."""
    if s.unit is None or s.unit.kind != "sentence":
        return None
    after = next(
        (
            n
            for n in scored
            if n.part == s.part
            and n.passage.number == s.passage.number
            and n.position == s.position + 1
        ),
        None,
    )
    if after is None or after.unit is None or after.unit.kind != "sentence":
        return None
    if _holding(after) <= 0 or not _one_paragraph(s.passage.text, s.unit.text, after.unit.text):
        return None
    return after


def _holding(s: ScoredUnit) -> float:
    """+1 the unit holds the part's asked kind of value, -1 it lacks it, 0 none asked."""
    return s.features[_HOLDS_KIND] if len(s.features) > _HOLDS_KIND else 0.0


def _one_paragraph(passage: str, first: str, second: str) -> bool:
    """Whether two sentences stand in one paragraph of the passage, one after the other."""
    together = f"{first} {second}"
    return any(
        together in " ".join(plain(paragraph).split()) for paragraph in _PARAGRAPHS.split(passage)
    )


_PARAGRAPHS = re.compile(r"\n\s*\n")


def _without_repeats(chosen: list[ScoredUnit]) -> list[ScoredUnit]:
    """Each thing said once. A unit whose words an earlier quote of the same passage
    already holds is left out, and a unit quoted with a lead-in that was already
    said is quoted alone: "Before you start, save a card. [2] Before you start, save
    a card. 1. Plug the cable in first. [2]" said the lead-in twice, and its "1."
    read as a value."""
    out: list[ScoredUnit] = []
    for s in chosen:
        said = [o.text for o in out if o.passage.number == s.passage.number]
        unit = s.unit
        if (
            unit is not None
            and unit.key
            and unit.kind in ("item", "code", "sentence")
            and s.text.startswith(unit.key)
            and any(unit.key in t for t in said)
        ):
            s = replace(s, text=_unnumbered(unit.text) if unit.kind == "item" else unit.text)
        if any(s.text.rstrip(". ") in t for t in said):
            continue
        out.append(s)
    return out


def _unnumbered(item: str) -> str:
    """An item without its list number: joined into a sentence, "5." would read as a value."""
    return _ITEM_NUMBER.sub("", item)


def _ordinal(question: str) -> int | None:
    """The step a question asks for by its number ("the third step", "step 3")."""
    m = _ORDINAL.search(question)
    if m is None:
        return None
    word = (m.group(1) or m.group(2) or m.group(3)).lower()
    if word in ("last", "final"):
        return _LAST
    return _ORDINALS.get(word) or (int(word) if word.isdigit() else None)


def _last_items(passage: Passage, found: Sequence[Unit]) -> set[tuple[int, int]]:
    """The last numbered item of each list in the passage, as (passage, position)."""
    last: dict[str, tuple[int, int]] = {}
    for u in found:
        number = _item_number(u) if u.kind == "item" else None
        if number is not None and number >= last.get(u.context, (0, 0))[0]:
            last[u.context] = (number, u.position)
    return {(passage.number, position) for _, position in last.values()}


def _item_number(unit: Unit) -> int | None:
    head = unit.text.split(" ", 1)[0]
    return int(head[:-1]) if head[:-1].isdigit() and head[-1:] in ".)" else None


_SHORT_AMOUNT = re.compile(r"\d+(?:\.\d+)?(?:k|m|bn)")
# A number as a customer writes one: "98.5" (per cent), "3rd" (of the month), "11pm",
# "24-hour" (a number of something: the pages say "24 hours"), or a measure typed as one
# word ("75lbs", "32kg", "10gb", "2hrs"; "my lab is like 75lbs" was refused: the pages
# "do not cover 75lbs"). A value the question gives, like a whole number, not an
# identifier ("v2", "LM-7002").
_NUMBER = re.compile(
    r"\d+(?:\.\d+)?(?:st|nd|rd|th|am|pm|lbs?|kgs?|gb|mb|kb|tb|kms?|mi|cm|mm|ml|hrs?|mins?"
    r"|secs?|-[a-z]+)?"
)


def _known(term: str, vocabulary: AbstractSet[str]) -> bool:
    """The term, or a spelling one or two edits away, is in some retrieved passage."""
    if term in vocabulary or _NUMBER.fullmatch(term) or _SHORT_AMOUNT.fullmatch(term):
        # A number is a value the question asks about or gives ("our uptime came in
        # at 98.5%"), not a name the pages must know; "100k" and "1.5m" are numbers
        # written short ("$100,000").
        return True
    if len(term) < 4 or _has_digit(term):
        # An identifier one character off ("LM-7002" for "LM-6001") is another
        # identifier, not a misspelling.
        return False
    budget = 1 if len(term) < 7 else 2
    # Levenshtein, as the answerability model was fitted with (swaps count two edits).
    return any(
        abs(len(v) - len(term)) <= budget
        and spelling.edit_distance(term, v, budget, swaps=False) is not None
        for v in vocabulary
    )


def _says_same(a: str, b: str) -> bool:
    """Two units that give the same value ("6379", "NW-1190") or mostly the same words."""
    values_a = {w for w in words(a) if _has_digit(w)}
    values_b = {w for w in words(b) if _has_digit(w)}
    if values_a & values_b:
        return True
    ta, tb = content_terms(a), content_terms(b)
    if not (ta and tb):
        return False
    # A shorter copy of the same fact ("Travel cot — Free" beside "A travel cot with
    # bedding is free on request") says nothing the other does not. Neither gives a
    # value (a shared one returned above): "Travel cot — €10" is another answer.
    short, long_ = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
    if len(short) >= 2 and short <= long_ and not (values_a or values_b):
        return True
    return len(ta & tb) / len(ta | tb) >= 0.5


def _near_duplicate(a: str, b: str) -> bool:
    wa, wb = set(words(a)), set(words(b))
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) > 0.8


def _word_pieces(text: str, size: int) -> list[str]:
    """``text`` in pieces of ``size`` words that join back to exactly it (0: whole)."""
    if size <= 0:
        return [text]
    parts = text.split(" ")
    return [(" " if i else "") + " ".join(parts[i : i + size]) for i in range(0, len(parts), size)]
