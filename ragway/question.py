"""What a question asks for: its parts, and the kind of value each part wants.

Used by the retriever (a multi-part question is searched part by part) and by the
extractive selection (and the LLM backends' evidence gate) to prefer
the unit that holds the asked value: "how long" wants a duration, "how many" a
count, "which port" a port number, "is there / can I" a yes-or-no statement.
The rules are deliberately small and readable: they match how people phrase
help-centre questions, not a particular knowledge base.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from ragway.text import content_terms, plain_quotes


class AnswerType(StrEnum):
    DURATION = "duration"
    NUMBER = "number"  # a count or a limit
    # "How much credit can an agent give?", "how much can one payroll be": an amount
    # of something the question does not name the unit of, money included.
    QUANTITY = "quantity"
    PERCENT = "percent"
    AMOUNT = "amount"  # money
    SIZE = "size"  # storage, file size
    WEIGHT = "weight"  # a mass: "20 kg", "70 lb"
    PHONE = "phone"  # a telephone number
    EMAIL = "email"  # an email address
    PORT = "port"
    DATE = "date"
    # A time of day or the days something happens: "Monday to Friday, 9:00 to 17:30",
    # "24/7", "8am to 6pm"; what "When is phone support open?" asks for.
    TIME = "time"
    SETTING = "setting"  # a command, config key, environment variable, code
    # The form of a reference, an ID or a number: "8 characters, starts with GX",
    # "BW followed by 6 digits"; what "What does a booking number look like?" asks.
    FORMAT = "format"
    NAME = "name"  # a role, a plan, a menu, a person
    YES_NO = "yes_no"
    ANY = "any"


_UNIT_DURATION = (
    # "2 wks", "1 yr" as notices and chat shorten them; "two fortnights".
    r"(?:milliseconds?|ms|seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|wks?|"
    r"fortnights?|months?|mths?|years?|yrs?|"
    # "10 working days", "3 banking days": British and banking pages count days so.
    r"(?:business|working|calendar|banking|clear)[\s-]days?)"
)
# Currency codes written after an amount ("49 USD", "120 CHF"), and the signs.
_CURRENCY = "USD|EUR|GBP|CHF|CAD|AUD|NZD|SEK|NOK|DKK|PLN|JPY|INR"
_SIGNS = "$€£¥"
_SIGN = f"[{_SIGNS}]"
# A small number written as a word, or no limit at all: a count as much as "3" is.
_NUMBER_WORDS = r"\b(?:unlimited|one|two|three|four|five|six|seven|eight|nine|ten)\b"
# A share in words, as fares and fees write it ("half", "a third").
_FRACTION = r"half|(?:a|one)[\s-](?:third|quarter)"
# What a share of a price is a share of ("50% of the rental").
_PRICE_NOUN = r"(?:fare|price|cost|rental|fee|rate|total|amount|charge|bill|deposit)s?\b"

_VALUE_PATTERNS: dict[AnswerType, re.Pattern[str]] = {
    AnswerType.DURATION: re.compile(
        rf"\b(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|twelve|"
        rf"fifteen|twenty|thirty|sixty|ninety)[\s-]*{_UNIT_DURATION}\b|"
        # Spans said without a number: "within a fortnight", "by the next business day",
        # "same-day dispatch".
        r"\b(?:a|one) fortnight\b|\bnext (?:business |working )?day\b|\bsame[\s-]day\b",
        re.I,
    ),
    # "20%", and the shares a fare page writes in words: "a third off", "half price".
    AnswerType.PERCENT: re.compile(
        rf"\d[\d,.]*\s*(?:%|percent\b)|\b(?:{_FRACTION}|two[\s-]thirds|three[\s-]quarters)\s+"
        r"(?:off|price|the\s+(?:\w+\s+){0,3}?(?:fare|price|cost))\b",
        re.I,
    ),
    AnswerType.AMOUNT: re.compile(
        # "$49", "49 USD", and the European "0,39 €" with the sign after the number;
        # "2.9% + 30¢" charges cents.
        # The currency's code before the number as price lists and PDFs write it:
        # "EUR 11.50 per rider a month", "GBP 25".
        rf"{_SIGN}\s?\d|\b(?:{_CURRENCY})\s?\d|"
        rf"\d[\d,.]*\s?(?:{_CURRENCY}|dollars?|euros?|pounds?|cents?|pence)\b|"
        rf"\d[\d,.]*\s?[{_SIGNS}¢]|"
        # British pence: "60p per A4 page", "a 5p bag"; one or two digits, so "1080p"
        # stays a screen's resolution.
        r"(?<![\d.,])\d{1,2}p\b|"
        # A table whose column header names the currency: "Price (£): 185", "Fee (USD):
        # 45", "Price per serving (€, VAT incl.): 5.99" (a row's cells say only numbers).
        rf"\([^()]*?(?:{_SIGN}|\b(?:{_CURRENCY})\b)[^()]*\)[^:;]*:\s*\d|"
        # "How much would we lose?" is answered by a share of a price the page does not
        # restate: "50% of the rental", "half the lesson price", "the full fare".
        rf"\d[\d,.]*\s*(?:%|percent)\s+of\s+(?:the\s+|your\s+|its\s+)?(?:[\w-]+\s+){{0,2}}?"
        rf"{_PRICE_NOUN}|\b(?:{_FRACTION}|full)\s+(?:of\s+)?(?:the\s+|your\s+)?"
        rf"(?:[\w-]+\s+){{0,2}}?{_PRICE_NOUN}|"
        # A fee charged as a share: "the platform fee is 30%", "a 3% card surcharge".
        r"\b(?:fees?|commission|surcharges?)\b(?: (?:is|are|of))? (?:up to |at most )?"
        r"\d[\d,.]*\s*%|\d[\d,.]*\s*%\s+(?:[\w-]+\s+)?(?:fee|commission|surcharge)s?\b",
        re.I,
    ),
    AnswerType.SIZE: re.compile(
        r"\d[\d,.]*\s?(?:[KMGTP]i?B|bytes?|gigabytes?|terabytes?|px|pixels?)\b", re.I
    ),
    AnswerType.WEIGHT: re.compile(
        # "500 g" but not "4G" (a mobile network).
        r"\d[\d,.]*\s?(?:kg|kilos?|kilograms?|grams?|lbs?|pounds?|oz|ounces?|tonnes?)\b|"
        r"\d[\d,.]*\sg\b",
        re.I,
    ),
    # Digits in groups ("+44 20 7946 0958", "1-800-555-0199", "(555) 010-4477"), or a
    # vanity number ("1-800-PARCELS"); holds() wants seven digits, and no date.
    AnswerType.PHONE: re.compile(r"\+?\(?\d[\d ()-]{5,}\d|\b1-8\d\d-[A-Z]{4,}\b"),
    AnswerType.EMAIL: re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"),
    AnswerType.PORT: re.compile(r"\bport\b[^.]{0,20}\b\d{2,5}\b|:\d{2,5}\b|\b\d{4,5}\b", re.I),
    AnswerType.DATE: re.compile(
        r"\b(?:\d{4}-\d{2}-\d{2}|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
        r"\s+\d{1,2}|\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*|"
        r"(?:19|20)\d{2})\b",
        re.I,
    ),
    AnswerType.TIME: re.compile(
        r"\b\d{1,2}(?:[:.]\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)(?!\w)|\b\d{1,2}:\d{2}\b|"
        r"\b(?:noon|midday|midnight|around the clock|weekdays?|weekends?)\b|\b24/7\b|"
        r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b",
        re.I,
    ),
    AnswerType.SETTING: re.compile(
        r"`[^`]+`|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b[a-z]+(?:[._-][a-z0-9]+){1,}\b|"
        r"\b[A-Z]{2,}-\d{2,}\b|--[a-z][\w-]*",
    ),
    # A count: a number that is not money ("$49" does not say how many people) and
    # not part of a name ("2SV", "Sev1", "MiniLM-L6", "NW-1190").
    AnswerType.NUMBER: re.compile(
        rf"(?<![{_SIGNS}\d.,\w-])\d[\d,.]*(?![\d\w])(?![.,]\d)(?!-[A-Za-z])(?!\s?(?:{_CURRENCY})\b)(?!\s?{_SIGN})|"
        + _NUMBER_WORDS,
        re.I,
    ),
    AnswerType.FORMAT: re.compile(
        r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)[\s-]*"
        r"(?:(?:hexadecimal|alphanumeric|numeric)\s+)?(?:characters?|digits?|letters?|numbers?|"
        r"symbols?)\b|"
        r"\b(?:starts?|begins?|starting|beginning)\s+with\b|\bfollowed\s+by\b|"
        r"\bprefix(?:ed)?\b|\bformat\b",
        re.I,
    ),
    # Any number, money included: "how much" never asks for a count of things.
    AnswerType.QUANTITY: re.compile(r"\d|" + _NUMBER_WORDS, re.I),
    AnswerType.YES_NO: re.compile(
        r"\b(?:yes|no|not|cannot|can't|only|must|never|always|can|is|are|supports?|"
        r"available|included|allowed)\b",
        re.I,
    ),
}


# "What's the", "what is your", "what are the": a question asking for a value.
_WHAT_IS = r"what(?:'s|\s+is|\s+are)\s+(?:the|your|our|my)"


def _any(*alternatives: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b", re.I)


# What a number to ring is named by ("the out-of-hours number", "the helpline number").
_LINE_KINDS = (
    r"out[- ]of[- ]hours|after[- ]hours|emergency|helpline|hotline|freephone|contact|"
    r"support|customer\s+(?:service|care)"
)
# A search-box query: no word anywhere that asks how, whether, when or what.
_SEARCH_BOX = (
    r"(?!.*\b(?:how|what|which|when|where|why|who|can|could|do|does|did|is|are|was|were|"
    r"will|would|should|may|might|if)\b)"
)

# What a customer calls a reference they are given: "booking number", "member ID".
_REFERENCE = r"(?:numbers?|no\.?|references?|refs?|ids?|codes?|pins?|passwords?|usernames?)"

# "What format is a claim number?", "What does a booking reference look like?", "How
# long is a confirmation number?" (not "… valid?"): the form of a reference, which pages
# give as "8 characters, starts with GX"; "how long" here asks for no span. Each pattern
# captures the word that says which reference and the reference ("booking number").
_FORMAT_ASKED = (
    re.compile(
        rf"\bwhat\s+format\s+(?:is|are|does|do)\s+(?:[\w'-]+\s+){{0,4}}?([\w-]+\s+)?"
        rf"({_REFERENCE})\b",
        re.I,
    ),
    re.compile(rf"\b([\w-]+\s+)?({_REFERENCE})\s+looks?\s+like\b", re.I),
    re.compile(
        rf"\bhow\s+long\s+(?:is|are)\s+(?:a|an|the|my|your|our)\s+(?:[\w'-]+\s+){{0,3}}?"
        rf"([\w-]+\s+)?({_REFERENCE})\s*\?",
        re.I,
    ),
    # "How many digits are in an Islander Card number?", "How many digits does my
    # customer number have": its length.
    re.compile(
        rf"\bhow\s+many\s+(?:digits|characters|letters)\s+(?:are\s+in|is\s+in|in|does|do)\s+"
        rf"(?:(?:a|an|the|my|your|our)\s+)?(?:[\w'-]+\s+){{0,3}}?([\w-]+\s+)?({_REFERENCE})\b",
        re.I,
    ),
    # "What letters does a bulky waste booking reference begin with?": its prefix.
    re.compile(
        rf"\bwhat\s+(?:(?:letters?|characters?|digits?|prefix)\s+)?(?:does|do)\s+"
        rf"(?:a|an|the|my|your|our)\s+(?:[\w'-]+\s+){{0,3}}?([\w-]+\s+)?({_REFERENCE})\s+"
        rf"(?:start|begin)s?\s+with\b",
        re.I,
    ),
)

# (pattern on the question, answer type): the first that matches wins.
_QUESTION_RULES: list[tuple[re.Pattern[str], AnswerType]] = [
    # First: a form asked (``_FORMAT_ASKED``) is what ``formatted`` reads.
    (re.compile("|".join(p.pattern for p in _FORMAT_ASKED), re.I), AnswerType.FORMAT),
    # Asked for the number or address itself, the answer is that value, not a
    # sentence about phones ("call into a meeting by phone"). Asked how to change
    # one ("How do I change my phone number?"), the answer is steps: no value kind.
    (
        re.compile(
            rf"\b(?:{_WHAT_IS}|which)\s+(?:[\w'-]+\s+){{0,3}}?(?:tele)?phone\s+numbers?\b|"
            r"\b(?:tele)?phone\s+numbers?\s+(?:for|of|to\s+call)\b|"
            # "Is there a mobile number I can text?": the number texted, as one rung.
            r"\bnumbers?\s+(?:to|I\s+can|we\s+can|you\s+can)\s+(?:call|ring|dial|text)\b|"
            # "number for the ferry status recording pls": a search box's "number for".
            r"^\s*(?:the\s+)?(?:phone\s+)?numbers?\s+(?:for|of)\s+(?:the|your|a)\b|"
            # "What number do I ring to book help?", "Which number should I use to call
            # you from overseas?", "What number can parents ring?": the number rung is
            # the answer, whoever rings it.
            r"\b(?:what|which)\s+(?:[\w-]+\s+){0,2}?numbers?\s+(?:do|does|should|can|shall|would)\s+"
            r"(?:I|we|you|(?:[\w'-]+\s+){1,2}?)\s*(?:(?:use\s+to\s+)?(?:call|ring|dial|phone))\b|"
            r"\b(?:hotline|helpline)\s+numbers?\b|"
            # "What's the number for roadside assistance?": the one to call.
            rf"\b(?:{_WHAT_IS}|which)\s+(?:(?:phone|contact|support|main|direct|emergency|"
            r"freephone|free|toll-free|24/7|24-hour)\s+)?number\s+(?:for|to\s+"
            r"(?:call|ring|reach|contact))\b|"
            # "tooth pain 9pm sunday who do i ring": the number rung, not a name.
            r"\bwho\s+(?:do|should|can|shall|would)\s+(?:I|we)\s+(?:ring|phone|call)\b|"
            # "What's Fleetway's member support phone number?": any words before it.
            r"\bwhat(?:'s|\s+is|\s+are)\s+(?:[\w'-]+\s+){0,4}?(?:tele)?phone\s+numbers?\b|"
            # A search box's "support phone number pls", "out of hours number for
            # members": a number named by what it is for; not a question of how or
            # whether ("How do I change my phone number?").
            rf"^{_SEARCH_BOX}[^?]*?\b(?:(?:tele)?phone|{_LINE_KINDS})\s+numbers?\b|"
            rf"\b(?:what(?:'s|\s+is|\s+are)|which)\s+(?:[\w'-]+\s+){{0,3}}?"
            rf"(?:{_LINE_KINDS})\s+numbers?\b",
            re.I,
        ),
        AnswerType.PHONE,
    ),
    (
        re.compile(
            rf"\b(?:{_WHAT_IS}|which)\s+(?:[\w'-]+\s+){{0,3}}?e-?mail\s+address(?:es)?\b|"
            r"\be-?mail\s+address(?:es)?\s+(?:for|of|to\s+(?:write|send|contact))\b",
            re.I,
        ),
        AnswerType.EMAIL,
    ),
    # "How much does it weigh?", "What's the maximum parcel weight?"; not "How do I
    # change a parcel's weight?" nor "How is the score weighted?".
    (
        re.compile(
            rf"\bweighs?\b|\bhow\s+heavy\b|\b(?:heaviest|lightest)\b|\bweight\s+limits?\b|"
            rf"\b(?:{_WHAT_IS})\s+(?:[\w-]+\s+){{0,3}}?weight\b",
            re.I,
        ),
        AnswerType.WEIGHT,
    ),
    # "When is phone support open?", "What are your opening hours?", "What time does
    # the last ferry leave?": a time of day or the days, not a span ("in 7 days")
    # that "when is …" otherwise asks for.
    # A question that asks how long ("How long can the door system be down outside
    # staffed hours…?") asks for a span whatever hours it names.
    (
        re.compile(
            r"^(?!.*\bhow\s+(?:long|many|much|soon|often|quickly|fast)\b).*?(?:"
            r"\bwhat time\b|\bwhat hours\b|\bhours of (?:operation|business)\b|"
            r"\b(?:opening|office|business|support|phone|helpline|hotline|staffed|service|"
            r"call cent(?:re|er)|desk|branch|store|shop|counter|lab|library|centre|center)"
            r"\s+hours\b|"
            # "client support opening times??", "what are the library's open times"
            r"\b(?:opening|open|office|business)\s+times\b|"
            # A search box's "peak hour surcharge times": when it applies, not what.
            r"^(?!\s*(?:how|what|which|when|where|why|who|whose|is|are|do|does|can)\b)"
            r"[\w\s'-]*\btimes\s*\??\s*$|"
            # "What are Customer Care's hours on a Sunday?", "what are the weekend hours?"
            r"\bwhat\s+(?:are|were)\s+(?:[\w'&-]+\s+){0,4}?hours\b"
            r"(?!\s+of\s+(?!operation|business))|"
            r"\w's\s+hours\b|"
            r"\b(?:when|how late|how early)\s+(?:is|are|does|do)\s+(?:[\w'-]+\s+){0,4}?"
            r"(?:open|opens|closed?|closes|staffed|answered|manned)\b)",
            re.I | re.S,
        ),
        AnswerType.TIME,
    ),
    # "Am I charged while my plan is paused?", "Will we be charged for guests?": whether,
    # not how much; "you aren't charged" answers without a price ("how much will I be
    # charged?" still asks for money).
    (
        re.compile(
            r"^\s*(?:am|is|are|will|would|do|does|did|can|could|should|may|was|were)\b"
            r"(?!.*\b(?:how much|what|which)\b)(?=.*\b(?:charged|charges? (?:me|us|you|them))\b)",
            re.I | re.S,
        ),
        AnswerType.YES_NO,
    ),
    # "Will she have to pay a deposit?", also as the closing question of a story ("My mom
    # just turned 70. … Will she have to pay a deposit?"): whether, which "No deposit if
    # you are 65 or older" answers, not how much.
    (
        re.compile(
            r"(?:^|(?<=[.!?])\s)\s*(?:will|would|do|does|did|can|should|must)\s+\w+\s+"
            r"(?:have|need) to pay\b(?!.*\b(?:how much|what|which)\b)",
            re.I | re.S,
        ),
        AnswerType.YES_NO,
    ),
    # "When was dark mode added?", "when did the app start selling Flexi Season?": in
    # the past, a date ("12 March 2026"), not a span.
    (re.compile(r"\bwhen\s+(?:was|were|did)\b", re.I), AnswerType.DATE),
    # "Until when will text codes keep working?", "by when must I pay?": a date too.
    (re.compile(r"\b(?:until|till|by|since)\s+when\b", re.I), AnswerType.DATE),
    # "How long does my password have to be?", "how long can a campervan be before I
    # pay extra?": a length in characters, metres or pages as often as in time, so
    # any number (never money) answers; not "how long can a client be restored".
    (
        re.compile(
            r"\bhow long\s+(?:can|could|must|should|may|does|do|will|would)\s+(?:[\w'-]+\s+){1,5}?"
            r"(?:(?:have|has|need|needs)\s+to\s+)?be\b(?=\s*(?:[?,.;]|$|\s+(?:before|and|if)\b))",
            re.I,
        ),
        AnswerType.NUMBER,
    ),
    (
        _any(
            r"how (?:long|soon|often|frequently|far back|far in advance|old|fast|quickly|"
            r"early|late)",
            "how much time",
            # "How much notice do I need to give?": how long before ("at least 2 hours").
            r"how much (?:advance )?(?:notice|warning)",
            r"how far ahead",
            # "When does the link expire?", "when does that money come back?": in how
            # long ("7 days", "3 working days"); not "when I'm offline, how much…".
            r"when (?:does|do|is|are|will|would|can|should|did|must)",
            "response time",
            # "What's the acknowledge time for a P2 incident?": a span, as pages state
            # one ("Acknowledge within: 30 minutes").
            r"(?:acknowledge(?:ment)?|resolution|turnaround|processing|delivery|wait(?:ing)?|"
            r"lead|reply|dispatch|transit)\s+times?",
            "time span",
            # "forgot PIN reset link validity": how long it is valid ("for 30 minutes").
            "validity",
        ),
        AnswerType.DURATION,
    ),
    (
        # "What's the most weeks I can suspend for?" asks how long, as "how many weeks".
        _any(
            r"(?:how many|number of|the most|the fewest)\s+"
            r"(?:days|hours|minutes|seconds|weeks|months|years)"
        ),
        AnswerType.DURATION,
    ),
    (
        _any(
            "retention",
            "retain(?:ed)?",
            "kept",
            "expire[sd]?",
            "expiry",
            "time ?out",
            "grace period",
            "trial",
        ),
        AnswerType.DURATION,
    ),
    (
        _any(
            "percent",
            "percentage",
            "discount",
            "uptime",
            "sla",
            # A tax or an interest rate is a percentage, even beside "fees" ("What rate
            # of GST is added to membership fees?"): "GST at 9%", not a price.
            r"rate of (?:gst|vat|hst|pst|sales tax|tax|interest)",
            r"(?:gst|vat|hst|pst|sales tax|tax|interest) rate",
            "apr",
            "apy",
            # "How much do children aged 2 to 14 get off the fare?": a share off.
            r"how much (?:[\w']+\s+){0,8}?(?<!time )(?<!day )(?:off|cheaper)\b"
            r"(?! (?:peak|season|hours|site))",
        ),
        AnswerType.PERCENT,
    ),
    (
        _any(
            "price",
            "prices",
            "cost",
            "costs",
            "fee",
            "fees",
            # Money charged, not a battery's charge: "will I be charged", "what do you
            # charge me", not "tap-to-charge cards" or "charge my car".
            "charged",
            r"charges? (?:me|us|you|them)",
            # "Is there a charge for a written prescription?": its price, where there is one.
            r"(?:is|are) there (?:a|an|any) (?:extra |additional )?charges?",
            # "What do you charge for Overnight shipping?": the price asked of you.
            r"what (?:do|does|will|would) (?:[\w'-]+\s+){1,3}?charge\b",
            r"how much .* charges?",
            "how much .* pay",
            # "the smallest amount I can top up": money, as a limit on a payment.
            r"(?:smallest|largest|lowest|highest|min(?:imum)?|max(?:imum)?) amount",
            # "How much for a new one?", "how much to add a seat": a price, as chat
            # writes it ("how much 4 a new one").
            r"how much (?:for|4|to)\b",
            # "How much is the deposit?" asks for money; "how much is the storage" not.
            r"how much (?:is|are|will|would)(?! (?:the |my |our )?(?:storage|space|disk|data|"
            r"bandwidth|upload|ram|memory))",
            "deposits?",
            "surcharges?",
            "tariffs?",
            "per kwh",
            "per seat",
            "per user",
            "per month",
        ),
        AnswerType.AMOUNT,
    ),
    (
        _any("storage", "disk", "upload", "file size", "attachments?", "quota", "space"),
        AnswerType.SIZE,
    ),
    (_any("port"), AnswerType.PORT),
    (_any("what date", "which date", "since when", "deadline", "date"), AnswerType.DATE),
    # "How many backup codes do I get?" counts codes; it asks for no code.
    (_any("how many"), AnswerType.NUMBER),
    (
        _any(
            "command",
            "setting",
            r"config(?:uration)? key",
            "variable",
            "env",
            "flag",
            "parameter",
            "error code",
            r"code(?!\s+word)",
            "header",
            "endpoint",
            "url",
        ),
        AnswerType.SETTING,
    ),
    # "How much" that no rule above placed (money, storage, time): an amount of
    # something, never a count; read as one ("number", which is not money) it turned
    # "$50,000 per run" away from "is there a ceiling on how much one payroll can be".
    (_any("how much"), AnswerType.QUANTITY),
    (
        _any(
            "how many",
            "number of",
            r"(?:max(?:imum)?|min(?:imum)?) number",
            # "What's the most phones one account can cover?": a count, as "how many
            # phones"; not "the most popular plan" or "the most serious faults".
            r"the (?:most|fewest) (?!\w*(?:ous|ss|us|is)\b)[a-z]+s(?=\s+(?!of\b)\w)",
        ),
        AnswerType.NUMBER,
    ),
    # A limit is of money as often as of things: "PayGo minimum top-up" ($20), "the
    # goodwill credit limit for a Tier 2 agent" ($200), "up to 5 devices". Read as a
    # count (never money), a limit's "$500" lacked the asked kind of value.
    (
        _any(
            "maximum",
            "max",
            "minimum",
            "min",
            "limits?",
            "up to",
            "at most",
            "at least",
            "rate limit",
        ),
        AnswerType.QUANTITY,
    ),
    (
        re.compile(r"^(?:am|is|are|can|could|does|do|did|will|should|may|has|have)\b", re.I),
        AnswerType.YES_NO,
    ),
    (
        _any("who", r"which (?:role|plan|team|person|group|menu|tab|page|option|button)s?"),
        AnswerType.NAME,
    ),
]

# "… and until when …", "… and in which countries …": a preposition may lead the
# second question, and an adverb may come first ("…, and separately, how much is …").
_PART_SPLIT = re.compile(
    r"\?\s+(?=\S)|;\s+|,?\s+(?:and|also|plus)(?:,?\s+(?:separately|also|then|additionally))?,?"
    r"\s+(?=(?:(?:until|till|since|by|from|for|in|on|at|to|after|before|within|during)\s+"
    r"(?=(?:when|what|which|whom|how)\b))?(?:how|what|which|when|where|who|whom|why|is|"
    r"are|can|could|does|do|did|will|should|may|has|have|whether)\b)|"
    # "…, and once I pass, how soon does the certificate show up?": the second question
    # after a clause of its own, which stays with it.
    r",?\s+and\s+(?=(?:once|if|when|after|before|while)\s+[^,?]{1,60},\s+(?:how|what|which|"
    r"when|where|who|whom|why|is|are|can|could|does|do|did|will|should|may|has|have)\b)",
    re.I,
)
_QUESTION_WORD = re.compile(
    r"\b(?:how|what|which|when|where|who|why|is|are|can|does|do|will|should|whether)\b", re.I
)


@dataclass(frozen=True, slots=True)
class QuestionPart:
    text: str
    answer_type: AnswerType


def answer_type(question: str) -> AnswerType:
    for pattern, kind in _QUESTION_RULES:
        if pattern.search(question):
            return kind
    return AnswerType.ANY


# "What's the minimum iOS version for the app and the minimum Chrome version for
# the web client?": one question word asking for two things.
_WHAT_THE = re.compile(r"^(what(?:'s| is| are)|which is|which are)\s+(?=the\b)", re.I)
_AND_THE = re.compile(r",?\s+and\s+(?=the\s)", re.I)
_ONE_THING = re.compile(r"\b(?:between|both|difference|compare[ds]?|versus|vs)\b", re.I)


# A qualifier before the question word belongs to every part: "On Starter, what's
# the API limit and the biggest file?" asks both about Starter.
_QUALIFIER = re.compile(r"^((?:on|for|in|with|under|using)\s+[^,?]{1,40}),\s+(?=\w)", re.I)


def _shared_question_word(question: str) -> list[str]:
    """ "What's the A and the B" as ["What's the A", "What's the B"], else []."""
    qualifier = _QUALIFIER.match(question)
    rest = question[qualifier.end() :] if qualifier else question
    asked = _WHAT_THE.match(rest)
    if not asked or _ONE_THING.search(rest):
        return []
    pieces = [p.strip(" ?,;") for p in _AND_THE.split(rest)]
    # Each side names its own thing ("the minimum iOS version for the app"), or the
    # tail belongs to both ("What is the price and the storage of Pro?"): keep whole.
    if len(pieces) != 2 or any(len(p.split()) < 5 for p in pieces):
        return []
    pieces = [pieces[0], f"{asked.group(1)} {pieces[1]}"]
    if qualifier:
        pieces = [f"{qualifier.group(1)}, {p}" for p in pieces]
    return pieces


# "..., and which one for the desktop app?": the second part asks for the same kind
# of thing as the first; it is read with the first part's head ("which error code").
_ELLIPTIC = re.compile(r"^(which|what)\s+ones?\b", re.I)
_HEAD = re.compile(
    r"^(?:which|what)\s+((?:[\w-]+\s+){0,2}?[\w-]+)\s+(?=(?:do|does|did|is|are|was|were|can|"
    r"could|will|would|should|shows?|appears?|i|you|we)\b)",
    re.I,
)


def _resolve_ellipsis(pieces: list[str]) -> list[str]:
    out = [pieces[0]]
    for piece in pieces[1:]:
        head = _HEAD.match(out[-1])
        elliptic = _ELLIPTIC.match(piece)
        if head and elliptic:
            piece = f"{elliptic.group(1)} {head.group(1)}{piece[elliptic.end() :]}"
        out.append(piece)
    return out


# A piece that starts asking: a question of its own even without its question mark.
_ASKS = re.compile(
    r"^(?:how|what(?:'s)?|which|who|whose|why|when|where|is|are|am|was|were|can|could|do|"
    r"does|did|will|would|should|shall|may|might|must|has|have|had)\b",
    re.I,
)


# What a chat message says around its question: "Hi there! … Thanks!", "Hello team,",
# "… thanks in advance, Anna". Every word of it dilutes the question's embedding and is
# a term no page has: "Thanks!" after the question cost 86 of the 882 tuning questions
# offline, "Hi there!" before it 23.
_GREETING = re.compile(
    r"^\s*(?:(?:hi|hello|hey|hiya|howdy|greetings|good\s+(?:morning|afternoon|evening|day)|"
    r"dear\s+(?:support|team|sir\s+or\s+madam|sir|madam|all))"
    r"(?:\s+(?:there|team|all|folks|guys|everyone|support|again))?\s*[,!.:;-]*\s*)+",
    re.I,
)
_THANKS = re.compile(
    r"(?:(?<=[\w)])[\s,;-]+|(?<=[?.!])\s*[,;-]*\s*)"
    r"(?:(?:many\s+|and\s+)?thanks?(?:\s+you)?(?:\s+(?:so|very)\s+much)?"
    r"(?:\s+(?:in\s+advance|a\s+lot|again|for\s+(?:your|the|any)\s+help))?|thx|thnx|ty|cheers|"
    r"much\s+appreciated|appreciate\s+it)\b(?:[\s,.!-]+[A-Z][a-z]+)?[\s.!:)]*$"
    # A sign-off only after the question's own punctuation: "…? Kind regards, Anna".
    r"|(?<=[?.!,])\s*(?:(?:kind|best|warm)\s+)?regards\b(?:[\s,.!-]+[A-Z][a-z]+)?[\s.!:)]*$",
    re.I,
)


# How a message leads into its question: "Quick question: …", "Can you tell me how …",
# "I was wondering what …". "Can you tell me how long …" asked whether, as "Can …"
# does; only a lead-in before a question word is dropped ("Can you tell me if …" asks
# whether already).
_LEAD_IN = re.compile(
    r"^\s*(?:(?:(?:quick|one|a|simple|small|silly)\s+)?question\s*[:,-]\s*|"
    r"i\s+have\s+a\s+(?:quick\s+)?question\s*[:,.-]\s*)"
    r"|^\s*(?:(?:can|could|would)\s+(?:you|someone|anyone|somebody)\s+(?:please\s+)?"
    r"(?:tell|let)\s+me(?:\s+know)?|(?:please\s+)?tell\s+me|(?:i'?d|i\s+would)\s+like\s+to\s+know|"
    r"i\s+(?:want|need)\s+to\s+know|i\s+(?:was|am|'m)\s+wondering|i'?m\s+wondering|"
    r"do\s+you\s+know|any\s+idea)\s*,?\s+(?=(?:how|what|which|when|where|who|why)\b)",
    re.I,
)
# Emoticons after it: ":)", ";-)", "🙂".
_EMOTICONS = re.compile(
    r"(?:\s*(?:[:;]-?[()DPp]|\bxD|\blol\b|[\U0001F600-\U0001F64F\U0001F44D]))+\s*$"
)


def without_pleasantries(question: str) -> str:
    """``question`` without a greeting or lead-in before it and thanks, a sign-off or an
    emoticon after it; left whole where nothing else would remain ("thanks!")."""
    core = _EMOTICONS.sub("", _GREETING.sub("", question))
    # Thanks may follow an emoticon and an emoticon the thanks ("… :) Thanks! :)").
    core = _THANKS.sub("", _LEAD_IN.sub("", _EMOTICONS.sub("", _THANKS.sub("", core)))).strip()
    return core if len(core.split()) >= 2 else question.strip()


def asked(text: str) -> str:
    """What the retriever searches and the generator answers of a question as a person
    typed it: ASCII quotes ("What\u2019s" as "What's"), and no greeting, lead-in, thanks
    or emoticon around it."""
    return without_pleasantries(plain_quotes(text.strip()))


def parts(question: str) -> list[QuestionPart]:
    """The question split into the parts a user expects each to be answered.

    Only a split whose pieces each look like a question of their own counts;
    "Can I export and delete my data?" stays whole, "How many seats does
    Business include and how long are deleted files kept?" is two parts, and so
    is "What's the minimum iOS version and the minimum Chrome version?".
    """
    pieces = [p.strip(" ?,;") for p in _PART_SPLIT.split(question.strip())]
    pieces = [p for p in pieces if p]
    if len(pieces) > 1 and not question.rstrip().endswith("?") and not _ASKS.match(pieces[-1]):
        # "do kids under 4 go free?? my daughter is 3": a statement after the question
        # is what it is asked about, no part to answer on its own.
        pieces = [*pieces[:-2], f"{pieces[-2]}? {pieces[-1]}"]
    if len(pieces) == 1:
        pieces = _shared_question_word(question.strip()) or _comma_question(pieces[0]) or pieces
    if len(pieces) > 1 and all(_QUESTION_WORD.search(p) and len(p.split()) >= 3 for p in pieces):
        return _with_antecedents(_resolve_ellipsis(pieces[:3]))
    return [QuestionPart(question.strip(), answer_type(question))]


# "how many client logins on Studio, do they cost extra": a second question after a
# comma, asked of what the first one names. Only after a first piece that is itself a
# question ("how many …"), not a clause ("When I cancel, do I get a refund?").
_COMMA_QUESTION = re.compile(
    r",\s+(?=(?:do|does|did|is|are|can|will|would|could)\s+(?:they|it|i|we|you|these|those|that|"
    r"this)\b)",
    re.I,
)
_ASKS_FIRST = re.compile(
    r"^(?:how|what(?:'s)?|which|who|why|(?:when|where)\s+(?:is|are|do|does|did|can|will|should)|"
    r"is|are|can|do|does|did|will)\b",
    re.I,
)


def _comma_question(question: str) -> list[str] | None:
    pieces = [p.strip(" ?,;") for p in _COMMA_QUESTION.split(question, maxsplit=1)]
    if len(pieces) == 2 and all(pieces) and _ASKS_FIRST.match(pieces[0]):
        return pieces
    return None


# A part that points back at what the part before it is about: "… and how long will
# it last?", "… and what does it cost?".
_ANAPHOR = re.compile(r"\b(?:it|its|they|them|their|that|this|those|these|there)\b", re.I)


# "… and what's that plan's energy charge?": a demonstrative before a noun points back
# however much else the part names; the plan is the one the part before it names. Not
# "that" before a clause ("that the", "that Pro") nor a verb ("the fee that applies").
_POINTS_BACK = re.compile(
    r"\b(?:[Tt]hat|[Tt]his)\s+(?!(?:is|are|was|were|the|a|an|you|we|they|it|he|she|my|our|your|"
    r"their)\b)[a-z]+(?<!s)(?:'s)?(?![\w'])|\b(?:[Tt]hose|[Tt]hese)\s+[a-z]+"
)


# The words that ask ("how much", "how long"): they name nothing the part is about.
_ASKED_BY = re.compile(r"\bhow\s+(?:much|many|long|often|far|soon)\b", re.I)


def _with_antecedents(pieces: list[str]) -> list[QuestionPart]:
    """Parts; one that names little of its own and points back ("how long will it
    last") is read with the part before it, so it is scored against what "it" is,
    and keeps its own kind of answer (a duration)."""
    out: list[QuestionPart] = []
    for n, piece in enumerate(pieces):
        kind = answer_type(piece)
        named = content_terms(_ASKED_BY.sub(" ", piece))
        if n and (_POINTS_BACK.search(piece) or (_ANAPHOR.search(piece) and len(named) <= 2)):
            piece = f"{pieces[n - 1]}: {piece}"
        out.append(QuestionPart(piece, kind))
    return out


_HOW_MANY = re.compile(r"\bhow many\s+((?:[a-z][\w-]*\s+){0,2}[a-z][\w-]*)", re.I)
_NOT_NOUN = frozenset((
    "can", "do", "does", "did", "is", "are", "was", "were", "will", "would", "should", "may",
    "might", "must", "have", "has", "i", "you", "we", "they", "he", "she", "it", "come", "comes",
    "get", "gets", "there",
))  # fmt: skip


def counted(question: str) -> str | None:
    """The thing a "how many" question counts: "how many recovery codes come with
    2SV" counts "codes", "how many times are webhooks retried" counts "times"."""
    m = _HOW_MANY.search(question)
    if m is None:
        return None
    nouns: list[str] = []
    for word in m.group(1).lower().split():
        if word in _NOT_NOUN:
            break
        nouns.append(word)
    return nouns[-1] if nouns else None


def formatted(question: str) -> str | None:
    """The reference whose form a question asks for, with the word that says which:
    "What does a Galloway booking number look like?" asks about "booking number".
    The form is the first rule of ``answer_type``: a question this reads one of is
    asking for ``AnswerType.FORMAT``."""
    for pattern in _FORMAT_ASKED:
        if m := pattern.search(question):
            return f"{m.group(1) or ''}{m.group(2)}".strip()
    return None


def holds(text: str, kind: AnswerType) -> bool:
    """Whether ``text`` contains a value of the kind asked for."""
    if kind is AnswerType.ANY or kind is AnswerType.NAME:
        return True
    if kind is AnswerType.TIME and _VALUE_PATTERNS[AnswerType.DURATION].search(text):
        # "When does check-in close?" is answered by a time of day as often as by
        # an offset: "40 minutes before departure".
        return True
    pattern = _VALUE_PATTERNS[kind]
    if kind is AnswerType.PHONE:
        return any(_phone_like(m.group(0)) for m in pattern.finditer(text))
    return bool(pattern.search(text))


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _phone_like(found: str) -> bool:
    if found[-1].isalpha():
        return True  # a vanity number
    if found.isdigit() and len(found) < 10:
        # Pages write a phone number with its separators ("1-800-555-0142", "0808 157
        # 0236"); a bare run of seven to nine digits is an ID ("NCPDP ID 3955012") or
        # a routing number.
        return False
    return sum(c.isdigit() for c in found) >= 7 and not _ISO_DATE.search(found)


# A question after a limit ("the longest", "up to how many", "how early can"), and
# the words a page states one with ("up to 300 pages", "at most 8", "from 1 to 168
# hours"): of two sentences about the same thing, the one stating the limit answers.
_ASKS_BOUND = re.compile(
    r"\b(?:max(?:imum)?|min(?:imum)?|longest|shortest|largest|biggest|smallest|highest|"
    r"lowest|heaviest|lightest|most|fewest|limits?|cap|up to|at most|at least|"
    r"how (?:long|many|much|big|large|"
    r"early|late|far|old)\b.*\bcan|deadline|by when|"
    # "How long do I have to claim?" asks for the time limit, not how long it takes.
    r"how (?:long|much time) (?:do|does|will|would) \w+ have to (?!be\b)|how long have \w+ got)\b",
    re.I,
)
_STATES_BOUND = re.compile(
    r"\b(?:up to|at most|at least|max(?:imum)?|min(?:imum)?|no (?:more|fewer|less|later|"
    r"earlier) than|or (?:fewer|less|more|later|newer|higher|above)|limit(?:ed)? (?:to|of|is)|"
    r"(?:cannot|can['\u2019]t|must not|may not) exceed|as (?:many|much|long) as|capped at|"
    r"time limit|deadline)\b|\bfrom \d[\d,.]* to \d|"
    r"\bbetween \d[\d,.]* and \d",
    re.I,
)


def asks_bound(question: str) -> bool:
    """Whether the question asks for a limit (a maximum, minimum or range)."""
    return bool(_ASKS_BOUND.search(question))


def states_bound(text: str) -> bool:
    """Whether the text states a limit of something ("up to 300 pages")."""
    return bool(_STATES_BOUND.search(text))
