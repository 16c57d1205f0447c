"""Misspelt question words repaired from the evidence's own vocabulary.

A chat user types "which port does the retreiver lisen on?". The words that carry
the question ("retreiver", "lisen") are in no passage, so term coverage counts
them as the rarest terms of all and never covered, and the embedding model reads
them as unknown word pieces: the unit that answers ("The retriever listens on
port 7101") loses support to any unit sharing the correctly spelt words.

``repair`` replaces each such word with the passage word it is closest to, when
one is within one edit (two for words of seven letters or more), the same budget
that already lets a misspelt word count as present when the evidence is weighed.
It substitutes words the passages themselves use, so it cannot add a topic the
evidence does not have; only where no passage word is near does it take the one
English word a single slip away ("lenght" → "length"), which the embedding model
reads as the word meant instead of unknown word pieces. It leaves alone what is
not a misspelling: words the passages know, real English words they do not use
("longest" is not "largest" misspelt: a word that is a whole word of the embedding
model's vocabulary is taken as spelt on purpose), short words, numbers and
identifiers ("LM-7002" is another identifier, not "LM-6001" misspelt), and
capitalised words inside the question, which are names ("Premium", "Team"): a name
the pages do not know must stay unknown, so that the question is refused.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Container, Iterable

from ragway.embedding import default_tokenizer
from ragway.text import STOPWORDS, stem

_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-_.'][A-Za-z0-9]+)*")
_ALPHA = re.compile(r"^[a-z]+$")
# Shorter words are too often another real word one edit away ("pics", "pins").
MIN_LENGTH = 5

# What chat users type for a common word. No edit budget reaches these: "b4" holds
# a digit (so it read as an identifier no page has, and the question was refused
# with "does not cover “b4”"), "u" and "wat" are too short to repair, and "dont" is
# a term no passage writes. Only unambiguous ones: "n", "w" or "id" are left alone
# ("r", typed alone in lower case, is "are"). A word the passages themselves use
# ("hrs", "approx") is kept as it is.
SHORTHAND: dict[str, str] = {
    "b4": "before", "u": "you", "ur": "your", "pls": "please", "plz": "please",
    "thx": "thanks", "thnx": "thanks", "msg": "message", "msgs": "messages",
    "acct": "account", "accts": "accounts", "abt": "about", "cuz": "because",
    "coz": "because", "bcoz": "because", "tmrw": "tomorrow", "2moro": "tomorrow",
    "2day": "today", "wk": "week", "wks": "weeks", "yr": "year", "yrs": "years",
    "hr": "hour", "hrs": "hours", "mins": "minutes", "secs": "seconds",
    "mth": "month", "mths": "months", "pwd": "password", "ppl": "people",
    "approx": "approximately", "appt": "appointment", "appts": "appointments",
    "thru": "through", "wat": "what", "wats": "what's", "whats": "what's",
    "dont": "don't", "cant": "can't", "doesnt": "doesn't", "didnt": "didn't",
    "isnt": "isn't", "wasnt": "wasn't", "arent": "aren't", "havent": "haven't",
    "hasnt": "hasn't", "couldnt": "couldn't", "shouldnt": "shouldn't",
    "wouldnt": "wouldn't", "youre": "you're", "theyre": "they're", "im": "I'm",
    "ive": "I've",
    # Clipped words: "env var", "config", "repo", "admin", "info". One full word each.
    "env": "environment", "envs": "environments", "var": "variable", "vars": "variables",
    "config": "configuration", "configs": "configurations", "repo": "repository",
    "repos": "repositories", "admin": "administrator", "admins": "administrators",
    "info": "information", "notif": "notification", "notifs": "notifications",
    "prefs": "preferences", "dept": "department", "mgr": "manager", "addr": "address",
    "qty": "quantity", "amt": "amount", "pmt": "payment", "specs": "specifications",
    # Text speak: "wen do u txt me", "goin to florida nxt month", "use my fone there".
    "txt": "text", "txts": "texts", "txted": "texted", "wen": "when", "nxt": "next",
    "goin": "going", "fone": "phone", "fones": "phones", "evry": "every",
    "evrything": "everything", "wud": "would", "shud": "should", "cud": "could",
    "gonna": "going to", "wanna": "want to", "yday": "yesterday", "tmr": "tomorrow",
    "nite": "night", "2nite": "tonight", "pymt": "payment", "recd": "received",
    # "if some1 smokes in the bedroom", "dietitian visits r incl in plus", "kingsmere rd
    # tip": a digit made "some1" a name no page has, and "incl" and "rd" words none has.
    "some1": "someone", "sum1": "someone", "any1": "anyone", "every1": "everyone",
    "no1": "no one", "incl": "including", "rd": "road", "gr8": "great", "l8r": "later",
    "bc": "because", "tho": "though",
    # "how much r visitor permits", "hw much is gardn waste", "wots the fine", "how
    # far in advance cn u book": "how much r" read as a quantity, not as a price.
    "r": "are", "hw": "how", "hav": "have", "wot": "what", "wots": "what's",
    "cn": "can", "xtra": "extra", "tix": "tickets", "nites": "nights", "wont": "won't",
    "yous": "you",
}  # fmt: skip


def vocabulary(texts: Iterable[str]) -> dict[str, int]:
    """The lower-case words of the texts, with how often each occurs."""
    counts: dict[str, int] = {}
    for text in texts:
        for word, n in _text_vocabulary(text).items():
            counts[word] = counts.get(word, 0) + n
    return counts


# A search repairs a misspelt question from the words of its top candidates, and the
# same passages are candidates search after search: each passage's words and word pairs
# are read once (bounded), and a search merges them. Reading them again for every
# search was a third of the retriever's CPU under load (docs/performance.md).
_TEXTS_KEPT = 1024


@functools.lru_cache(maxsize=_TEXTS_KEPT)
def _text_vocabulary(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for word in _TOKEN.findall(text.lower()):
        if _ALPHA.match(word):
            counts[word] = counts.get(word, 0) + 1
    return counts


@functools.cache
def english_words() -> frozenset[str]:
    """The whole words of the embedding model's WordPiece vocabulary (~20,000 common
    English words): a question word among them is no misspelling."""
    with default_tokenizer().open(encoding="utf-8") as f:
        vocab: dict[str, int] = json.load(f)["model"]["vocab"]
    return frozenset(w for w in vocab if _ALPHA.match(w))


def compounds(texts: Iterable[str]) -> dict[str, str]:
    """Two words the texts write side by side, by how a user runs them together.

    "screen sharing" is found as "screensharing" and as "screenshare" (the first
    word and the second's stem): a chat user writes "screenshare", "timezone",
    "payslip" where the pages write two words.
    """
    out: dict[str, str] = {}
    for text in texts:
        for joined, pair in _text_compounds(text).items():
            out.setdefault(joined, pair)  # the first text that has it, as before
    return out


@functools.lru_cache(maxsize=_TEXTS_KEPT)
def _text_compounds(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    found = [w for token in _TOKEN.findall(text.lower()) for w in token.split("-")]
    for first, second in itertools.pairwise(found):
        if min(len(first), len(second)) < 3 or not _ALPHA.match(first + second):
            continue
        for joined in (first + second, first + stem(second)):
            out.setdefault(joined, f"{first} {second}")
    return out


def repair(
    question: str,
    known: dict[str, int],
    dictionary: Container[str] | None = None,
    joined: dict[str, str] | None = None,
) -> str:
    """The question with its misspelt words replaced by the closest known word.

    ``dictionary``: words that are spelt right even where no passage uses them
    (default: ``english_words()``). ``joined``: the passages' word pairs by how a
    user runs them together (``compounds``); a word the passages do not know that is
    one of them becomes the pair ("screenshare" → "screen sharing").
    """
    real = english_words() if dictionary is None else dictionary
    # Each known word's count and stem, gathered at the first suspect word (most
    # questions have none).
    forms: dict[str, tuple[int, str]] | None = None
    stems: frozenset[str] = frozenset()
    closest: dict[str, str | None] = {}  # a word repeated in the question is looked up once
    out: list[str] = []
    last = 0
    for m in _TOKEN.finditer(question):
        word = m.group(0)
        fixed = None
        if (short := _shorthand(word, m.start(), question)) is not None:
            fixed = None if _written(word.lower(), known) else short
        elif _suspect(word, m.start(), question, real):
            if word not in closest:
                if forms is None:
                    forms = {w: (count, stem(w)) for w, count in known.items()}
                    stems = frozenset(s for _, s in forms.values())
                closest[word] = _replacement(word.lower(), forms, stems, joined or {}, real)
            fixed = closest[word]
        out.append(question[last : m.start()])
        out.append(word if fixed is None else _same_case(word, fixed))
        last = m.end()
    out.append(question[last:])
    return "".join(out)


# What comes before a word that opens a sentence, a line, a list item or a cell, where
# its capital says nothing about the word ("Deleted files stay …").
_OPENING = re.compile(r"[.!?:|#*>\n-][\s\d.)]*$")
_NUMBERING = " \t\n0123456789.)"


def _opens(text: str, start: int) -> bool:
    """Whether the word at ``start`` opens a sentence, a line, an item or a cell."""
    before = text[max(0, start - 6) : start]
    return bool(_OPENING.search(before)) or (start <= 6 and not before.strip(_NUMBERING))


def shouted(question: str) -> bool:
    """Whether the question is typed in capitals ("HOW LONG ARE DELETED FILES KEPT")."""
    letters = [c for c in question if c.isascii() and c.isalpha()]
    return len(letters) >= 8 and sum(c.isupper() for c in letters) >= 0.8 * len(letters)


# A size written as two numbers and an "x" (or the multiplication sign, U+00D7): "12x12",
# "11 x 14".
_TIMES = "[xX\u00d7]"
_DIMENSIONS = re.compile(rf"(?<![\w.])(\d+(?:\.\d+)?)\s*{_TIMES}\s*(\d+(?:\.\d+)?)(?![\w.])")


def dimensions(question: str, texts: Iterable[str]) -> str:
    """The question's sizes written as the passages write the same two numbers: "What
    does a 12x12 metal print cost?" of a table keyed "12 x 12" asks of that row, where
    "12x12" was one word no passage has, read as a name the pages lack."""
    pages = tuple(texts)

    def as_written(m: re.Match[str]) -> str:
        same = re.compile(
            rf"(?<![\w.]){re.escape(m.group(1))}\s*{_TIMES}\s*{re.escape(m.group(2))}(?![\w.])"
        )
        return next((w.group(0) for t in pages if (w := same.search(t))), m.group(0))

    return _DIMENSIONS.sub(as_written, question)


def unshout(question: str, texts: Iterable[str]) -> str:
    """A question typed in capitals with its words cased as the passages write them.

    "HOW LONG ARE DELETED FILES KEPT ON BUSINESS" reads as a question of names:
    capitalised words inside a question are names ("Premium"), which the spelling
    repair leaves alone and the refusal counts as what the pages may not cover. Each
    word takes the form the passages write most ("Business", "SSO", "kept"); a word
    they do not write is lower case, unless it holds a digit ("HS-204", an
    identifier). A question not in capitals is returned as it is.
    """
    if not shouted(question):
        return question
    wanted = {m.group(0).lower() for m in _TOKEN.finditer(question)}
    forms: dict[str, dict[str, int]] = {}
    for text in texts:
        for m in _TOKEN.finditer(text):
            token, key = m.group(0), m.group(0).lower()
            if key not in wanted:
                continue
            if _opens(text, m.start()) and not (len(token) > 1 and token.isupper()):
                continue  # a capital that opens a sentence says nothing ("SSO" still does)
            seen = forms.setdefault(key, {})
            seen[token] = seen.get(token, 0) + 1

    def cased(m: re.Match[str]) -> str:
        word = m.group(0)
        seen = forms.get(word.lower())
        if seen:
            # The most written form; a tie goes to the lower-case one.
            return max(seen, key=lambda form: (seen[form], form.islower()))
        return word if any(c.isdigit() for c in word) else word.lower()

    return _TOKEN.sub(cased, question)


def suspects(question: str) -> bool:
    """Whether the question has a word ``repair`` might change: one that is no
    English word (cheap to ask before gathering a vocabulary to repair it from)."""
    real = english_words()
    return any(
        _shorthand(m.group(0), m.start(), question) is not None
        or _suspect(m.group(0), m.start(), question, real)
        for m in _TOKEN.finditer(question)
    )


def _written(word: str, known: Container[str]) -> bool:
    """Whether the passages write ``word`` themselves, also as its plural or singular
    ("admin" on a page of "Owners and Admins")."""
    forms = (word, f"{word}s", f"{word}es", word[:-1] if word.endswith("s") else word)
    return any(form in known for form in forms)


def _shorthand(word: str, start: int, question: str) -> str | None:
    """The word a chat shorthand stands for ("b4", "u", "pls", "dont"), else None.

    Typed in lower case (or capitalised as the question's first word): "UR" or a
    capitalised "Ur" inside a question is a name or a code, kept as written.
    """
    if not (word.islower() or (word == word.capitalize() and not question[:start].strip())):
        return None
    return SHORTHAND.get(word.lower())


def _suspect(word: str, start: int, question: str, real: Container[str]) -> bool:
    """Whether ``word`` (at ``start`` in ``question``) may be a misspelling."""
    lower = word.lower()
    if len(lower) < MIN_LENGTH or not _ALPHA.match(lower) or lower in STOPWORDS:
        return False
    if lower in real:
        return False
    # A capitalised word inside the question is a name, kept as the user wrote it.
    return not (word[0].isupper() and question[:start].strip() != "")


def _replacement(
    lower: str,
    forms: dict[str, tuple[int, str]],
    stems: frozenset[str],
    joined: dict[str, str],
    real: Container[str],
) -> str | None:
    """The passages' spelling of ``lower`` (else the one English word of ``real`` a
    slip away), or None when there is none.

    ``forms`` maps each known word to its count and stem; ``joined`` the word pairs by
    how a user runs them together.
    """
    if lower in forms:
        return None
    if (doubled := _with_doubling(lower)) is not None and doubled in forms:
        # "scaning" where the passages write "scanning": without this, "scans" made
        # it look like another form of a known word, and it was kept.
        return doubled
    if (whole := _one_letter_short_of(lower, forms)) is not None:
        # "monthy" beside the passages' "monthly": "month" with "y" looked like another
        # form of it, and the question kept a word nothing matches.
        return whole
    if any(_another_form(lower, c) for c in forms if c[:3] == lower[:3]):
        # "reuse" beside the passages' "reusing", "expiry" beside "expire": spelt
        # right, only outside the model's whole words. Rewritten, the question was
        # searched a second time for nothing and lost its own word.
        return None
    if (word_stem := stem(lower)) in stems:
        # "insurence" stems like the passages' "insurance": term coverage already
        # meets it, but the embedding model reads it as unknown word pieces. The
        # passages' commonest word of that stem is how they spell it.
        return max(
            (c for c, (_, s) in forms.items() if s == word_stem),
            key=lambda c: (forms[c][0], c),
        )
    # Words run together are tried before a one- or two-edit neighbour:
    # "screenshare" is "screen sharing" on a page that says so, not "screenshot".
    return (
        joined.get(lower)
        or joined.get(word_stem)
        or _nearest(lower, forms)
        or _one_slip_from(lower, real)
    )


# What English adds to a word to inflect or derive it. Not the endings a misspelling
# swaps for each other ("-ence" and "-ance", "-ent" and "-ant", "-ible" and "-able"):
# "insurence" is "insurance" misspelt, not another form of it.
_REGULAR_ENDINGS = frozenset(
    {
        "", "s", "es", "e", "ed", "d", "ing", "er", "ers", "or", "ors", "y", "ies", "ied",
        "ion", "ions", "ation", "ations", "ment", "ments", "ly", "al", "ally", "ity",
        "ive", "ness", "ize", "izes", "ized", "izing", "ization", "ise", "ises", "ised",
        "ising", "isation", "ure", "ures",
    }
)  # fmt: skip


# Endings before which a word doubles its last consonant: "cancelling", "stopped".
_DOUBLING_ENDINGS = frozenset({"ing", "ed", "er", "ers"})


def _one_letter_short_of(word: str, forms: dict[str, tuple[int, str]]) -> str | None:
    """The passages' commonest word that is ``word`` with one letter put back inside it
    ("monthy" → "monthly"), not at its end: "signup" is not "signups" misspelt."""
    found = [
        known
        for known in forms
        if len(known) == len(word) + 1
        and known[:-1] != word
        and any(known[:i] + known[i + 1 :] == word for i in range(len(known) - 1))
    ]
    return max(found, key=lambda known: (forms[known][0], known)) if found else None


def _another_form(word: str, known: str) -> bool:
    """Whether ``word`` and ``known`` differ only by regular English endings on a
    shared base: "reuse" and "reusing", "emailed" and "email", "expiry" and "expire",
    "cancelling" and "cancel". "busines" is not "business" less its plural: a word
    ending in "s" takes "es"."""
    shared = itertools.takewhile(lambda p: p[0] == p[1], zip(word, known, strict=False))
    base = word[: sum(1 for _ in shared)]
    if len(base) < 4:
        return False
    return _regular_ending(base, word[len(base) :]) and _regular_ending(base, known[len(base) :])


def _with_doubling(word: str) -> str | None:
    """The word with the consonant before its ending doubled ("scaning" → "scanning"),
    or None when it has no ending that doubles one (no word ends in two of them)."""
    for ending in _DOUBLING_ENDINGS:
        base = word[: -len(ending)]
        if word.endswith(ending) and len(base) >= 3 and base[-1] not in "aeiouwxy":
            return base + base[-1] + ending
    return None


def _regular_ending(base: str, ending: str) -> bool:
    if ending == "s" and base.endswith(("s", "x", "z")):
        return False
    if ending in _REGULAR_ENDINGS:
        return True
    return ending[:1] == base[-1] and ending[1:] in _DOUBLING_ENDINGS


def _nearest(lower: str, forms: dict[str, tuple[int, str]]) -> str | None:
    """The known word within the edit budget of ``lower``, if any."""
    budget = 1 if len(lower) < 7 else 2
    best: tuple[int, int, str] | None = None
    for candidate, (count, candidate_stem) in forms.items():
        if len(candidate) < MIN_LENGTH or abs(len(candidate) - len(lower)) > budget + 2:
            continue
        # Against the word and its stem: "lisen" is one edit from "listen", the stem
        # of the passage's "listens".
        distances = [
            d
            for form in {candidate, candidate_stem}
            if abs(len(form) - len(lower)) <= budget
            and (d := edit_distance(lower, form, budget)) is not None
        ]
        if not distances:
            continue
        # The nearest; among equally near words, the one the passages use most.
        key = (min(distances), -count, candidate)
        if best is None or key < best:
            best = key
    return None if best is None else best[2]


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _one_slip_from(lower: str, real: Container[str]) -> str | None:
    """The one English word a slip of the keyboard away from ``lower``, if only one is.

    For a misspelt word no passage spells: "lenght" where the pages say "12 to 32
    characters long" was no word the embedding model knows, so the question read as
    "min/max password [unknown]". One slip is two neighbours swapped ("lenght" →
    "length", "defualt" → "default") or a letter left out ("certifcate"). A letter
    changed or added is not taken for one: a word spelt right but outside the model's
    whole words is too often one such edit from another word ("fallback" from
    "fullback", "balancer" from "balanced"). Where two English words are one slip
    away, which one was meant is not known and the word is kept.
    A name no page knows stays unknown: few are one slip from an English word, and
    an English word with a letter before or after it ("tallyo", "kinetica") is no
    slip of that word, since a letter added is not one.
    """
    if len(lower) < MIN_LENGTH + 1:
        return None
    splits = [(lower[:i], lower[i:]) for i in range(len(lower) + 1)]
    slips = {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    slips |= {a + c + b for a, b in splits for c in _LETTERS}
    # Every slip is as long as the word or longer, so at least MIN_LENGTH + 1.
    found = {w for w in slips if w in real}
    return found.pop() if len(found) == 1 else None


def _same_case(original: str, fixed: str) -> str:
    return fixed.capitalize() if original[:1].isupper() else fixed


def edit_distance(a: str, b: str, budget: int, *, swaps: bool = True) -> int | None:
    """The edit distance of ``a`` and ``b`` when at most ``budget``, else None.

    With ``swaps``, two swapped neighbours count as one edit ("bulit", "built"), the
    commonest slip of a typist (optimal string alignment); without, two (Levenshtein).
    The programme stops as soon as every cell of a row is over the budget.
    """
    before: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if swaps and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > budget:
            return None
        before, previous = previous, current
    return previous[-1] if previous[-1] <= budget else None
