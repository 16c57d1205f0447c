"""Acronyms spelt out from the passages' own words, only where the model agrees."""

from __future__ import annotations

from collections.abc import Sequence

from ragway.acronyms import MIN_SIMILARITY, Similarity, expand

PAGES = (
    "Single sign-on is available on the Scale plan. All plans include an export.",
    "Turn on multi-factor authentication for every admin. Add custom headers to webhooks.",
)


def close_to(*expansions: str) -> Similarity:
    """A similarity that reads only the given spellings as close to any acronym."""

    def similarity(_acronym: str, candidates: Sequence[str]) -> list[float]:
        return [0.9 if c in expansions else MIN_SIMILARITY / 2 for c in candidates]

    return similarity


def test_an_acronym_no_passage_writes_is_spelt_as_the_passages_spell_it() -> None:
    similarity = close_to("single sign on", "multi factor authentication")
    assert expand("Is SSO on the Team plan?", PAGES, similarity) == (
        "Is single sign on on the Team plan?"
    )
    assert expand("Do admins need MFA?", PAGES, similarity) == (
        "Do admins need multi factor authentication?"
    )
    # A plural acronym keeps its plural.
    assert expand("How do I set up SSOs?", PAGES, similarity) == (
        "How do I set up single sign ons?"
    )


def test_chance_runs_of_initials_and_far_spellings_are_not_expansions() -> None:
    seen: list[str] = []

    def similarity(_acronym: str, candidates: Sequence[str]) -> list[float]:
        seen.extend(candidates)
        return [0.0 for _ in candidates]

    # "all plans include" spells API but starts with a function word: never a candidate.
    assert expand("Which API limits apply?", PAGES, similarity) == "Which API limits apply?"
    assert "all plans include" not in seen
    # "add custom headers" spells ACH, but the model reads it far from the acronym.
    assert expand("What's the ACH cutoff?", PAGES, similarity) == "What's the ACH cutoff?"
    assert "add custom headers" in seen


def test_an_acronym_the_passages_write_or_cannot_spell_stays() -> None:
    pages = ("Export your data over the API.",)
    similarity = close_to("export your data")
    assert expand("Is the API rate limited?", pages, similarity) == "Is the API rate limited?"
    assert expand("Is SAML supported?", PAGES, close_to()) == "Is SAML supported?"
    assert expand("no acronyms here", PAGES, close_to()) == "no acronyms here"


def test_a_question_typed_in_capitals_is_not_read_as_acronyms() -> None:
    pages = ("The limit is 50 invoices. Invoice settings are under Billing.",)
    anything = close_to("invoice settings", "the limit")
    assert expand("WHAT IS THE LIMIT", pages, anything) == "WHAT IS THE LIMIT"
    # A capitalised function word is never an acronym.
    assert expand("Where IS the invoice list?", pages, anything) == "Where IS the invoice list?"
