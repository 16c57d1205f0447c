"""Fees charged in cents, a country named by its code, and one row asked twice.

Written the way help centres write them: a fee table whose rows are payment
methods ("Cards, Apple Pay and Google Pay (US cards)") with a note under it, and
a pet-travel table whose one row says both whether and how much.
"""

from __future__ import annotations

from services.generator.backends.base import Passage
from tests.unit.services.generator.test_extractive import answer_of

FEES = Passage(
    1,
    "payments#fees",
    "payments",
    "Getting paid online",
    "Processing fees",
    "| Payment method | Provider fee | Platform fee |\n"
    "|---|---|---|\n"
    "| Cards, Apple Pay and Google Pay (US cards) | 2.9% + 30¢ | None on paid plans, 1% on Free |\n"
    "| International cards | an extra 1.5% | None on paid plans, 1% on Free |\n"
    "| ACH bank transfer | 0.8%, capped at $5 | None |\n"
    "| PayPal | 3.49% + 49¢ | None on paid plans, 1% on Free |\n\n"
    "Fees are set by the providers and can change. The figures above are their\n"
    "standard US rates; your own agreement with a provider may differ.",
)
SURCHARGE = Passage(
    2,
    "payments#surcharge",
    "payments",
    "Getting paid online",
    "Passing the fee on",
    "You can add a card surcharge so your client covers the processing fee. Turn on\n"
    "**Client pays card fee** under **Settings → Payments**.",
)
PETS = Passage(
    1,
    "pets#options",
    "pets",
    "Travelling with pets",
    "Options and prices",
    "| Option | Routes | Price each way | Pets per booking option | Good to know |\n"
    "|---|---|---|---|---|\n"
    "| Stay in your vehicle | Holyhead to Dublin, Fishguard to Rosslare | £20 | No limit |"
    " Leave a window slightly open; you can't visit during the crossing |\n"
    "| Kennel on deck | Liverpool to Dublin, Plymouth to Roscoff | £35 |"
    " Up to 2 pets from the same household | Kennels are indoors and heated |\n"
    "| Pet-friendly cabin | Liverpool to Dublin, Cork to Roscoff | £45 supplement on top of the"
    " cabin price | Up to 2 dogs | Only 6 per sailing; book early |\n"
    "| Assistance dog | All routes | Free | — | Tell us when booking |\n\n"
    "Pets can stay in vehicles only on crossings of 4 hours 30 minutes or less. On longer\n"
    "crossings they must use a kennel or a pet-friendly cabin.",
)


def test_a_fee_in_cents_is_an_amount_and_us_names_the_country_row() -> None:
    # Before: "The figures above are their standard US rates; …", a note without a
    # fee. "US" was read as the pronoun "us", so the question named no row and every
    # row counted as another one, and "30¢" was no amount.
    final = answer_of("What's the processing fee for a US card?", [FEES, SURCHARGE])
    assert final.answer.startswith(
        "Cards, Apple Pay and Google Pay (US cards) — Provider fee: 2.9% + 30¢"
    ), final.answer
    # The row of another country's cards is not the asked one.
    assert "International cards" not in final.answer, final.answer


def test_one_row_that_answers_two_parts_is_quoted_with_the_cells_of_both() -> None:
    # Before, the row was quoted for the first part without its price, and the
    # second part ("how much is that?") went to another row.
    final = answer_of(
        "Can my dog stay in the car on the Holyhead to Dublin crossing, and how much is that?",
        [PETS],
    )
    assert "Stay in your vehicle — " in final.answer
    assert "Price each way: £20" in final.answer, final.answer
    assert final.answer.count("Stay in your vehicle") == 1, final.answer
