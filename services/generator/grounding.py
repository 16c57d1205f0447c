"""Output checks that every answer passes, whichever backend wrote it.

A sentence is *grounded* when it cites at least one passage of the context as
``[n]`` and every number in it appears in a passage that the sentence itself
cites (title, section or text). Citations of passages that were not in the
context are removed from the sentence and reported. Numbers are compared after
normalisation ("1,000" = "1000", "2.50" = "2.5"); spelled-out numbers ("three")
are not checked.

LLM backends check each sentence as it completes, before streaming it
(``SentenceSplitter`` finds sentence ends in a token stream); the servicer passes
every final answer through ``review_final`` as a last line of defence.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ragway.citations import MARKER as CITATION
from ragway.citations import cited, escape_literals
from ragway.text import content_terms
from services.generator.backends.base import Degradation, Final, Passage

log = logging.getLogger(__name__)

_SPACE_BEFORE_CITATION = re.compile(r"[ \t]+(?=[.!?,;:]|$)")
# A list item's marker ("1.", "-") is layout, not a number the answer states.
_ENUMERATOR = re.compile(r"(?:\d{1,3}|[a-zA-Z])[.)]")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
# A sentence ends at a terminator (with closing quotes and any citations that
# follow it) or at a line break, once the next sentence has begun: a citation
# may still be on its way, so "…euros. " is not an end until a non-"[" arrives.
_END = re.compile(
    r"(?:[.!?]+[\"')]*(?:[ \t]*\[\s*\d+(?:\s*,\s*\d+)*\s*\])*(?=\s+[^\s\[])"
    r"|[ \t]*\n(?=\s*[^\s\[]))"
)

# The passage numbers cited in a text, in order of first citation (ragway/citations.py).
citations = cited


def numbers(text: str) -> set[str]:
    """Numbers in ``text`` outside citation markers, normalised for comparison."""
    result: set[str] = set()
    for raw in _NUMBER.findall(CITATION.sub(" ", text)):
        parts = [raw.replace(",", "")] if _THOUSANDS.fullmatch(raw) else raw.split(",")
        result.update(_normalise(p) for p in parts if p)
    return result


def _normalise(number: str) -> str:
    if re.fullmatch(r"\d+\.\d+", number):
        whole, frac = number.split(".")
        frac = frac.rstrip("0")
        number = f"{whole}.{frac}" if frac else whole
    head, dot, tail = number.partition(".")
    return (head.lstrip("0") or "0") + dot + tail


@dataclass(frozen=True, slots=True)
class SentenceCheck:
    text: str  # the sentence with unknown citations removed
    cited: list[int]  # known passages it cites
    unknown: list[int] = field(default_factory=list)  # cited numbers not in the context
    unsupported: list[str] = field(default_factory=list)  # numbers in no cited passage

    @property
    def grounded(self) -> bool:
        return bool(self.cited) and not self.unsupported


def check_sentence(sentence: str, passages: Mapping[int, Passage]) -> SentenceCheck:
    cited_all = citations(sentence)
    known = [n for n in cited_all if n in passages]
    unknown = [n for n in cited_all if n not in passages]
    text = _drop_citations(sentence, set(unknown)) if unknown else sentence.strip()
    evidence: set[str] = set()
    for n in known:
        p = passages[n]
        # A page's "[5, 25, 50]" holds numbers, not citations: escaped, it keeps them.
        evidence |= numbers(escape_literals(f"{p.title}\n{p.section}\n{p.text}"))
    unsupported = sorted(numbers(_LIST_MARK.sub("", text)) - evidence)
    return SentenceCheck(text=text, cited=known, unknown=unknown, unsupported=unsupported)


def attribute(
    sentence: str, passages: Mapping[int, Passage], min_coverage: float, min_terms: int = 3
) -> tuple[int, float] | None:
    """The passage that contains most of an uncited sentence's content terms, if enough.

    Small models often copy a passage's sentence without citing it. A sentence
    with at least ``min_terms`` content terms (stemmed, function words left out)
    of which a share of ``min_coverage`` or more appear in one passage (title,
    section or text) is attributed to that passage; the number check then
    applies as if the model had cited it.
    """
    terms = content_terms(CITATION.sub(" ", sentence))
    if len(terms) < min_terms:
        return None
    best: tuple[int, float] | None = None
    for n in sorted(passages):
        p = passages[n]
        coverage = len(terms & content_terms(f"{p.title} {p.section} {p.text}")) / len(terms)
        if coverage >= min_coverage and (best is None or coverage > best[1]):
            best = (n, coverage)
    return best


def _drop_citations(sentence: str, unknown: set[int]) -> str:
    def keep_known(m: re.Match[str]) -> str:
        kept = [n.strip() for n in m.group(1).split(",") if int(n) not in unknown]
        return f"[{', '.join(kept)}]" if kept else ""

    text = CITATION.sub(keep_known, sentence)
    return _SPACE_BEFORE_CITATION.sub("", re.sub(r"[ \t]{2,}", " ", text)).strip()


def check_answer(answer: str, passages: Mapping[int, Passage]) -> list[SentenceCheck]:
    """Checks of a whole answer, sentence by sentence.

    A sentence without a citation is checked together with the next one: a
    passage sentence copied whole may contain a sentence end ("… to 5. then …").
    """
    splitter = SentenceSplitter()
    sentences = splitter.feed(answer)
    rest = splitter.flush()
    if rest:
        sentences.append(rest)
    units: list[str] = []
    pending = ""
    for sentence in sentences:
        pending = f"{pending} {sentence}" if pending else sentence
        if citations(sentence):
            units.append(pending)
            pending = ""
    if pending:
        units.append(pending)
    return [check_sentence(u, passages) for u in units]


def review_final(final: Final, passages: Mapping[int, Passage], *, run_id: str = "") -> Final:
    """The final answer as the caller gets it, whichever backend wrote it.

    A citation of a passage that was not in the context is dropped from
    ``cited_passages``; it and any number found in no passage its sentence
    cites are added to ``degraded`` (codes ``unknown_citation`` and
    ``unsupported_number``). The answer text itself is left as it is.
    """
    cited = [n for n in final.cited_passages if n in passages]
    degraded = list(final.degraded)
    unknown = [n for n in final.cited_passages if n not in passages]
    unsupported: set[str] = set()
    for check in check_answer(final.answer, passages):
        unknown.extend(n for n in check.unknown if n not in unknown)
        unsupported.update(check.unsupported)
    if unknown:
        log.warning("dropped unknown citations", extra={"run_id": run_id, "numbers": unknown})
        degraded.append(
            Degradation(
                "unknown_citation",
                f"citation(s) {', '.join(f'[{n}]' for n in unknown)} are not passages "
                "of the context: dropped",
            )
        )
    if unsupported:
        log.warning(
            "answer has unsupported numbers", extra={"run_id": run_id, "numbers": unsupported}
        )
        degraded.append(
            Degradation(
                "unsupported_number",
                f"number(s) {', '.join(sorted(unsupported))} of the final answer appear "
                "in no passage its sentence cites",
            )
        )
    return replace(final, cited_passages=cited, degraded=degraded)


class SentenceSplitter:
    """Cuts a stream of text pieces into sentences as soon as each one is complete."""

    def __init__(self) -> None:
        self._buffer = ""

    def feed(self, text: str) -> list[str]:
        self._buffer += text
        sentences: list[str] = []
        start = 0
        while True:
            m = _END.search(self._buffer, start)
            if m is None:
                return sentences
            sentence = self._buffer[: m.end()].strip()
            if _ENUMERATOR.fullmatch(sentence):  # "1." opens a list item: read on
                start = m.end()
                continue
            self._buffer = self._buffer[m.end() :].lstrip()
            start = 0
            if sentence:
                sentences.append(sentence)

    def flush(self) -> str:
        """What is left when the stream ends: the last sentence, possibly unfinished."""
        rest, self._buffer = self._buffer.strip(), ""
        return rest
