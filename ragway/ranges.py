"""Which row of a tiered table a number in the question falls in.

Help centres key tables by ranges: SLA credits by "Below 99.0% but at least 95.0%",
shipping by "2 to 5 kg", prices by "Over 10,000 emails". A customer gives a value of their
own ("our uptime came in at 98.5%", "a 3 kg parcel"), which no row's key writes, so the
row that answers shares no term with the question. ``within`` reads a key's bounds and
says whether a value of the question lies inside them, in the same unit.

Notice periods are the commonest such tiers, and they mix units and spell numbers: "less
than 7 days but at least 24 hours before departure" holds "that's five days away". Spans
of time are compared in hours, whatever unit each side writes.
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
_OR_MORE = re.compile(
    rf"{_NUMBER}(?:\s?[A-Za-z]+){{0,2}}\s*(?:\+|or more|and (?:over|above|up))", re.IGNORECASE
)
# "Between 24 and 48 hours before": "and" joins a range only after "between".
_BETWEEN_AND = re.compile(
    rf"\bbetween\s+[{_CURRENCY}]?{_NUMBER}(?:\s?[A-Za-z%]+)?\s+and\s+[{_CURRENCY}]?{_NUMBER}",
    re.IGNORECASE,
)
# "14 days or fewer": the bound after its number.
_OR_LESS = re.compile(
    rf"{_NUMBER}(?:\s?[A-Za-z]+){{0,2}}\s+or\s+(fewer|less|under)\b", re.IGNORECASE
)
# Words between a number and its unit that say which kind of day: "5 working days".
_UNIT_ADJECTIVES = frozenset({"working", "business", "calendar", "clear", "full", "whole"})
# A span of time in hours, by its unit's stem: "7 days" and "24 hours" compare.
_HOURS = {
    "min": 1 / 60,
    "mins": 1 / 60,
    "minut": 1 / 60,
    "hr": 1.0,
    "hrs": 1.0,
    "hour": 1.0,
    "day": 24.0,
    "night": 24.0,
    "week": 168.0,
    "wk": 168.0,
    "wks": 168.0,
    "fortnight": 336.0,
    "month": 730.5,
    "year": 8766.0,
    "yr": 8766.0,
    "yrs": 8766.0,
}
_TIME = "h"
# A customer spells small numbers ("five days away", "a twelve-month plan"); a page's
# tier writes digits.
_NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
    "eighteen", "nineteen", "twenty",
)  # fmt: skip
_SPELLED = {w: str(n) for n, w in enumerate(_NUMBER_WORDS)} | {
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "sixty": "60",
    "ninety": "90",
}
_SPELLED_NUMBER = re.compile(
    rf"\b({'|'.join(_SPELLED)})(?=[\s-]+(?:{'|'.join(sorted(_UNIT_ADJECTIVES))}\s+)?[a-z])",
    re.IGNORECASE,
)
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

    def comparable(self, q: Quantity) -> bool:
        """Whether ``q`` is in a unit this range can hold."""
        return q.unit == self.unit or (
            q.unit in _HOURS and (self.unit == _TIME or self.unit in _HOURS)
        )

    def holds(self, q: Quantity) -> bool:
        # In the key's unit only: "a 12-month agreement" is in no row of "1 to 20 seats".
        # A span of time in any unit of time ("five days" in "at least 24 hours").
        low, high, value = self.low, self.high, q.value
        if q.unit in _HOURS and (self.unit == _TIME or self.unit in _HOURS):
            value *= _HOURS[q.unit]
            scale = _HOURS.get(self.unit, 1.0)
            low, high = low * scale, high * scale
        elif q.unit != self.unit:
            return False
        above = value > low if self.low_strict else value >= low
        below = value < high if self.high_strict else value <= high
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
    return tuple(q for _, q in _placed(text))


def _placed(text: str) -> list[tuple[int, Quantity]]:
    """The quantities of a text, each with where its number starts."""
    out: list[tuple[int, Quantity]] = []
    for m in _QUANTITY.finditer(text):
        currency, number, percent, word = m.groups()
        unit = currency or percent or ""
        if not unit and word and word.lower() in _UNIT_ADJECTIVES:
            # "5 working days": the unit is the word after the kind of day.
            after = re.match(r"\s+([A-Za-z]+)", text[m.end() :])
            word = after.group(1) if after else ""
        if not unit and word and word.lower() not in STOPWORDS:
            unit = stem(word.lower())
        out.append((m.start(2), Quantity(_float(number), unit)))
    return out


@functools.lru_cache(maxsize=4096)
def bounds(key: str) -> Range | None:
    """The range a row key states, or None when it states none (a plain name or value)."""
    placed = dict(_placed(key))
    units = {q.unit for q in placed.values()} - {""}
    # "1 to 10 seats": the unit written once, after the range, is the unit of both ends.
    # Spans of time may each write their own ("less than 7 days but at least 24 hours").
    timed = len(units) > 1 and units <= _HOURS.keys()
    if len(units) > 1 and not timed:
        return None
    unit = _TIME if timed else (units.pop() if units else "")

    def value(m: re.Match[str], group: int) -> float:
        number = _float(m.group(group))
        if timed:
            own = placed.get(m.start(group))
            ends = [q.unit for at, q in placed.items() if at > m.start(group) and q.unit]
            # A bare end takes the unit written after it ("7 to 13 days").
            written = own.unit if own and own.unit else (ends[0] if ends else "")
            return number * _HOURS.get(written, math.nan)
        return number

    low, high = -math.inf, math.inf
    low_strict = high_strict = False
    if m := _BETWEEN.search(key) or _BETWEEN_AND.search(key):
        low, high = value(m, 1), value(m, 2)
        if not low <= high:
            return None
    if m := _LOWER.search(key):
        low, low_strict = value(m, 2), m.group(1).lower() in _STRICT
    elif m := _OR_MORE.search(key):
        low = value(m, 1)
    if m := _UPPER.search(key):
        high, high_strict = value(m, 2), m.group(1).lower() in _STRICT
    elif m := _OR_LESS.search(key):
        high, high_strict = value(m, 1), m.group(2).lower() == "under"
    if (low == -math.inf and high == math.inf) or math.isnan(low) or math.isnan(high):
        return None
    return Range(low, high, low_strict, high_strict, unit)


def within(key: str, question: str) -> bool:
    """Whether a value the question gives lies in the range the key states, or is the
    span of time a key states alone ("1 hour" is "a 1hr lesson")."""
    found = _tier(key)
    return found is not None and any(found.holds(q) for q in _values_of(question))


def excludes(key: str, question: str) -> bool:
    """Whether the key states a range or a span that the question gives values in the
    unit of, none of them in it: the row "2 hours" is not "a 1hr lesson"."""
    found = _tier(key)
    if found is None:
        return False
    given = [q for q in _values_of(question) if found.comparable(q)]
    return bool(given) and not any(found.holds(q) for q in given)


def _tier(key: str) -> Range | None:
    """The range a key states, or the one span of time it is."""
    return bounds(key) or _span(key)


_SPAN_ALONE = re.compile(rf"^\s*{_NUMBER}[\s-]?([A-Za-z]+)\s*$")


@functools.lru_cache(maxsize=4096)
def _span(key: str) -> Range | None:
    """A key that is one span of time and nothing else ("1 hour", "90 minutes")."""
    m = _SPAN_ALONE.match(key)
    if m is None or (unit := stem(m.group(2).lower())) not in _HOURS:
        return None
    value = _float(m.group(1))
    return Range(value, value, unit=unit)


# Asked of every keyed unit of every passage for one question: read it once.
@functools.lru_cache(maxsize=1024)
def _values_of(question: str) -> tuple[Quantity, ...]:
    """The values a question gives: its numbers, spelled ones as digits, less the bounds
    it states itself."""
    question = _SPELLED_NUMBER.sub(lambda m: _SPELLED[m.group(1).lower()], question)
    # A bound the question states ("with less than 24 hours' notice") names a tier by
    # its words, as a key term does; only a value of its own falls in one ("five days
    # away"). Read as a value, 24 was in "less than 48 hours" and not in "less than 24".
    for bound in (_LOWER, _UPPER, _OR_MORE, _OR_LESS, _BETWEEN_AND):
        question = bound.sub(" ", question)
    return _quantities(question)
