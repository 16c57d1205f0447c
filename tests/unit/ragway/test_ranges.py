"""Tiers of a table read from their keys, and the question's own values placed in them."""

from __future__ import annotations

import math

from ragway.ranges import Quantity, Range, bounds, excludes, quantities, within

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


def test_notice_tiers_are_read_as_terms_write_them() -> None:
    # A cancellation clause's tiers: "between ... and", "or more", "or fewer", and a
    # tier whose two ends write two units of time.
    assert bounds("Between 24 and 48 hours before") == Range(24.0, 48.0, unit="hour")
    assert bounds("57 days or more") == Range(low=57.0, unit="day")
    assert bounds("14 days or fewer, or if you do not arrive at all") == Range(
        high=14.0, unit="day"
    )
    assert bounds("5 working days or less") == Range(high=5.0, unit="day")
    assert bounds("less than 7 days but at least 24 hours before departure") == Range(
        24.0, 168.0, high_strict=True, unit="h"
    )
    # Two units that are no spans of time still state no tier.
    assert bounds("from 2 kg to 500 seats") is None


def test_a_span_of_time_falls_in_a_tier_written_in_another_unit() -> None:
    tiers = (
        "(a) 7 days or more before departure",
        "(b) less than 7 days but at least 24 hours before departure",
        "(c) less than 24 hours before departure",
    )
    # Spelled, as a customer writes it, and in hours or weeks.
    assert [t for t in tiers if within(t, "that's five days away")] == [tiers[1]]
    assert [t for t in tiers if within(t, "we sail in 3 hours")] == [tiers[2]]
    assert [t for t in tiers if within(t, "the crossing is in two weeks")] == [tiers[0]]
    assert within("Less than 24 hours before", "I cancel 3 hours before")
    assert not within("Less than 24 hours before", "two days before")
    assert within("29 to 56 days", "our holiday starts in about 40 days")
    # A number of no unit of time is in no tier of time.
    assert not within("29 to 56 days", "we are 40 people")


def test_a_bound_the_question_states_is_no_value_of_its_own() -> None:
    # "with less than 24 hours' notice" names the first tier by its words; read as the
    # value 24 it fell in the second ("less than 48 hours").
    question = "What's the fee for cancelling a consultation with less than 24 hours' notice?"
    assert not within("an operation cancelled with less than 48 hours' notice", question)
    assert not within("Less than 24 hours before", question)
    assert within("Less than 48 hours before", "I'm cancelling 30 hours before")


def test_a_key_that_is_one_span_of_time_is_that_span_in_any_unit() -> None:
    # Lesson prices by length: "a 1hr lesson" is the row "1 hour", not "2 hours".
    question = "how much is a 1hr automatic lesson??"
    assert within("1 hour", question)
    assert not within("2 hours", question)
    assert excludes("2 hours", question)
    assert excludes("1.5 hours", question)
    assert within("90 minutes", "a 1.5 hour session")
    # A key with more than the span, or a question with no span of time, says nothing.
    assert not within("1 hour free parking", question)
    assert not excludes("2 hours", "how much is an automatic lesson?")
    assert not excludes("Webinars 1,000", question)


def test_a_tier_the_value_falls_outside_of_is_excluded() -> None:
    question = "If she cancels about 30 hours before, what will she be charged?"
    assert not excludes("Between 24 and 48 hours before", question)
    assert excludes("48 hours or more before", question)
    assert excludes("Less than 24 hours before", question)
    # Values in another unit leave the tier alone.
    assert not excludes("1 to 20 seats", question)
