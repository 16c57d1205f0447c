"""Tiers of a table read from their keys, and the question's own values placed in them."""

from __future__ import annotations

import math

from ragway.ranges import Quantity, Range, bounds, quantities, within

CREDITS = (
    "Below 99.95% but at least 99.0%",
    "Below 99.0% but at least 95.0%",
    "Below 95.0%",
)


def test_a_value_of_the_question_falls_in_one_tier() -> None:
    question = "We're on Scale and our monthly uptime came in at 98.5%. What credit do we get?"
    assert [k for k in CREDITS if within(k, question)] == ["Below 99.0% but at least 95.0%"]
    # A bound's own number: "at least 95.0%" holds it, "below 95.0%" does not.
    assert [k for k in CREDITS if within(k, "uptime was 95.0%")] == [CREDITS[1]]
    assert [k for k in CREDITS if within(k, "uptime was 99.95%")] == []


def test_ranges_are_read_in_the_ways_tables_write_them() -> None:
    assert bounds("2\u20135 kg") == Range(2.0, 5.0, unit="kg")
    assert bounds("Up to 2 kg") == Range(high=2.0, unit="kg")
    assert bounds("Over 10,000 emails") == Range(low=10_000.0, low_strict=True, unit="email")
    assert bounds("11+ seats") == Range(low=11.0, unit="seat")
    assert bounds("1 to 10") == Range(1.0, 10.0)
    # A name, or a value that is no range, states no tier.
    assert bounds("Pro") is None
    assert bounds("Webinars 1,000") is None
    assert bounds("10\u20132 GB") is None  # backwards: no range
    assert Range().low == -math.inf


def test_a_value_in_another_unit_is_in_no_tier() -> None:
    # "A 12-month agreement" says how long, not how many seats.
    assert not within("1 to 20 seats", "What's the exit fee on a 12-month agreement?")
    assert within("1 to 20 seats", "We have 12 seats")
    assert not within("Up to 2 kg", "Is a parcel of 2 lb fine?")
    assert quantities("a $1,200 order, 98.5% and 3 kg") == [
        Quantity(1200.0, "$"),
        Quantity(98.5, "%"),
        Quantity(3.0, "kg"),
    ]
