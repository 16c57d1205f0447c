"""Question analysis: parts of a multi-part question and the kind of value each asks for."""

from __future__ import annotations

import pytest

from ragway.question import (
    AnswerType,
    answer_type,
    asked,
    asks_bound,
    counted,
    formatted,
    holds,
    parts,
    states_bound,
)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How long are deleted files kept?", AnswerType.DURATION),
        ("how many days of message history on free", AnswerType.DURATION),
        ("What does the Business plan cost per seat?", AnswerType.AMOUNT),
        ("How much storage do I get on Starter?", AnswerType.SIZE),
        # "How much is …" asks for money unless it names a quantity of something else.
        ("How much is the deposit for new clients?", AnswerType.AMOUNT),
        ("When does the download link expire?", AnswerType.DURATION),
        # Whether one has to pay, not how much: "No deposit if you are 65 or older".
        ("Will she have to pay a deposit?", AnswerType.YES_NO),
        ("My mom just turned 70. Will she have to pay a deposit?", AnswerType.YES_NO),
        ("How much do I have to pay for a deposit?", AnswerType.AMOUNT),
        ("Our account was short. Do you charge us anything for that?", AnswerType.AMOUNT),
        # How much notice is how long before: "at least 2 hours before your train".
        ("How much notice do I need to give when booking assistance?", AnswerType.DURATION),
        # In the past, a date: release notes say "5.1 — 20 January 2026".
        ("When did Tallyo add SAML single sign-on?", AnswerType.DATE),
        ("When was dark mode added?", AnswerType.DATE),
        # Whether one is charged, not how much: "you aren't charged" answers.
        ("Am I charged while my plan is paused?", AnswerType.YES_NO),
        ("Will we be charged for guests?", AnswerType.YES_NO),
        ("How much will I be charged?", AnswerType.AMOUNT),
        # Opening hours: a time of day or the days, not a span.
        ("When is phone support open?", AnswerType.TIME),
        ("What are your support hours?", AnswerType.TIME),
        ("What time does the last ferry leave?", AnswerType.TIME),
        # Asked how long, a span, whatever hours the question names.
        (
            "How long can the door system be down outside staffed hours before a guard comes?",
            AnswerType.DURATION,
        ),
        # "How long can X be": a length as often as a time, so any number answers.
        ("How long does my password have to be?", AnswerType.NUMBER),
        ("How long can a campervan be before I have to pay extra?", AnswerType.NUMBER),
        ("How long can a deleted client be restored?", AnswerType.DURATION),
        ("How long do I have to be idle before my phone buzzes?", AnswerType.DURATION),
        ("When I'm offline, how many messages can I read?", AnswerType.NUMBER),
        ("How much is the storage on Pro?", AnswerType.SIZE),
        # "How much for …", "how much to …": a price, also as chat writes it.
        ("lost my key tag how much 4 a new one", AnswerType.AMOUNT),
        ("How much to add a seat?", AnswerType.AMOUNT),
        # Any other "how much" asks for an amount of something, never a count: money
        # answers "is there a ceiling on how much one payroll can be".
        ("How much data for 4 users?", AnswerType.QUANTITY),
        ("Is there a ceiling on how much one payroll can be?", AnswerType.QUANTITY),
        ("How much credit can a support agent give?", AnswerType.QUANTITY),
        ("What's the price per kWh in Germany?", AnswerType.AMOUNT),
        ("Which port does the desktop proxy use?", AnswerType.PORT),
        ("What is the maximum number of huddle participants?", AnswerType.NUMBER),
        # "The most <things>" counts them, as "how many" does; not "the most popular".
        ("What's the most phones one account can cover?", AnswerType.NUMBER),
        ("What's the most guests I can bring to the club?", AnswerType.NUMBER),
        ("What's the most weeks I can suspend my membership for?", AnswerType.DURATION),
        ("What is the most popular plan?", AnswerType.ANY),
        ("What are the most serious faults?", AnswerType.ANY),
        ("Can guests create channels?", AnswerType.YES_NO),
        ("Which role can export data?", AnswerType.NAME),
        ("Tell me about huddles", AnswerType.ANY),
        ("What's the phone number for Parcelly support?", AnswerType.PHONE),
        ("Is there a hotline number I can call?", AnswerType.PHONE),
        ("Which phone number do I call about a lost card?", AnswerType.PHONE),
        ("What number do I ring to book help from the Assistance Team?", AnswerType.PHONE),
        ("Which number should I use to call you from overseas?", AnswerType.PHONE),
        # Whoever rings it: "parents", "my daughter".
        ("What number can parents ring to talk to Tutorly support?", AnswerType.PHONE),
        ("Which number should my daughter call if she's stuck?", AnswerType.PHONE),
        # How many numbers, or which numbers a plan calls, asks for no number to ring.
        ("How many numbers can I call for free?", AnswerType.NUMBER),
        ("Which email address do invoices come from?", AnswerType.EMAIL),
        # A possessive among the words before it: "office's" is one word.
        ("What's the press office's 24-hour phone number?", AnswerType.PHONE),
        # A count of codes asks for no code; "how late … open" for a time of day.
        ("How many backup codes do I get?", AnswerType.NUMBER),
        ("how late is live chat open on saturdays", AnswerType.TIME),
        ("How early does the ticket office open?", AnswerType.TIME),
        ("What's the acknowledge time for a P2 incident?", AnswerType.DURATION),
        ("What is the typical delivery time to Ireland?", AnswerType.DURATION),
        ("What's the finance team's email address?", AnswerType.EMAIL),
        ("How much does the Home 22 Pro weigh?", AnswerType.WEIGHT),
        ("What's the maximum parcel weight for Royal Mail?", AnswerType.WEIGHT),
        ("What's the heaviest bike you'll take on the rack?", AnswerType.WEIGHT),
        # A share off a fare: "Child — Discount: 40% off the fare".
        ("How much do children aged 2 to 14 get off the fare?", AnswerType.PERCENT),
        ("How much is it off peak?", AnswerType.AMOUNT),
        ("How much does it cost to take a day off?", AnswerType.AMOUNT),
        # A limit on a payment is money.
        ("What's the smallest amount I can top up in the app?", AnswerType.AMOUNT),
        # Phones and emails as a way of doing something, not a value asked for.
        ("In how many countries can people call into a meeting by phone?", AnswerType.NUMBER),
        ("How many days before expiry does Northwind email all Owners?", AnswerType.DURATION),
        # Asked how to change one, the answer is steps, not a value.
        ("How do I change the phone number on my account?", AnswerType.ANY),
        ("Can I change my email address?", AnswerType.YES_NO),
        ("How do I update a parcel's weight on a label?", AnswerType.ANY),
        ("How is the rating weighted?", AnswerType.ANY),
        # Search-box queries: how long a link is valid, when a surcharge applies.
        ("forgot PIN reset link validity", AnswerType.DURATION),
        ("peak hour surcharge times", AnswerType.TIME),
        ("How many times can I retry?", AnswerType.NUMBER),
    ],
)
def test_the_kind_of_value_a_question_asks_for(question: str, kind: AnswerType) -> None:
    assert answer_type(question) is kind


def test_a_question_with_two_questions_in_it_has_two_parts() -> None:
    found = parts("How many seats does Business include and how long are deleted files kept?")
    assert [p.text for p in found] == [
        "How many seats does Business include",
        "how long are deleted files kept",
    ]
    assert found[1].answer_type is AnswerType.DURATION


@pytest.mark.parametrize(
    "row",
    [
        "E — Annual price (£) First permit: 185; Annual price (£) Second or third permit: 280",
        "Wallet sheet — Price ($): 0.99 per sheet",
        "Home (all perils) — Deductible (CAD): 5,000",
        "4 people — Price per serving (€, VAT incl.): 5.99",
    ],
)
def test_a_row_under_a_header_that_names_the_currency_holds_an_amount(row: str) -> None:
    # Before: the cells say only numbers, so a price row lacked the amount asked for
    # (the strictest lack) and a paragraph with "$49" outweighed it.
    assert holds(row, AnswerType.AMOUNT)


def test_a_currency_code_before_the_number_is_an_amount() -> None:
    # Price lists and PDFs write "EUR 11.50"; read as no amount, the rows of a price
    # list lacked the price asked for and "Minimum team size — 5 riders" answered.
    assert holds("Teams plan — EUR 11.50 per rider a month, excl. VAT", AnswerType.AMOUNT)
    assert holds("Replacement key fob GBP 7.50", AnswerType.AMOUNT)
    assert not holds("Minimum team size — 5 riders", AnswerType.AMOUNT)


def test_british_pence_are_an_amount_and_a_resolution_is_not() -> None:
    # "60p" was no amount, so "library colour printing price" found its word "price"
    # unsaid by the rule that quotes "colour printing or copying: 60p per A4 page".
    assert holds(
        "3.4 Other charges: colour printing or copying: 60p per A4 page", AnswerType.AMOUNT
    )
    assert holds("Carrier bags cost 5p each", AnswerType.AMOUNT)
    assert not holds("Streams in 1080p on every plan", AnswerType.AMOUNT)
    assert not holds("Open until 4pm", AnswerType.AMOUNT)


def test_a_share_of_a_price_is_an_amount() -> None:
    # "How much would we lose?" is answered by the tier's share of the rental.
    assert holds("(b) 29 to 56 days: 50% of the rental, or your deposit", AnswerType.AMOUNT)
    assert holds("Between 24 and 48 hours before — Half the lesson price", AnswerType.AMOUNT)
    assert holds("cancelling costs the full price of the food", AnswerType.AMOUNT)
    assert holds("up to 20% of the item price", AnswerType.AMOUNT)
    # A fee charged as a share of what it is charged on.
    assert holds("2.3 For group sessions the platform fee is 30%, whatever", AnswerType.AMOUNT)
    assert holds("Cards carry a 3% card surcharge.", AnswerType.AMOUNT)
    # A discount or a share of something else is no price.
    assert not holds("50% off your first box", AnswerType.AMOUNT)
    assert not holds("less a discount of 4% for costs we no longer have", AnswerType.AMOUNT)
    assert not holds("half of the seats are free", AnswerType.AMOUNT)


@pytest.mark.parametrize(
    "span",
    ["2 wks", "1 yr", "6 mths", "a fortnight", "by the next business day", "same-day dispatch"],
)
def test_short_and_wordy_spans_are_durations(span: str) -> None:
    assert holds(span, AnswerType.DURATION)


def test_a_limit_may_be_of_money_and_a_count_is_not() -> None:
    # A limit read as a count (never money) left "at least $20 at a time" lacking
    # the value "PayGo minimum top-up" asks for.
    assert answer_type("PayGo minimum top-up") is AnswerType.QUANTITY
    assert answer_type("What's the goodwill credit limit for a Tier 2 agent?") is (
        AnswerType.QUANTITY
    )
    assert holds("at least $20 at a time", AnswerType.QUANTITY)
    assert answer_type("What is the max number for team members?") is AnswerType.NUMBER
    assert answer_type("How many seats does Pro include?") is AnswerType.NUMBER
    assert not holds("$49 a month", AnswerType.NUMBER)


def test_a_second_question_after_an_adverb_or_a_clause_of_its_own() -> None:
    found = parts(
        "What does the Starter plan cost per month in US dollars, and separately, how much "
        "is the Family add-on?"
    )
    assert [p.text for p in found] == [
        "What does the Starter plan cost per month in US dollars",
        "how much is the Family add-on",
    ]
    found = parts(
        "What score do I need on the end-of-level test, and once I pass, how soon does the "
        "certificate show up?"
    )
    assert [p.text for p in found] == [
        "What score do I need on the end-of-level test",
        "once I pass, how soon does the certificate show up",
    ]
    assert [p.answer_type for p in found][1] is AnswerType.DURATION


def test_a_header_without_a_currency_holds_no_amount() -> None:
    assert not holds("4 x 4 — Size (inches): 4 x 4", AnswerType.AMOUNT)
    assert not holds("Band (A to H): 3", AnswerType.AMOUNT)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What's the number for roadside assistance?", AnswerType.PHONE),
        ("What is the number to call for billing?", AnswerType.PHONE),
        ("What is the max number for team members?", AnswerType.NUMBER),
        ("What is the number of seats on Pro?", AnswerType.NUMBER),
        # A number one texts is a phone number, and so is a search box's "number for".
        ("Is there a mobile number I can text the library on?", AnswerType.PHONE),
        ("number for the ferry status recording pls", AnswerType.PHONE),
        ("number of seats on pro", AnswerType.NUMBER),
        # Any words before "phone number", a number named by the line it rings, and
        # "who do I ring": each was no kind at all (or a name), so a sentence without
        # the number outranked the row that holds it.
        ("What's Fleetway's member support phone number?", AnswerType.PHONE),
        ("out of hours number for members pls, tooth agony", AnswerType.PHONE),
        ("support phone number pls", AnswerType.PHONE),
        ("What's the Galloway customer service number for Germany?", AnswerType.PHONE),
        ("What's your after-hours emergency number?", AnswerType.PHONE),
        ("tooth pain 9pm sunday who do i ring", AnswerType.PHONE),
        # Not a number to ring: asked how to change one, or a reference.
        ("my phone number changed, what do i do", AnswerType.ANY),
        ("How do I change my phone number?", AnswerType.ANY),
        ("What is the reference number for my booking?", AnswerType.ANY),
        ("Who do I contact about a refund?", AnswerType.NAME),
    ],
)
def test_the_number_for_a_service_is_a_phone_number(question: str, kind: AnswerType) -> None:
    assert answer_type(question) is kind


def test_a_second_question_may_start_with_a_preposition() -> None:
    # Before: one part that asked for a duration, so the security key's price was
    # answered with a student card's and the date the text codes end was left out.
    found = parts(
        "How much does a security key cost a student, and until when will text message "
        "MFA codes keep working?"
    )
    assert [p.text for p in found] == [
        "How much does a security key cost a student",
        "until when will text message MFA codes keep working",
    ]
    assert [p.answer_type for p in found] == [AnswerType.AMOUNT, AnswerType.DATE]
    assert [p.answer_type for p in parts("Can I pay by card, and in which currencies?")] == [
        AnswerType.YES_NO,
        AnswerType.ANY,
    ]
    # "… and after how long idle do you sign me out?" was no second part, so the
    # answer gave the lockout and left the idle timeout out.
    found = parts(
        "How long is my account locked after too many failed sign-ins, and after how long "
        "idle do you sign me out?"
    )
    assert [p.text for p in found] == [
        "How long is my account locked after too many failed sign-ins",
        "after how long idle do you sign me out",
    ]
    # "and" between two verbs of one question is still one part.
    assert len(parts("Can I export and delete my data?")) == 1


@pytest.mark.parametrize(
    "question",
    [
        "What are Customer Care's hours on a Sunday?",
        "What are the Service Desk hours?",
        "What are the weekend hours?",
        "When is the branch open?",
    ],
)
def test_asked_for_someones_hours_a_time_answers(question: str) -> None:
    # Before: "What are Customer Care's hours on a Sunday?" asked for nothing in
    # particular, and "Sunday — 10:00 to 18:00 (chat only)" was refused.
    assert answer_type(question) is AnswerType.TIME


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How many hours of video can I store?", AnswerType.DURATION),
        ("What are the hours of video included?", AnswerType.ANY),
        ("Until when is the offer valid?", AnswerType.DATE),
        ("By when must I pay?", AnswerType.DATE),
        ("client support opening times??", AnswerType.TIME),
        ("What are the library's open times on Sunday?", AnswerType.TIME),
        ("How long do opening times change for at Christmas?", AnswerType.DURATION),
    ],
)
def test_hours_of_something_and_until_when(question: str, kind: AnswerType) -> None:
    assert answer_type(question) is kind


def test_a_second_question_after_a_comma_is_a_part_of_its_own() -> None:
    # Written without "and" or a question mark: before, one part that asked for an
    # amount, so "Client logins are free, up to … 25 on Studio" lacked one and was refused.
    found = parts("how many client portal logins on studio, do they cost extra")
    assert [p.answer_type for p in found] == [AnswerType.NUMBER, AnswerType.AMOUNT]
    assert found[1].text.endswith("do they cost extra")
    # A clause before the comma is no question of its own.
    assert len(parts("When I cancel, do I get a refund?")) == 1
    assert len(parts("If I upgrade, do I lose my data?")) == 1


def test_a_statement_after_the_question_is_its_context_not_a_part() -> None:
    # "my daughter is 3" was a part of its own (it has "is"), answered with whatever
    # sentence was closest to a daughter's age.
    found = parts("do kids under 4 go free?? my daughter is 3")
    assert [(p.text, p.answer_type) for p in found] == [
        ("do kids under 4 go free?? my daughter is 3", AnswerType.YES_NO)
    ]
    # A second question typed without its question mark is still a part.
    found = parts("How many seats does Team have? how long is the trial")
    assert [p.text for p in found] == ["How many seats does Team have", "how long is the trial"]


def test_a_single_question_with_and_in_it_stays_whole() -> None:
    assert len(parts("Can I export and delete my data?")) == 1
    assert len(parts("What are the storage and member limits on Starter?")) == 1


def test_holds_recognises_values() -> None:
    assert holds("Deleted files stay for 30 days.", AnswerType.DURATION)
    assert not holds("Deleted files stay in the trash.", AnswerType.DURATION)
    # A hyphenated business-day span is a duration too: "how long do payouts take" was
    # answered by the 3-day pause rule, which held one, over this sentence, which did not.
    assert holds("Paid out on a 2-business-day rolling basis.", AnswerType.DURATION)
    # A latency: "How long does a hybrid query take?" is answered in milliseconds.
    assert holds("A hybrid query takes 11.6 ms at the median.", AnswerType.DURATION)
    assert holds("Webhooks time out after 800 milliseconds.", AnswerType.DURATION)
    # A share in words, as fare pages write discounts: "Gold Card companion discount"
    # was refused, the page's "one-third off" holding no percentage.
    assert holds("It gives one-third off Off-Peak fares.", AnswerType.PERCENT)
    assert holds("Children aged 5-15 pay half the adult fare.", AnswerType.PERCENT)
    assert not holds("The crossing takes half an hour.", AnswerType.PERCENT)
    assert not holds("A third of members book online.", AnswerType.PERCENT)
    assert holds("Business — Price per seat: $11.75", AnswerType.AMOUNT)
    # The sign after the number, as European pages write prices; and no count in it.
    assert holds("Ad-hoc charging: 0,59 €/kWh", AnswerType.AMOUNT)
    assert holds("The annual plan is 120 CHF.", AnswerType.AMOUNT)
    assert not holds("Ad-hoc charging: 0,59 €/kWh", AnswerType.NUMBER)
    # A card fee charges cents: "2.9% + 30¢" answers "what's the processing fee?".
    assert holds("US cards — Provider fee: 2.9% + 30¢", AnswerType.AMOUNT)
    assert holds("Each text message costs 4 cents.", AnswerType.AMOUNT)
    assert not holds("US cards — Provider fee: 2.9%", AnswerType.AMOUNT)
    # "How much" is answered by money as by any other amount; words alone are not one.
    assert holds("New companies can pay up to $50,000 per run.", AnswerType.QUANTITY)
    assert holds("Free — Guests: unlimited", AnswerType.QUANTITY)
    assert not holds("Ask your bank to raise the limit.", AnswerType.QUANTITY)
    assert holds("Storage: 100 GB per seat", AnswerType.SIZE)
    # An image's size is its pixels: "to what size are photos compressed" wants 2048 px.
    assert holds("Photos are resized so their longest side is 2048 px.", AnswerType.SIZE)
    assert holds("Logos up to 512 by 512 pixels", AnswerType.SIZE)
    assert not holds("Photos are resized before upload.", AnswerType.SIZE)
    assert holds("Call +44 20 7946 0958 on weekdays.", AnswerType.PHONE)
    assert holds("US: 1-800-555-0199, or (555) 010-4477 from abroad", AnswerType.PHONE)
    assert holds("Call 1-800-PARCELS.", AnswerType.PHONE)
    # A plan that offers phone support gives no number; neither do a date or a version.
    assert not holds("Enterprise: 24/7 phone", AnswerType.PHONE)
    assert not holds("Version 4.3.0, released 2024-05-01", AnswerType.PHONE)
    assert holds("Write to billing@northwind.example.", AnswerType.EMAIL)
    assert not holds("Use the email address on your account.", AnswerType.EMAIL)
    assert holds("Max weight per parcel: 31.5 kg (70 lb)", AnswerType.WEIGHT)
    assert holds("It weighs 500 g.", AnswerType.WEIGHT)
    # "4G" is a mobile network, and kW a power.
    assert not holds("Connectivity: Wi-Fi, 4G; Max power: 22 kW", AnswerType.WEIGHT)


def test_a_digit_inside_a_name_is_no_count() -> None:
    # "If you have no codes, an Admin can turn off 2SV" states no count of codes:
    # it outranked "Save your 12 recovery codes" for "how many recovery codes".
    for name in ("turn off 2SV", "a Sev1 incident", "error NW-1190", "MiniLM-L6 model"):
        assert not holds(name, AnswerType.NUMBER), name
    for count in ("Save your 12 recovery codes", "up to 8 co-hosts", "2,000 members", "1.5 times"):
        assert holds(count, AnswerType.NUMBER), count


def test_one_question_word_asking_for_two_things_is_two_parts() -> None:
    both = parts(
        "What's the minimum iOS version for the app and the minimum Chrome version for the "
        "web client?"
    )
    assert [p.text for p in both] == [
        "What's the minimum iOS version for the app",
        "What's the minimum Chrome version for the web client",
    ]
    # A comparison, or a tail that belongs to both sides, stays one question.
    for whole in (
        "What's the difference between the Free plan and the Business plan?",
        "What is the price and the storage of Pro?",
    ):
        assert len(parts(whole)) == 1, whole


def test_how_fast_asks_for_a_duration() -> None:
    assert answer_type("How fast must a P1 page be acknowledged?") is AnswerType.DURATION
    assert answer_type("What is the first response time for Sev2?") is AnswerType.DURATION


def test_a_qualifier_before_the_question_word_belongs_to_both_parts() -> None:
    both = parts("On Starter, what's the API limit per minute and the biggest file I can upload?")
    assert [p.text for p in both] == [
        "On Starter, what's the API limit per minute",
        "On Starter, what's the biggest file I can upload",
    ]
    # A limit is any number, money included (a count only where "how many" asks).
    assert [p.answer_type for p in both] == [AnswerType.QUANTITY, AnswerType.SIZE]


def test_which_one_asks_for_the_same_thing_as_the_part_before() -> None:
    both = parts(
        "Which error code do I see for an unsupported browser in the web client, and which one "
        "for an unsupported OS in the desktop app?"
    )
    assert both[1].text == "which error code for an unsupported OS in the desktop app"
    assert both[1].answer_type is AnswerType.SETTING


def test_how_many_names_the_thing_it_counts() -> None:
    assert counted("How many recovery codes come with 2SV") == "codes"
    assert counted("how many times are failed webhooks retried") == "times"
    assert counted("How many co-hosts can I add to a meeting?") == "co-hosts"
    assert counted("How long are deleted files kept?") is None


def test_how_early_and_how_late_ask_for_a_duration() -> None:
    assert answer_type("How early can attendees join before the host?") is AnswerType.DURATION
    assert answer_type("How late can I cancel a booking?") is AnswerType.DURATION
    assert answer_type("What's the longest time span one report can cover?") is AnswerType.DURATION


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("What's the longest time span one CSV report can cover?", True),
        ("Up to how long can a PDF be and still get a preview?", True),
        ("How many co-hosts can I add?", True),
        ("What's the maximum session length?", True),
        ("How do I export my data?", False),
        ("Which roles can export data?", False),
        # "How long do I have to claim?" asks for the time limit, not how long a claim
        # takes; "how long do I have to be idle" asks how long, no limit.
        ("How long do I have to claim by hand if it doesn't cover me?", True),
        ("How long have I got to send the Hub back?", True),
        ("What's the deadline for a refund request?", True),
        ("How long does a refund take?", False),
        ("How long do I have to be idle before my phone buzzes?", False),
    ],
)
def test_a_question_after_a_limit_is_recognised(question: str, asks: bool) -> None:
    assert asks_bound(question) is asks


def test_the_ways_a_page_states_a_limit() -> None:
    for text in (
        "PDFs up to 300 pages are previewed.",
        "A single export can cover at most 31 days.",
        "You can set it anywhere from 1 to 168 hours.",
        "Between 2 and 8 co-hosts.",
        "Uploads are limited to 750 MB.",
        "No more than 5 exports run at once.",
        "Time limit: 28 days after the day you travelled",
        "The deadline is the 5th of the month.",
        "Restocking fees can't exceed 20% of the item price.",
        "A refund must not exceed the amount paid.",
        # A lowest version allowed: what "app minimum iOS version" asks.
        "The Shieldline app needs iOS 16 or later, or Android 10 or later.",
    ):
        assert states_bound(text), text
    assert not states_bound("Export files stay available for download for 5 days.")
    assert not states_bound("How long it takes: we aim to pay within 10 working days")


def test_a_part_that_points_back_is_read_with_the_part_before_it() -> None:
    found = parts(
        "My payouts stopped after I changed my bank. What's going on and how long will it last?"
    )
    # "how long will it last" alone matched any duration of any page.
    assert [(p.text, p.answer_type) for p in found][1] == (
        "My payouts stopped after I changed my bank. What's going on: how long will it last",
        AnswerType.DURATION,
    )
    # A part that names its own thing stays as it is.
    found = parts("How many seats does Business include and how long are deleted files kept?")
    assert found[1].text == "how long are deleted files kept"
    # "there" points back too, and "how much" names nothing of its own: this part
    # was read alone and matched any number on the page.
    found = parts("Can I move my balance to my bank, and how much do I need to have in there?")
    assert found[1].text == (
        "Can I move my balance to my bank: how much do I need to have in there"
    )
    # "that plan" points back however much else the part names: read alone, "what's
    # that plan's energy charge" matched every plan's energy charge.
    found = parts(
        "How big can my solar system be for Solar Buyback 12, and what's that plan's energy charge?"
    )
    assert found[1].text == (
        "How big can my solar system be for Solar Buyback 12: what's that plan's energy charge"
    )
    # "that" before a clause or a verb points nowhere.
    assert parts("What does Pro cost, and what is the fee that applies to refunds?")[1].text == (
        "what is the fee that applies to refunds"
    )
    assert parts("How long is the trial, and is it true that Pro includes SSO?")[1].text == (
        "is it true that Pro includes SSO"
    )


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How many tap-to-charge cards can I have?", AnswerType.NUMBER),
        ("How much do you charge me per minute?", AnswerType.AMOUNT),
        ("How much will I be charged for idle time?", AnswerType.AMOUNT),
        # Before: any yes or no ("You can ask for a written prescription") answered it.
        ("Is there a charge for a written prescription?", AnswerType.AMOUNT),
        ("Are there any extra charges for a second driver?", AnswerType.AMOUNT),
        ("Is there a charging point at the hotel?", AnswerType.YES_NO),
    ],
)
def test_charge_is_money_only_when_someone_is_charged(question: str, kind: AnswerType) -> None:
    assert answer_type(question) is kind


def test_a_time_is_a_time_of_day_the_days_or_an_offset_never_a_price() -> None:
    for text in ("Monday to Friday, 9:00\u201317:30", "open 8am to 6pm", "at 3.30pm", "24/7"):
        assert holds(text, AnswerType.TIME), text
    # "When does check-in close?" is answered by an offset as often as by a clock time.
    assert holds("Check-in closes 40 minutes before departure.", AnswerType.TIME)
    for text in ("It costs $12.99 a month.", "Version 2.50 is out.", "Call 0800 123 4567."):
        assert not holds(text, AnswerType.TIME), text


def test_working_calendar_and_banking_days_are_durations() -> None:
    # Before: "we aim to pay within 10 working days" held no duration, so "how long
    # before Delay Repay pays?" weighed it as lacking what was asked.
    for text in ("within 10 working days", "30 calendar days", "3 banking days", "2 clear days"):
        assert holds(text, AnswerType.DURATION), text


@pytest.mark.parametrize(
    ("typed", "question"),
    [
        ("Hi there! How long are deleted files kept? Thanks!", "How long are deleted files kept?"),
        ("hello, can I pause my plan? thanks in advance, Anna", "can I pause my plan?"),
        ("Good morning team - what does Pro cost? Many thanks", "what does Pro cost?"),
        ("Hey guys how do I reset my password thx", "how do I reset my password"),
        ("What is the warranty? Kind regards, Bob", "What is the warranty?"),
        ("What\u2019s the hotel limit? Cheers", "What's the hotel limit?"),
        # A lead-in before a question word, and an emoticon after the question.
        ("Quick question: what does Pro cost? :)", "what does Pro cost?"),
        ("Can you tell me how long deleted files are kept?", "how long deleted files are kept?"),
        ("I was wondering what the fee is \U0001f642", "what the fee is"),
        # "Can you tell me if …" asks whether already: it stays.
        ("Can you tell me if I can pause?", "Can you tell me if I can pause?"),
        ("Tell me about huddles", "Tell me about huddles"),
        # Words of thanks inside the question, or a word ending in "ty", stay.
        ("Is there a thank-you discount?", "Is there a thank-you discount?"),
        ("How do I thank my host?", "How do I thank my host?"),
        ("What is the warranty", "What is the warranty"),
        ("What are your regards policy", "What are your regards policy"),
        ("Which plan is best?", "Which plan is best?"),
        # Nothing but pleasantries is left as typed.
        ("thanks!", "thanks!"),
    ],
)
def test_a_greeting_and_thanks_around_the_question_are_no_part_of_it(
    typed: str, question: str
) -> None:
    # "Thanks!" after the question cost 86 of the 882 tuning questions offline: a term
    # no page has, and its embedding pulled towards no passage.
    assert asked(typed) == question


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What rate of GST is added to membership fees?", AnswerType.PERCENT),
        ("What's the VAT rate on the monthly fee?", AnswerType.PERCENT),
        ("What's the APR on a personal loan?", AnswerType.PERCENT),
        ("What are the membership fees?", AnswerType.AMOUNT),
        ("How much is the rate for a meeting room?", AnswerType.AMOUNT),
    ],
)
def test_a_tax_or_interest_rate_is_a_percentage_beside_fees(
    question: str, kind: AnswerType
) -> None:
    assert answer_type(question) is kind


def test_what_you_charge_for_something_is_its_price() -> None:
    # It asked for any kind, so "Cold-chain items always ship Overnight at no charge"
    # answered "What do you charge for Overnight shipping?" instead of "$24.95".
    assert answer_type("What do you charge for Overnight shipping?") is AnswerType.AMOUNT
    assert answer_type("What does the gym charge for a guest pass?") is AnswerType.AMOUNT


def test_a_bare_run_of_seven_digits_is_no_phone_number() -> None:
    # "NCPDP ID 3955012" answered "What number do I call to reach a pharmacist?".
    assert not holds("using our NCPDP ID 3955012 or by searching for us", AnswerType.PHONE)
    assert not holds("Our routing number is 531074288.", AnswerType.PHONE)
    assert holds("Pharmacist line: 1-800-555-0142", AnswerType.PHONE)
    assert holds("call the status line on 0808 157 0236", AnswerType.PHONE)
    assert holds("+442071234567", AnswerType.PHONE)


@pytest.mark.parametrize(
    ("question", "reference"),
    [
        ("What does a Galloway booking number look like?", "booking number"),
        ("What does a Healthbridge member ID look like?", "member ID"),
        ("What format is a Shieldline claim number?", "claim number"),
        # "How long" of a reference asks for its length in characters, not a span.
        ("How long is a Roadwise confirmation number?", "confirmation number"),
        # How many digits a reference has, and what it starts with: its form too.
        ("How many digits are in an Islander Card number?", "Card number"),
        ("How many digits does my Gridwise customer number have?", "customer number"),
        ("What letters does a bulky waste booking reference begin with?", "booking reference"),
        ("What does my membership number start with?", "membership number"),
    ],
)
def test_what_a_reference_looks_like_asks_for_its_form(question: str, reference: str) -> None:
    # Before: "look like" was any answer and "how long is a … number" a duration.
    assert answer_type(question) is AnswerType.FORMAT
    assert formatted(question) == reference


@pytest.mark.parametrize(
    "question",
    [
        "How long is the DishDash sign-in OTP valid?",
        "How long is an invite to a new user valid?",
        "What does the app look like on a tablet?",
        "How many digits is the PIN?",
        "What does the trial start with?",
    ],
)
def test_how_long_a_code_lasts_or_how_an_app_looks_asks_no_form(question: str) -> None:
    assert answer_type(question) is not AnswerType.FORMAT
    assert formatted(question) is None


def test_a_form_is_a_length_in_characters_or_a_prefix() -> None:
    for said in (
        "It's 8 characters long, starts with QF and is at the top of your email.",
        "Your booking reference is BW followed by 6 digits.",
        "A run id has the form run_ followed by 32 hexadecimal characters.",
    ):
        assert holds(said, AnswerType.FORMAT), said
    assert not holds("Have your booking reference ready when you call.", AnswerType.FORMAT)
