"""Acronyms in a question spelt out as the evidence spells them.

A user asks "Is SSO on the Team plan?" of a page that says "Single sign-on is
available on the Scale plan." The page never writes "SSO", so term coverage
counts the question's main word as absent from every passage, the refusal
decision reads it as a subject the knowledge base does not cover, and the
embedding model sees three letters instead of the idea.

``expand`` replaces an acronym (two to six capitals, "SSO", "MFA", "SLAs") that
no passage contains by the words the passages themselves use for it: a run of
consecutive words whose initials spell it, hyphenated words read as their parts
("sign-on" is "sign" and "on"). Runs of initials are common by chance ("all
plans include" spells API), so a run counts only when none of its words is a
function word and the embedding model reads it close to the acronym (cosine at
least ``MIN_SIMILARITY``: "SSO" and "single sign on" 0.36, "API" and "add plan
items" far less); of several, the closest wins. An acronym the passages also
write as such, or cannot spell out, is left as it is, so a product or plan name
the evidence does not know stays unknown.

``abbreviate`` goes the other way: a name the question spells out that the
passages only abbreviate, as a table's column headings do ("How much is Plus in
Victoria?" of a prices table headed "NSW & ACT | VIC | QLD"), is written as the
passages write it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet

from ragway.text import STOPWORDS, words

_ACRONYM = re.compile(r"\b([A-Z]{2,6})(s?)\b")
_TOKEN = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")
# How close (cosine) the embedding model must read an acronym and its spelling out.
MIN_SIMILARITY = 0.2
# The cosines of a text and each of several others.
Similarity = Callable[[str, Sequence[str]], Sequence[float]]


# Names help centres give one idea under several spellings, none the initials of the
# others: "2FA" for a page about "two-step verification". Longest first, so "2-step
# verification" is matched before "2-step".
_SAME_IDEA: tuple[tuple[str, ...], ...] = (
    (
        "two-factor authentication",
        "two-step verification",
        "2-step verification",
        "two-step authentication",
        "2-step authentication",
        "multi-factor authentication",
        "two-factor",
        "two-step",
        "2-step",
        "2FA",
        "2SV",
        "MFA",
        "TFA",
    ),
    # A card network and a phone by the names customers use: "Amex card surcharge" of a
    # page that says "American Express", "on my iPhone" of steps for iOS.
    ("American Express", "Amex"),
    ("iOS", "iPhone"),
    # A language by its English name and by its own, as a bilingual company names its
    # lines and pages: "What number do I call for service in French?" of "Service en
    # français — 1-888-555-0150". Without it "French" is a name no passage knows.
    ("French", "français", "francais"),
    ("Spanish", "español", "espanol"),
    ("German", "Deutsch"),
    ("Italian", "italiano"),
    ("Portuguese", "português", "portugues"),
    ("Dutch", "Nederlands"),
    ("Polish", "polski"),
    ("Welsh", "Cymraeg"),
    ("Irish", "Gaeilge"),
    ("Swedish", "svenska"),
    ("Norwegian", "norsk"),
    ("Danish", "dansk"),
    ("Finnish", "suomi"),
    ("Czech", "čeština", "cestina"),
    ("Turkish", "Türkçe"),
    ("Chinese", "中文"),
    ("Japanese", "日本語"),
    ("Korean", "한국어"),
)


def _named(name: str) -> re.Pattern[str]:
    # A hyphen after the name joins it to a word it qualifies ("the French-language
    # line", "2FA-protected"): still the name.
    return re.compile(rf"(?<![\w-]){re.escape(name)}(?!\w)", re.I)


# Each name's pattern, compiled once: ``same_idea`` reads every question.
_SAME_IDEA_PATTERNS = tuple(tuple((n, _named(n)) for n in names) for names in _SAME_IDEA)


def same_idea(question: str, texts: Iterable[str]) -> str:
    """The question with a name of ``_SAME_IDEA`` that no passage writes replaced by
    the one the passages write ("Can admins force 2FA?" of a page that says
    "two-step verification"); unchanged when the passages write none of them."""
    for names, (written, present) in zip(
        _SAME_IDEA_PATTERNS, _written_names(tuple(texts)), strict=True
    ):
        if written is None:
            continue
        for name, pattern in names:
            if name not in present and pattern.search(question):
                question = pattern.sub(written, question)
    return question


@functools.lru_cache(maxsize=64)
def _written_names(texts: tuple[str, ...]) -> tuple[tuple[str | None, frozenset[str]], ...]:
    """For each group of ``_SAME_IDEA``, the first name the texts write (or None) and
    every name they write; read once per set of texts (the same passages answer
    question after question)."""
    corpus = " ".join(texts)
    folded = _folded(corpus)
    out = []
    for names in _SAME_IDEA_PATTERNS:
        # A name whose letters the texts do not hold in that order is not looked for
        # (each pattern scans the whole corpus).
        present = frozenset(
            n for n, pattern in names if n.lower() in folded and pattern.search(corpus)
        )
        out.append((next((n for n, _ in names if n in present), None), present))
    return tuple(out)


# The only characters beyond ASCII that an ASCII letter matches case-insensitively
# (Python's ``re.I``): dotted and dotless I, the Kelvin sign, the long s.
_NON_ASCII_CASES = (("\u0130", "i"), ("\u0131", "i"), ("\u212a", "k"), ("\u017f", "s"))


def _folded(text: str) -> str:
    """``text`` lower-cased so that wherever a ``_SAME_IDEA`` name (ASCII letters,
    digits, hyphens, spaces) matches it case-insensitively, the name's lower case is
    a substring."""
    for letter, ascii_letter in _NON_ASCII_CASES:
        text = text.replace(letter, ascii_letter)
    return text.lower()


def expand(question: str, texts: Iterable[str], similarity: Similarity) -> str:
    """The question with each acronym the passages do not write spelt out as they do."""
    found = [m for m in _ACRONYM.finditer(question) if m.group(1).lower() not in STOPWORDS]
    words = _TOKEN.findall(question)
    if not found or len(found) * 2 > len(words):
        # Mostly capitals is a question typed in capitals ("WHAT IS THE LIMIT"),
        # not one full of acronyms.
        return question
    corpus = list(texts)
    written = {m.group(1) for text in corpus for m in _ACRONYM.finditer(text)}
    words_of = [_words(text) for text in corpus]
    out: list[str] = []
    last = 0
    for m in found:
        acronym = m.group(1)
        if acronym in written:
            continue
        expansion = _expansion(acronym, words_of, similarity)
        if expansion is None:
            continue
        out.append(question[last : m.start()])
        out.append(expansion + ("s" if m.group(2) else ""))
        last = m.end()
    out.append(question[last:])
    return "".join(out)


def _words(text: str) -> list[tuple[str, bool]]:
    """The words of a text, lower-case, each with whether it is part of a hyphenated
    word: "sign-on" is "sign" and "on", whose initials spell the end of "SSO"."""
    out: list[tuple[str, bool]] = []
    for token in _TOKEN.findall(text):
        pieces = token.lower().split("-")
        out += [(p, len(pieces) > 1) for p in pieces if p]
    return out


def _expansion(
    acronym: str, words_of: list[list[tuple[str, bool]]], similarity: Similarity
) -> str | None:
    letters = acronym.lower()
    n = len(letters)
    runs: set[str] = set()
    for ws in words_of:
        for i in range(len(ws) - n + 1):
            run = ws[i : i + n]
            # A function word standing alone ("all plans include") makes a chance
            # run; inside a hyphenated word ("sign-on") it is part of a term.
            if all(w[0] == c for (w, _), c in zip(run, letters, strict=True)) and not any(
                w in STOPWORDS and not hyphenated for w, hyphenated in run
            ):
                runs.add(" ".join(w for w, _ in run))
    if not runs:
        return None
    candidates = sorted(runs)
    scores = similarity(acronym, candidates)
    best = max(range(len(candidates)), key=lambda i: scores[i])
    return candidates[best] if scores[best] >= MIN_SIMILARITY else None


# A name the passages write in capitals, as a heading abbreviates one: "VIC", "NZ".
_ABBREVIATION = re.compile(r"\b[A-Z]{2,5}\b")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")


def abbreviate(question: str, texts: Iterable[str]) -> str:
    """The question with each name the passages only abbreviate written as they do.

    A capitalised word of five letters or more that no passage writes becomes the
    passages' capitals it starts with ("Victoria" is "VIC", "Tasmania" "TAS") or,
    failing that, contracts to (three or more of its letters in order, its first and
    last among them: "Queensland" is "QLD"); two to four capitalised words in a row that
    no passage writes together become the passages' capitals they are the initials of
    ("New South Wales" is "NSW", "Western Australia" "WA"). Only where exactly one
    abbreviation fits, and never a function word ("AND", "NOT"), so a name the passages
    do not know stays unknown.
    """
    capitals, written, joined = _abbreviations(tuple(texts))
    if not capitals:
        return question
    out = question
    # Phrases first, longest first, so "New South Wales" is not read as "New" alone.
    for n in (4, 3, 2):
        out = _initials(out, n, capitals, joined)
    return _CAPITALISED.sub(lambda m: _prefixed(m.group(0), capitals, written), out)


@functools.lru_cache(maxsize=64)
def _abbreviations(corpus: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str], str]:
    """The texts' capitals (no function word), their words, and their words joined by
    spaces (empty when they write no capitals): read once per set of texts."""
    capitals = frozenset(
        m.group(0)
        for text in corpus
        for m in _ABBREVIATION.finditer(text)
        if m.group(0).lower() not in STOPWORDS
    )
    if not capitals:
        return capitals, frozenset(), ""
    written = frozenset(w for text in corpus for w in words(text))
    joined = " ".join(" ".join(words(text)) for text in corpus)
    return capitals, written, joined


def _initials(question: str, n: int, capitals: AbstractSet[str], joined: str) -> str:
    pattern = re.compile(r"\b" + r"\s+".join([r"[A-Z][a-z]+"] * n) + r"\b")

    def swap(m: re.Match[str]) -> str:
        phrase = m.group(0)
        initials = "".join(w[0] for w in phrase.split())
        if m.start() == 0 or initials not in capitals:
            return phrase
        if f" {' '.join(words(phrase))} " in f" {joined} ":
            return phrase  # the passages write it out themselves
        return initials

    return pattern.sub(swap, question)


def _prefixed(word: str, capitals: AbstractSet[str], written: AbstractSet[str]) -> str:
    if len(word) < 5 or word.lower() in written:
        return word
    upper = word.upper()
    fits = [c for c in capitals if len(c) >= 3 and upper.startswith(c)]
    if not fits:
        # A contraction keeps the word's first and last letters and some between, in
        # order: "Queensland" is "QLD", as Australian, Canadian and US pages write
        # their states and provinces in tables.
        fits = [c for c in capitals if len(c) >= 3 and _contracts(upper, c)]
    return fits[0] if len(fits) == 1 else word


def _contracts(word: str, capitals: str) -> bool:
    """Whether ``capitals`` is a contraction of ``word`` (both upper case)."""
    if capitals[0] != word[0] or capitals[-1] != word[-1]:
        return False
    rest = iter(word[1:-1])
    return all(letter in rest for letter in capitals[1:-1])
