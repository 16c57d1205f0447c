"""Which row of a tiered table a number in the question falls in.

Help centres key tables by ranges: SLA credits by "Below 99.0% but at least 95.0%",
shipping by "2 to 5 kg", prices by "Over 10,000 emails". A customer gives a value of their
own ("our uptime came in at 98.5%", "a 3 kg parcel"), which no row's key writes, so the
row that answers shares no term with the question. ``within`` reads a key's bounds and
says whether a value of the question lies inside them, in the same unit.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

from ragway.text import STOPWORDS, stem

_NUMBER = r"(\d[\d,]*(?:\.\d+)?)"
_CURRENCY = "$£€"
# A value with its unit: "$1,200", "98.5%", "3 kg", "12-month".
_QUANTITY = re.compile(rf"([{_CURRENCY}])?\s?{_NUMBER}(?:\s?(%)|\+?[\s-]?([A-Za-z]+))?")
_LOWER = re.compile(
    rf"\b(at least|from|over|above|more than|greater than|min(?:imum)?)\s+[{_CURRENCY}]?{_NUMBER}",
    re.IGNORECASE,
)
_UPPER = re.compile(
    rf"\b(below|under|less than|fewer than|up to|at most|max(?:imum)?)\s+[{_CURRENCY}]?{_NUMBER}",
    re.IGNORECASE,
)
_BETWEEN = re.compile(
    rf"[{_CURRENCY}]?{_NUMBER}\s*[^\s\d\w]?\s*(?:\u2013|\u2014|-|to)\s*[{_CURRENCY}]?{_NUMBER}",
    re.IGNORECASE,
)
_OR_MORE = re.compile(rf"{_NUMBER}\s*(?:\+|or more|and (?:over|above|up))", re.IGNORECASE)
# Bounds that leave their number out: "below 95" is under 95, "at least 95" is not.
_STRICT = frozenset(
    {"over", "above", "more than", "greater than", "below", "under", "less than", "fewer than"}
)


@dataclass(frozen=True, slots=True)
class Quantity:
    value: float
    unit: str  # "%", a currency sign, a unit word's stem ("kg", "month"), or ""


@dataclass(frozen=True, slots=True)
class Range:
    low: float = -math.inf
    high: float = math.inf
    low_strict: bool = False
    high_strict: bool = False
    unit: str = ""

    def holds(self, q: Quantity) -> bool:
        # In the key's unit only: "a 12-month agreement" is in no row of "1 to 20 seats".
        if q.unit != self.unit:
            return False
        above = q.value > self.low if self.low_strict else q.value >= self.low
        below = q.value < self.high if self.high_strict else q.value <= self.high
        return above and below


def _float(text: str) -> float:
    return float(text.replace(",", ""))


def quantities(text: str) -> list[Quantity]:
    """The numbers of a text with their units ("98.5%" is 98.5 in "%")."""
    return list(_quantities(text))


# The generator asks of every table row of every passage whether the question's value
# is in its tier: the question and the row keys are read once each, not once a pair.
@functools.lru_cache(maxsize=4096)
def _quantities(text: str) -> tuple[Quantity, ...]:
    out: list[Quantity] = []
    for m in _QUANTITY.finditer(text):
        currency, number, percent, word = m.groups()
        unit = currency or percent or ""
        if not unit and word and word.lower() not in STOPWORDS:
            unit = stem(word.lower())
        out.append(Quantity(_float(number), unit))
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def bounds(key: str) -> Range | None:
    """The range a row key states, or None when it states none (a plain name or value)."""
    low, high = -math.inf, math.inf
    low_strict = high_strict = False
    if m := _BETWEEN.search(key):
        low, high = _float(m.group(1)), _float(m.group(2))
        if low > high:
            return None
    if m := _LOWER.search(key):
        low, low_strict = _float(m.group(2)), m.group(1).lower() in _STRICT
    elif m := _OR_MORE.search(key):
        low = _float(m.group(1))
    if m := _UPPER.search(key):
        high, high_strict = _float(m.group(2)), m.group(1).lower() in _STRICT
    if low == -math.inf and high == math.inf:
        return None
    # "1 to 10 seats": the unit written once, after the range, is the unit of both ends.
    units = {q.unit for q in _quantities(key)} - {""}
    if len(units) > 1:
        return None
    return Range(low, high, low_strict, high_strict, units.pop() if units else "")


def within(key: str, question: str) -> bool:
    """Whether a value the question gives lies in the range the key states."""
    found = bounds(key)
    return found is not None and any(found.holds(q) for q in _quantities(question))
