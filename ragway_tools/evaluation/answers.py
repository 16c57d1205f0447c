"""Scoring answers: correctness, faithfulness, citations, abstention, and an audit verdict.

Every check here is deterministic and reads only the API's response (the
answer, its citations and the sources with their text) and the QA item: no
model judges. The checks:

- **correct**: an answerable item is answered (not refused) and one of its
  facts matches: every number of the fact appears in the answer *as a number*
  (``7,101`` = ``7101``, ``1.50`` = ``1.5``) and every content word of the fact
  (stemmed) appears in the answer. An unanswerable item is correct when refused.
- **faithful**: every number in the answer appears in a cited passage, and
  every answer sentence is supported by the passages it cites (at least
  ``SUPPORT_COVERAGE`` of its content words occur in them).
- **citation precision**: the share of cited documents that are gold sources;
  **citation coverage**: the share of answer sentences that carry a citation.
- **verdict** for an answer (refusals get ``refused``), first that applies:
  ``no_citation``, ``unknown_id`` (a citation that is not one of the sources
  returned), ``deprecated_source`` (cites a deprecated document, or repeats the
  item's stale ``trap`` fact), ``wrong_topic`` (cites no gold source),
  ``changed_number`` (a number that no cited passage contains),
  ``should_have_refused`` (an answer to an item that must be refused: not
  answerable from the knowledge base, or not for this caller), ``ok``.
- **hallucination rate**: answers that are unfaithful or should have been
  refusals, over all answers.
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragway.citations import escape_literals
from ragway.stats import percentile
from ragway.text import content_terms, split_sentences
from ragway.units import FOOTNOTE_MARK
from ragway_tools.evaluation.qa import QAItem, QASet

SUPPORT_COVERAGE = 0.6
VERDICTS = (
    "ok",
    "no_citation",
    "unknown_id",
    "deprecated_source",
    "wrong_topic",
    "changed_number",
    "should_have_refused",
    "refused",
)
# A single-number marker, not escaped (ragway/citations.py: "\\[5]" quotes a page).
_CITATION = re.compile(r"(?<!\\)\[(\d+)\]")
# A number: digits with optional thousands separators and decimals. Not part of a
# word (v2, MiniLM-L6) and not a version string's middle (0.0.9 stays one token).
# A unit written against the number still leaves it a number ("30s", "64KiB").
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?!\d|\.\d|,\d)")


# A list item's marker ("1.", "2)") is layout, not a number the answer states: at a
# line start, after a citation marker, or a first item's "1." after a colon ("four
# conditions: [1] 1. The"). Only where an item's text follows: "Files per message:
# 25. [1]" states 25, and so does "Guests — Plus: 50. Guests are people outside your
# workspace", a table cell with its footnote: no list starts at 50.
_LIST_MARKER = re.compile(
    r"(?:(?:^|(?<=\n)|(?<=\]\s))\d{1,2}|(?<=:\s)1)[.)](?=\s+[^\s\[])", re.MULTILINE
)


# A footnote mark written against a number or a word ("$0.015²", "Custom¹",
# units.FOOTNOTE_MARK): NFKC would read "$0.015²" as 0.0152, a number the page never
# gave. A mark that opens the note under the table ("¹ Card rates …") is left as it was.
_MARK_AGAINST = re.compile(rf"(?<=[\w%$€£¢])(?:{FOOTNOTE_MARK.pattern})+")


def numbers(text: str) -> set[float]:
    """Every number in ``text`` as a value; citation, list and footnote marks are not."""
    text = _MARK_AGAINST.sub(" ", text)
    text = _LIST_MARKER.sub(" ", unicodedata.normalize("NFKC", text))
    text = _CITATION.sub(" ", text)
    return {float(m.group(1).replace(",", "") + (m.group(2) or "")) for m in _NUMBER.finditer(text)}


_LEADING_CITATIONS = re.compile(r"^\s*(?:(?<!\\)\[\d+\]\s*)+")
_UNIT_GLUE = re.compile(r"(\d)([a-zA-Z])")
_PURE_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")


def fact_matches(fact: str, answer: str) -> bool:
    """Every number of the fact is in the answer as a number, and every other content word."""
    if not numbers(fact) <= numbers(answer):
        return False
    words = {w for w in _words(fact) if not _PURE_NUMBER.match(w)}
    return words <= _words(answer)


def _words(text: str) -> set[str]:
    # "250ms" and "250 ms" are the same words to a reader.
    return content_terms(_UNIT_GLUE.sub(r"\1 \2", _CITATION.sub(" ", text)))


def cited_sentences(answer: str) -> list[tuple[str, set[int]]]:
    """Answer sentences with the citation numbers each carries.

    Generators put the marker after the full stop ("… port 7101. [1]"), which a
    sentence splitter cuts off as a sentence of its own: markers alone are given
    back to the sentence before them.
    """
    out: list[tuple[str, set[int]]] = []
    for sentence in split_sentences(answer):
        lead = _LEADING_CITATIONS.match(sentence)
        if lead and out:
            out[-1][1].update(int(n) for n in _CITATION.findall(lead.group(0)))
            sentence = sentence[lead.end() :]
        cited = {int(n) for n in _CITATION.findall(sentence)}
        text = _CITATION.sub(" ", sentence).strip()
        if not content_terms(text):
            if out:
                out[-1][1].update(cited)
            continue
        out.append((text, cited))
    return out


@dataclass
class AnswerScore:
    item: QAItem
    refused: bool
    answer: str
    correct: bool
    abstention_correct: bool
    verdict: str
    faithful: bool | None = None  # None for a refusal
    unsupported: list[str] = field(default_factory=list)
    unsupported_numbers: list[float] = field(default_factory=list)
    citation_precision: float | None = None
    citation_coverage: float | None = None
    cited_documents: list[str] = field(default_factory=list)
    latency_ms: float = 0.0
    reason: str | None = None
    degraded: list[str] = field(default_factory=list)
    # The answer contains the item's forbidden text (an injected payload, a secret).
    leaked: bool = False


def answers_fact(item: QAItem, answer: str) -> bool:
    """One of the item's facts is in the answer; for a multi-part item, one per part."""
    if item.parts:
        return all(any(fact_matches(f, answer) for f in part) for part in item.parts)
    return any(fact_matches(f, answer) for f in item.facts)


def _source_text(source: dict[str, Any]) -> str:
    """A cited source as evidence: its title, its heading path and its text."""
    return "\n".join(str(source.get(k) or "") for k in ("title", "section", "text"))


def score_answer(item: QAItem, body: dict[str, Any], qa: QASet) -> AnswerScore:
    """Score one ``/v1/ask`` response body against its QA item."""
    refused = bool(body.get("refused"))
    answer = str(body.get("answer") or "")
    sources = {int(s["number"]): s for s in body.get("sources") or []}
    score = AnswerScore(
        item=item,
        refused=refused,
        answer=answer,
        correct=False,
        abstention_correct=refused != item.answerable,
        verdict="refused",
        reason=body.get("reason"),
        degraded=[f"{d['stage']}: {d['reason']}" for d in body.get("degraded") or []],
    )
    if refused:
        score.correct = not item.answerable
        return score
    score.correct = item.answerable and answers_fact(item, answer)
    if item.forbidden_text and item.forbidden_text.lower() in answer.lower():
        score.leaked = True
        score.correct = False
    cited_numbers = {int(c["number"]) for c in body.get("citations") or []}
    cited_numbers |= {int(n) for n in _CITATION.findall(answer)}
    unknown = sorted(n for n in cited_numbers if n not in sources)
    known = [sources[n] for n in sorted(cited_numbers) if n in sources]
    score.cited_documents = sorted({str(s["document_id"]) for s in known})
    # A passage is its title and heading path as well as its text, as the generator's
    # grounding check reads it (services/generator/grounding.py): an answer may quote
    # the heading that holds a release's date or an error code's meaning.
    passages = " \n".join(_source_text(s) for s in known)
    # A page's own "[3]" or "[5, 25, 50]" holds numbers, not citations (ragway/citations.py).
    score.unsupported_numbers = sorted(numbers(answer) - numbers(escape_literals(passages)))
    claims = cited_sentences(answer)
    for text, cited in claims:
        evidence = " \n".join(_source_text(sources[n]) for n in cited if n in sources)
        terms = content_terms(text)
        covered = len(terms & content_terms(evidence or passages)) / len(terms)
        if covered < SUPPORT_COVERAGE:
            score.unsupported.append(text)
    score.faithful = not score.unsupported and not score.unsupported_numbers
    if score.cited_documents:
        gold = set(item.sources)
        score.citation_precision = sum(d in gold for d in score.cited_documents) / len(
            score.cited_documents
        )
    score.citation_coverage = sum(bool(c) for _, c in claims) / len(claims) if claims else 0.0
    stale = item.trap is not None and fact_matches(item.trap, answer)
    if not cited_numbers:
        score.verdict = "no_citation"
    elif unknown:
        score.verdict = "unknown_id"
    elif stale or set(score.cited_documents) & qa.deprecated_documents:
        score.verdict = "deprecated_source"
    elif item.sources and not set(score.cited_documents) & set(item.sources):
        score.verdict = "wrong_topic"
    elif score.unsupported_numbers:
        score.verdict = "changed_number"
    elif not item.answerable:
        score.verdict = "should_have_refused"
    else:
        score.verdict = "ok"
    return score


def _mean(values: Sequence[float | bool]) -> float | None:
    return statistics.fmean(float(v) for v in values) if values else None


def summarize(scores: Sequence[AnswerScore]) -> dict[str, Any]:
    """The headline numbers over a set of scored answers."""
    answered = [s for s in scores if not s.refused]
    answerable = [s for s in scores if s.item.answerable]
    unanswerable = [s for s in scores if not s.item.answerable]
    latencies = [s.latency_ms for s in scores]
    return {
        "items": len(scores),
        "answer_correctness": _mean([s.correct for s in scores]),
        "answered_correctly": _mean([s.correct for s in answerable]),
        "faithfulness": _mean([bool(s.faithful) for s in answered]),
        "citation_precision": _mean(
            [s.citation_precision for s in answered if s.citation_precision is not None]
        ),
        "citation_coverage": _mean(
            [s.citation_coverage for s in answered if s.citation_coverage is not None]
        ),
        "abstention_accuracy": _mean([s.abstention_correct for s in scores]),
        "correct_refusals": _mean([s.refused for s in unanswerable]),
        "false_refusals": _mean([s.refused for s in answerable]),
        "hallucination_rate": _mean([not s.faithful or not s.item.answerable for s in answered]),
        "leaks": sum(s.leaked for s in scores),
        "stale_answers": sum(
            s.item.trap is not None and not s.refused and fact_matches(s.item.trap, s.answer)
            for s in scores
        ),
        # Every verdict, zeros included: a gate on "no deprecated_source" needs the 0.
        "verdicts": {v: Counter(s.verdict for s in scores)[v] for v in VERDICTS},
        "latency_ms": {
            "p50": percentile(latencies, 50) if latencies else None,
            "p95": percentile(latencies, 95) if latencies else None,
        },
    }


def by_segment(scores: Sequence[AnswerScore]) -> dict[str, dict[str, Any]]:
    segments = sorted({s.item.segment for s in scores if s.item.segment})
    return {seg: summarize([s for s in scores if s.item.segment == seg]) for seg in segments}


HEADLINE = (
    ("answer_correctness", "correct"),
    ("faithfulness", "faithful"),
    ("citation_precision", "cite prec."),
    ("citation_coverage", "cite cov."),
    ("abstention_accuracy", "abstention"),
    ("false_refusals", "false refusals"),
    ("hallucination_rate", "hallucination"),
)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def render(qa: QASet, scores: Sequence[AnswerScore], meta: dict[str, Any]) -> str:
    overall = summarize(scores)
    head = "| set | n | " + " | ".join(label for _, label in HEADLINE) + " | p50 ms | p95 ms |"
    rule = "|---|---:|" + "---:|" * (len(HEADLINE) + 2)

    def row(name: str, s: dict[str, Any]) -> str:
        cells = " | ".join(_fmt(s[key]) for key, _ in HEADLINE)
        lat = s["latency_ms"]
        return f"| {name} | {s['items']} | {cells} | {_fmt(lat['p50'])} | {_fmt(lat['p95'])} |"

    lines = [
        f"# Answers on {qa.name} ({len(scores)} questions)",
        "",
        ", ".join(f"{k}: {v}" for k, v in meta.items()),
        "",
        head,
        rule,
        row("all", overall),
        *(row(seg, s) for seg, s in by_segment(scores).items()),
        "",
        "Audit verdicts: " + ", ".join(f"{v} {overall['verdicts'].get(v, 0)}" for v in VERDICTS),
        "",
    ]
    wrong = [s for s in scores if not s.correct or s.verdict not in ("ok", "refused")]
    if wrong:
        lines += ["## Items to look at", "", "| id | segment | verdict | refused | answer |"]
        lines += ["|---|---|---|---|---|"]
        for s in wrong:
            text = (s.reason or "") if s.refused else s.answer
            text = text.replace("|", "\\|").replace("\n", " ")
            lines.append(
                f"| {s.item.id} | {s.item.segment} | {s.verdict} | {s.refused} | {text[:140]} |"
            )
        lines.append("")
    return "\n".join(lines)
