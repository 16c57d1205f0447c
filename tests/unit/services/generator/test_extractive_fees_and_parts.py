"""Fees charged in cents, a country named by its code, and one row asked twice.

Written the way help centres write them: a fee table whose rows are payment
methods ("Cards, Apple Pay and Google Pay (US cards)") with a note under it, and
a pet-travel table whose one row says both whether and how much.
"""

from __future__ import annotations

from ragway.units import Unit
from services.generator.backends.base import Passage
from services.generator.backends.extractive import _pointer, content_terms, question_terms
from tests.unit.services.generator.test_extractive import GEN, answer_of

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


BIKES = Passage(
    1,
    "bikes#what",
    "bikes",
    "Taking a bike on the train",
    "What you can and can't bring",
    "**Allowed:**\n\n"
    "- standard bikes, including e-bikes whose motor cuts out at 25 km/h,\n"
    "- folding bikes, folded, with wheels of 20 inches or less, which don't count as a bike"
    " space,\n"
    "- children's bikes and balance bikes.\n\n"
    "**Not allowed on trains or in stations:**\n\n"
    "- tandems, tricycles, recumbents and cargo bikes,\n"
    "- bikes with trailers attached (a folded trailer can travel as luggage),\n"
    "- e-scooters, hoverboards, e-unicycles and electric skateboards, even when folded or"
    " switched off,\n  because of the risk of battery fires.\n\n"
    "> **Warning:** Staff will refuse travel to anyone carrying an e-scooter. Mobility scooters"
    " are different; see Passenger assistance.\n",
)
BIKES_INTRO = Passage(
    2,
    "bikes#intro",
    "bikes",
    "Taking a bike on the train",
    "",
    "Bikes travel free on our trains, but space is limited and, on the Coast Line in summer,\n"
    "you'll need a reservation. Folding bikes are welcome on any train as long as they're folded\n"
    "before you board. Please let people off the train first and keep your bike with you.",
)


def test_e_bike_is_one_thing_however_it_is_written() -> None:
    assert "ebik" in content_terms("standard bikes, including e-bikes")
    assert question_terms("can i bring my e bike") == question_terms("can I bring my ebike")
    # Split at the hyphen, an e-scooter was a "scooter" and an "e"; now it is no bike.
    assert content_terms("e-scooters") == {"escoot"}
    # "Plan E" is a plan named by a letter (a term with its noun), no e-prefix.
    assert content_terms("Plan E costs more") == {"plan", "plan_e", "cost"}


def test_asked_about_an_e_bike_the_line_that_allows_e_bikes_answers() -> None:
    # Before: the "Not allowed" items, which say "bikes" as often, were quoted first.
    final = answer_of("can i bring my e bike on the train or nah", [BIKES, BIKES_INTRO])
    assert final.answer.startswith("Allowed: standard bikes, including e-bikes"), final.answer


DELAYED = Passage(
    1,
    "status#delayed",
    "status",
    "Live running and service status",
    "If you're delayed",
    "Keep your ticket. You can claim **Delay Repay** if you arrive 15 minutes or more late. See\n"
    "[Delay Repay compensation](https://www.example.com/help/delay-repay).",
)
CLAIMS = Passage(
    2,
    "delay-repay#claim",
    "delay-repay",
    "Delay Repay compensation",
    "How do I make a claim?",
    "1. Go to the Delay Repay page or open **Delay Repay** in the app.\n"
    "2. Enter the date, the train and your ticket.\n\n"
    "How long it takes: we aim to pay within 10 working days.",
)


def test_a_sentence_that_only_names_another_page_is_never_quoted() -> None:
    # Before: "See Delay Repay compensation." was quoted beside the answer: it says
    # the question's words (the page's title) and nothing else.
    final = answer_of("How do I claim Delay Repay?", [DELAYED, CLAIMS])
    assert "See Delay Repay compensation" not in final.answer, final.answer
    assert _pointer(Unit("sentence", 0, "For details, see Fees and charges."))
    # A sentence that says where something is answers "where", and stays a candidate.
    assert not _pointer(Unit("sentence", 0, "See your invoices under Billing → Invoices."))
    assert not _pointer(Unit("sentence", 0, "See your invoices under Billing."))


CLAIM_LIMITS = Passage(
    1,
    "delay-repay#claim",
    "delay-repay",
    "Delay Repay compensation",
    "How do I make a claim?",
    "1. Open **Delay Repay** in the app.\n"
    "2. Enter the date, the train and your ticket.\n"
    "3. Choose how you'd like to be paid.\n\n"
    "- **How long it takes:** we aim to pay within 10 working days.\n"
    "- **Time limit:** 28 days after the day you travelled.\n",
)


def test_how_long_do_i_have_to_asks_for_the_time_limit() -> None:
    # Before: "How long it takes: we aim to pay within 10 working days" (a duration
    # too, but of the payment) came first, and the time limit was left out.
    question = "How long do I have to claim by hand if Auto Delay Repay does not cover me?"
    assert GEN.score(question, [CLAIM_LIMITS])[0].text.startswith("Time limit:")
    final = answer_of(question, [CLAIM_LIMITS])
    assert "Time limit: 28 days after the day you travelled" in final.answer, final.answer


ASSIST = Passage(
    1,
    "assist#booking",
    "assist",
    "Passenger assistance",
    "Booking ahead or turning up",
    "| | |\n| --- | --- |\n"
    "| Phone (free) | 0808 157 0134 |\n"
    "| Book at least | 2 hours before your train |\n"
    "| Turn up and go | Any staffed station, no booking needed |\n\n"
    "If you book ahead, we'll meet you at the entrance or the ticket office at the time you agree.",
)
ASSIST_FAQ = Passage(
    2,
    "assist#faq",
    "assist",
    "Passenger assistance",
    "Common questions",
    "What if the help I booked doesn't turn up?\n\n"
    "Call Passenger Assist on the number above at any time. If booked assistance fails, we'll\n"
    "refund the full cost of your journey.",
)


def test_how_much_notice_asks_how_long_before() -> None:
    # Before: refused, "notice" counted as a word the pages lack and "how much" asked
    # for any quantity; the page says "Book at least 2 hours before your train".
    assert "notic" not in question_terms("How much notice do I need to give?")
    final = answer_of(
        "How much notice do I need to give when booking Passenger Assist?", [ASSIST, ASSIST_FAQ]
    )
    assert "2 hours before your train" in final.answer, final.answer
