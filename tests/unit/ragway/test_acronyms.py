"""Acronyms spelt out from the passages' own words, only where the model agrees."""

from __future__ import annotations

from collections.abc import Sequence

from ragway.acronyms import (
    MIN_SIMILARITY,
    Similarity,
    _written_names,
    abbreviate,
    expand,
    same_idea,
)

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


PRICES = (
    "| Membership | NSW & ACT | VIC | QLD | WA | SA, TAS & NT | New Zealand¹ |\n"
    "| Plus | $36.90 | $35.90 | $33.90 | $33.90 | $32.90 | NZ$39.90 |",
    "AND and NOT narrow a search. The API is on every plan.",
)


def test_a_name_the_passages_only_abbreviate_is_written_as_they_do() -> None:
    # A word the passages' capitals start, and a phrase they are the initials of.
    assert abbreviate("How much is Plus per fortnight in Victoria?", PRICES) == (
        "How much is Plus per fortnight in VIC?"
    )
    assert abbreviate("What does Plus cost in New South Wales?", PRICES) == (
        "What does Plus cost in NSW?"
    )
    assert abbreviate("Is it cheaper in Western Australia?", PRICES) == ("Is it cheaper in WA?")
    # A contraction (first and last letters kept, some between): before, "Queensland"
    # was a name no passage knows, and "What is the clearance called in Queensland?" was
    # refused beside a table whose row is "QLD".
    assert abbreviate("What about Queensland?", PRICES) == "What about QLD?"


def test_names_the_passages_write_or_do_not_abbreviate_stay() -> None:
    # "New Zealand" is written out on the page; "Queenstown" ends in no D (QLD), and
    # "Quilted" holds no L between its first and last letters in that order ("QTD").
    assert abbreviate("Is Plus cheaper in New Zealand?", PRICES) == (
        "Is Plus cheaper in New Zealand?"
    )
    assert abbreviate("What about Queenstown?", PRICES) == "What about Queenstown?"
    assert abbreviate("Is Quilted in it?", ("QTD and QLD",)) == "Is Quilted in it?"
    # A function word in capitals abbreviates nothing ("Android" is not "AND").
    assert abbreviate("Does the Android app work?", PRICES) == "Does the Android app work?"
    # Short words are not read as abbreviated: "Vice" is no "VIC".
    assert abbreviate("Is the Vice plan on sale?", PRICES) == "Is the Vice plan on sale?"
    assert abbreviate("Is Plus in Victoria?", ("No capitals here.",)) == "Is Plus in Victoria?"


def test_a_name_for_the_same_sign_in_idea_is_written_as_the_passages_write_it() -> None:
    # "2FA" is no run of initials of "two-step verification": before, it was a name
    # the knowledge base does not cover, and the question was refused for it.
    page = ["Admins can require two-step verification for everyone in the workspace."]
    assert same_idea("Can admins force 2FA for everyone?", page) == (
        "Can admins force two-step verification for everyone?"
    )
    assert same_idea(
        "How do I turn on 2-step verification?", ["Turn on two-factor authentication."]
    ) == ("How do I turn on two-factor authentication?")
    # Written by the passages, or none of the names written: left as it is.
    assert same_idea("Is 2FA required?", ["Turn on 2FA under Security."]) == "Is 2FA required?"
    assert same_idea("Is 2FA required?", ["Codes have 6 digits."]) == "Is 2FA required?"


def test_a_language_is_named_as_the_passages_name_it_in_english_or_its_own() -> None:
    # Before, "French" was a name no passage knows, and the question was refused.
    lines = ["Customer service — 1-888-555-0120", "Service en français — 1-888-555-0150"]
    assert same_idea("What number do I call for service in French?", lines) == (
        "What number do I call for service in français?"
    )
    # Joined to the word it qualifies by a hyphen, still the name.
    assert same_idea("When is the French-language line open?", ["Téléphone (français)"]) == (
        "When is the français-language line open?"
    )
    assert same_idea("Is there help en español?", ["Spanish: 9am to 5pm"]) == (
        "Is there help en Spanish?"
    )
    # Inside another word it is no name: "Frenchay" stays.
    assert same_idea("Is Frenchay covered?", lines) == "Is Frenchay covered?"


def test_the_names_the_passages_write_are_found_whatever_their_case_or_letters() -> None:
    assert same_idea("Can admins force 2FA?", ["Turn on TWO-STEP VERIFICATION."]) == (
        "Can admins force two-step verification?"
    )
    # Beyond ASCII: the long s (U+017F) is an s to a case-insensitive match, and the text's
    # other characters change nothing.
    assert same_idea("Can admins force 2FA?", ["Turn on two-\u017ftep verification — now."]) == (
        "Can admins force two-step verification?"
    )
    # A name the passages write is not replaced; none written: nothing is.
    assert same_idea("Is 2FA on?", ["2FA and two-step verification"]) == "Is 2FA on?"
    assert same_idea("Is 2FA on?", ["Single sign-on — SSO."]) == "Is 2FA on?"
    (written, present), *_ = _written_names(("Use 2-step verification (MFA).",))
    assert written == "2-step verification"
    assert present == {"2-step verification", "2-step", "MFA"}


def test_a_card_network_and_a_phone_by_the_names_customers_use() -> None:
    # Before: "Amex" and "iPhone" were names the knowledge base does not cover, and
    # "Amex card surcharge" and "videos I've downloaded on my iPhone" were refused.
    terms = ["2.2 Card payments carry a surcharge of 3.5% for American Express."]
    assert same_idea("Amex card surcharge", terms) == "American Express card surcharge"
    steps = ["Offline downloads need iOS 16 or later."]
    assert same_idea("downloads on my iPhone", steps) == "downloads on my iOS"
    # Pages that write the customer's name keep the question as it is.
    assert same_idea("downloads on my iPhone", ["On an iPhone, tap Downloads."]) == (
        "downloads on my iPhone"
    )
