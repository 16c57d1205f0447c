"""Words a customer uses for what the pages call otherwise (ragway/synonyms.py)."""

from __future__ import annotations

from ragway import synonyms
from ragway.text import stem


def test_a_word_has_the_stems_of_its_synonyms_and_not_its_own() -> None:
    assert synonyms.of(stem("bin")) == {stem("trash"), stem("recycle")}
    assert stem("delete") in synonyms.of(stem("wiped"))
    assert stem("wiped") not in synonyms.of(stem("wiped"))
    # "drone rules ferry" on a ferry line's pages, which say "ships" and "vessels".
    assert stem("ships") in synonyms.of(stem("ferry"))
    # "call recording retention period" on a page that says "How long we keep records".
    assert stem("keep") in synonyms.of(stem("retention"))
    # An hours table's "Sat: 7 am to 11 am" holds "on Saturdays".
    assert stem("sat") in synonyms.of(stem("saturdays"))
    assert stem("thurs") in synonyms.of(stem("thursday"))
    # "min/max password length" on a page that says "12 to 32 characters long".
    assert stem("long") in synonyms.of(stem("length"))
    # "bank bounced my payment whats ur fee" on a page that says "If a payment is
    # returned by your bank"; a card issuer's "dishonoured payment" in either spelling.
    assert {stem("returned"), stem("dishonoured"), stem("dishonored")} <= synonyms.of(
        stem("bounced")
    )


def test_words_that_tell_features_apart_are_no_synonyms() -> None:
    # A question about the one the pages lack must still be refused.
    assert stem("download") not in synonyms.of(stem("upload"))
    assert synonyms.of(stem("tier")) == frozenset()
    assert synonyms.of(stem("fee")) == frozenset()
