"""Does a shadow answer say what the served answer said?

Overlapping sources are not enough: a candidate can retrieve the same passages
and still answer wrongly (another number, a dropped "not", a different
document cited, a refusal where the baseline answered). A pair agrees only when
every one of these holds:

- both refused, or both answered;
- both cite the same documents (chunk ids may differ between builds, documents
  are the unit of evidence);
- the same numbers appear in both answers (a changed number is a wrong answer);
- the same negations appear in both (a dropped or added "not" flips meaning);
- the answers' content terms overlap (F1 of stemmed terms) at least
  ``min_overlap``, with the citation markers removed (their numbering may differ).
"""

from __future__ import annotations

import functools
import re
from collections import Counter, OrderedDict
from dataclasses import dataclass

from ragway.citations import MARKER as _MARKER
from ragway.text import STOPWORDS, stem, words
from services.gateway.runs.models import RunRecord

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
# The report is re-judged after every finished run over the same pairs: a pair's
# verdict is kept (keyed by what it reads, so a record that changed is judged anew),
# and stems too. Bounded, oldest out first.
_KEPT_PAIRS = 20_000
_verdicts: OrderedDict[tuple[object, ...], Agreement] = OrderedDict()
_stem = functools.lru_cache(maxsize=50_000)(stem)
_NEGATIONS = frozenset({"not", "no", "never", "none", "cannot", "nothing", "neither", "nor"})


@dataclass(frozen=True, slots=True)
class Agreement:
    agrees: bool
    reason: str  # "" when the pair agrees, else the first check that failed
    overlap: float | None  # term F1 of the two answers; None when either refused


def _numbers(text: str) -> Counter[str]:
    return Counter(n.replace(",", "") for n in _NUMBER.findall(text))


def _negations(text: str) -> Counter[str]:
    lowered = text.lower().replace("n't", " not")
    return Counter(w for w in words(lowered) if w in _NEGATIONS)


def _terms(text: str) -> Counter[str]:
    return Counter(_stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 1)


def term_f1(a: str, b: str) -> float:
    ta, tb = _terms(_MARKER.sub(" ", a)), _terms(_MARKER.sub(" ", b))
    if not ta and not tb:
        return 1.0
    common = sum((ta & tb).values())
    if not common:
        return 0.0
    precision, recall = common / sum(tb.values()), common / sum(ta.values())
    return 2 * precision * recall / (precision + recall)


def _reads(record: RunRecord) -> tuple[object, ...]:
    docs = tuple(sorted({c.document_id for c in record.citations}))
    return record.id, bool(record.refused), record.answer, docs


def compare(served: RunRecord, shadow: RunRecord, min_overlap: float) -> Agreement:
    key = (min_overlap, *(_reads(r) for r in (served, shadow)))
    found = _verdicts.get(key)
    if found is None:
        found = _verdicts[key] = _compare(served, shadow, min_overlap)
        if len(_verdicts) > _KEPT_PAIRS:
            _verdicts.popitem(last=False)
    return found


def _compare(served: RunRecord, shadow: RunRecord, min_overlap: float) -> Agreement:
    if bool(served.refused) != bool(shadow.refused):
        return Agreement(False, "refusal_changed", None)
    if served.refused:
        return Agreement(True, "", None)
    a, b = _MARKER.sub(" ", served.answer or ""), _MARKER.sub(" ", shadow.answer or "")
    overlap = round(term_f1(a, b), 4)
    if {c.document_id for c in served.citations} != {c.document_id for c in shadow.citations}:
        return Agreement(False, "cited_documents_changed", overlap)
    if _numbers(a) != _numbers(b):
        return Agreement(False, "numbers_changed", overlap)
    if _negations(a) != _negations(b):
        return Agreement(False, "negation_changed", overlap)
    if overlap < min_overlap:
        return Agreement(False, "answer_changed", overlap)
    return Agreement(True, "", overlap)
