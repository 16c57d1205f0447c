"""Standalone queries for follow-up questions: deterministic rules over the earlier turns.

A chat user asks "and for the mobile app?" after "How do I clear the cache on the
desktop client?". Searched alone, the follow-up retrieves nothing useful; rewritten
into "How do I clear the cache on the mobile app?" it finds what the user means.

The rules below rewrite from the previous turn's standalone query only, and every
word of a rewrite comes from the user's own turns (the previous query, itself built
from the user's words, and the follow-up): a rewrite never adds a fact the user
did not give. In order:

- ``correction``  "no, I meant the desktop client": the previous query with the
  entity of the same kind replaced (or the correction appended).
- ``contrast``    "what about Business?", "and on Starter?", "same for guests?":
  the previous query with the entity of the same kind replaced by the new one.
  A phrase of no known kind without a preposition ("what about the audit log?")
  replaces the previous query's subject instead.
- ``ellipsis``    the same forms when the previous query has no entity of that
  kind: the new qualifier is appended to the previous query.
- ``pronoun``     "is it included?", "how long does that take?": the pronoun is
  replaced by the previous query's subject, and the previous qualifiers (plan,
  platform, role) are carried when the follow-up names none of that kind.
- ``standalone``  anything else (a question with its own subject, a topic
  change, also after "and": "and how many co-hosts can I assign?") passes
  through untouched; so does the first turn (``first``).

An entity keeps the word that said what it was ("iOS version" -> "Android
version"), and a subject ends at a preposition ("a stream after a disconnect").

An LLM rewriter can sit behind the same ``Rewriter`` protocol; this one needs no model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Rewrite:
    """The query to search and answer with, and the rule that produced it."""

    question: str  # what the user typed, kept for display
    query: str  # standalone: what the retriever and the generator get
    rule: str

    @property
    def rewritten(self) -> bool:
        return self.query != self.question


class Rewriter(Protocol):
    def rewrite(self, question: str, previous: Sequence[str]) -> Rewrite:
        """``previous``: the earlier turns' standalone queries, oldest first."""
        ...


# Entities of one kind replace each other ("what about Business?" after a Starter
# question). Kept to the kinds help centres are organised by; longest first, so
# "desktop client" wins over "desktop".
_KINDS: dict[str, tuple[str, ...]] = {
    "plan": (
        "free plan",
        "free tier",
        "starter",
        "business",
        "enterprise",
        "pro",
        "free",
        "trial",
        "basic",
        "team",
        "premium",
    ),
    "platform": (
        "desktop client",
        "desktop app",
        "mobile app",
        "web client",
        "web app",
        "web portal",
        "browser",
        "iphone",
        "ipad",
        "ios",
        "android",
        "windows",
        "macos",
        "mac",
        "linux",
        "phone",
        "desktop",
        "mobile",
        "web",
        "safari",
        "firefox",
        "chrome",
        "edge",
    ),
    "role": (
        "primary owner",
        "owners",
        "owner",
        "admins",
        "admin",
        "members",
        "member",
        "guests",
        "guest",
        "hosts",
        "host",
        "co-hosts",
        "co-host",
        "attendees",
        "participants",
    ),
    "period": ("monthly", "annually", "annual", "yearly", "month", "year"),
    "priority": ("p1", "p2", "p3", "p4", "sev1", "sev2", "sev3"),
}

_ENTITY = re.compile(
    r"\b(?:the\s+)?("
    + "|".join(
        re.escape(term)
        for term in sorted({t for terms in _KINDS.values() for t in terms}, key=len, reverse=True)
    )
    + r")\b(?:\s+(?P<noun>plan|tier|app|client|version|role|accounts?|users?))?",
    re.I,
)
_KIND_OF = {term: kind for kind, terms in _KINDS.items() for term in terms}

_CORRECTION = re.compile(
    r"^\s*(?:no|nope|sorry|oops|actually|wait)\b[\s,.!-]*"
    r"(?:(?:i|I)\s+(?:meant|mean|was asking about|am asking about)|rather|instead)\s+"
    r"(?P<rest>.+?)\s*[?.!]*\s*$",
    re.I,
)
_PREP = r"for|on|in|with|at|under|using|via|from|to|by"
# "what about X", "how about X", "and X", "and for/on/in X", "same for X", "for X?"
_CONTRAST = re.compile(
    r"^\s*(?:(?:and\s+)?(?:what|how)\s+about|and(?:\s+(?:what|how)\s+about)?|"
    r"(?:is\s+it\s+|and\s+)?the\s+same|also)\s+"
    rf"(?:(?P<prep>{_PREP})\s+)?(?P<rest>.+?)\s*[?.!]*\s*$",
    re.I,
)
_BARE_QUALIFIER = re.compile(rf"^\s*(?P<prep>{_PREP})\s+(?P<rest>.+?)\s*[?.!]*\s*$", re.I)
# "and how many co-hosts can I assign?": after "and", a question of its own, not a qualifier.
_QUESTION_START = re.compile(
    r"^(?:how|what|which|who|whom|whose|when|where|why|can|could|is|are|was|were|do|does|"
    r"did|will|would|should|may|might|must|has|have|had)\b",
    re.I,
)
_PRONOUN = re.compile(r"\b(it|that|this|they|them|those|these|its|their|one)\b", re.I)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'._-]*")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that say nothing about a subject: question frames, pronouns, auxiliaries.
_STOP = _words(
    """
    a an the and or but if of to in on at for with by from as about into over under via
    using is are was were be been being do does did can could should would will shall may
    might must have has had i me my we our us you your he she it its they them their this
    that these those what which who whom whose when where why how many much long often there
    here than then so not no yes any some all each every also just still same again more
    most very too please get got make made one ones thing things else too way
    what's how's where's who's it's that's there's i'm
    """
)
# Prepositions end a subject: "resume a stream after a disconnect" -> "stream", not
# "stream after"; inside one they stay ("price per seat").
_PREPOSITIONS = _words(
    "after before during between without within through across against since until per "
    "from like near beyond toward towards"
)
# Verbs a subject does not include ("deleted files stay in the trash" -> "deleted files").
_VERBS = _words(
    """
    stay stays available included include includes allowed allow supported support supports
    need needs use used set take takes last lasts keep keeps kept come comes cost costs work
    works go goes happen happens turn enable enabled change changed find see send sent
    expire expires expired become becomes remain remains cover covers count counts
    store stores stored
    """
)
# Follow-ups at most this many own content words (besides entities) lean on the
# previous turn; with more, a question with a pronoun is taken to stand alone.
_MAX_OWN_WORDS_FOR_PRONOUN = 4


@dataclass(frozen=True, slots=True)
class _Entity:
    kind: str
    start: int
    end: int
    text: str
    noun: str | None  # the word after it that says what it is: "plan", "version", "app"


def entities(text: str) -> list[_Entity]:
    """The known entities in ``text`` (plan, platform, role ...), in order."""
    return [
        _Entity(_KIND_OF[m.group(1).lower()], m.start(), m.end(), m.group(0), m.group("noun"))
        for m in _ENTITY.finditer(text)
    ]


def content_words(text: str) -> list[str]:
    return [w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in _STOP]


class RuleRewriter:
    """The deterministic rewriter (module docstring)."""

    def rewrite(self, question: str, previous: Sequence[str]) -> Rewrite:
        question = question.strip()
        if not previous:
            return Rewrite(question, question, "first")
        last = previous[-1].strip()
        correction = _CORRECTION.match(question)
        if correction:
            return self._qualify(question, last, correction.group("rest"), None, "correction")
        contrast = _CONTRAST.match(question) or _BARE_QUALIFIER.match(question)
        if contrast and contrast.group("prep") is None and _QUESTION_START.match(contrast["rest"]):
            # "and how many co-hosts can I assign?" asks anew; "and is it the same on
            # Business?" is still a contrast, of the question after "and".
            contrast = _CONTRAST.match(contrast["rest"])
        if contrast:
            rest = contrast.group("rest")
            if not _own_subject(rest):
                return self._qualify(question, last, rest, contrast.group("prep"), "contrast")
        if _PRONOUN.search(question) and _leans_on_previous(question):
            return self._resolve(question, last)
        return Rewrite(question, question, "standalone")

    @staticmethod
    def _qualify(question: str, last: str, new: str, prep: str | None, rule: str) -> Rewrite:
        """The previous query with ``new`` in place of the entity of its kind, or added."""
        new = re.sub(r"^(?:the|a|an)\s+", "", new.strip(), flags=re.I).rstrip("?.! ")
        found = entities(new)
        if found:
            kinds = {e.kind for e in found}
            replaced = last
            done: set[str] = set()
            # Right to left, so earlier offsets stay valid.
            for old in reversed(entities(last)):
                if old.kind in kinds:
                    same = next(e for e in found if e.kind == old.kind)
                    lead = "the " if old.text.lower().startswith("the ") else ""
                    # "Which iOS version ..." + "and for Android?" -> "Which Android version".
                    noun = f" {old.noun}" if old.noun and not same.noun else ""
                    text = lead + same.text + noun
                    replaced = replaced[: old.start] + text + replaced[old.end :]
                    done.add(old.kind)
            if done == kinds:
                return Rewrite(question, replaced, rule)
            last = replaced
        subject = _subject(last)
        if not found and prep is None and rule == "contrast" and subject:
            # "what about the audit log?": the same question, about another subject.
            return Rewrite(question, last.replace(subject, new, 1), rule)
        # Nothing of that kind to replace: the new qualifier is added to the query.
        body = last.rstrip("?.! ")
        joiner = prep or ("on" if found and found[0].kind == "platform" else "for")
        target = new
        if found and found[0].kind == "platform" and " " in found[0].text.strip():
            target = f"the {new}"  # "on the mobile app", but "on Android"
        rule_name = "ellipsis" if rule == "contrast" else rule
        return Rewrite(question, f"{body} {joiner} {target}?", rule_name)

    @staticmethod
    def _resolve(question: str, last: str) -> Rewrite:
        """Replace the first pronoun with the previous query's subject; carry qualifiers."""
        subject = _subject(last)
        if not subject:
            return Rewrite(question, question, "standalone")
        query = _PRONOUN.sub(
            lambda m: subject if m.group(1).lower() not in ("its", "their") else f"{subject}'s",
            question,
            count=1,
        )
        own_kinds = {e.kind for e in entities(question)}
        subject_lower = subject.lower()
        carried = [
            e.text
            for e in entities(last)
            if e.kind not in own_kinds and e.text.lower() not in subject_lower
        ]
        if carried:
            query = f"{query.rstrip('?.! ')} ({', '.join(carried)})?"
        return Rewrite(question, query, "pronoun")


def _own_subject(rest: str) -> bool:
    """True when the text after "what about" is a new question of its own (a topic
    change), not a qualifier: more than three content words and no known entity."""
    return not entities(rest) and len(content_words(rest)) > 3


def _leans_on_previous(question: str) -> bool:
    own = [w for w in content_words(question) if w not in _KIND_OF]
    return len(own) <= _MAX_OWN_WORDS_FOR_PRONOUN


def _subject(query: str) -> str:
    """The previous query's subject: its longest run of consecutive content words
    that are not entities, e.g. "deleted files"; on a tie the later one, as the object
    of a question comes after its verb ("resume a stream" -> "stream")."""
    spans = {(e.start, e.end) for e in entities(query)}
    runs: list[list[str]] = [[]]
    for m in _WORD.finditer(query):
        word = m.group(0)
        in_entity = any(s <= m.start() < e for s, e in spans)
        if word.lower() in _STOP or word.lower() in _VERBS or in_entity:
            runs.append([])
        else:
            runs[-1].append(word)
    best: list[str] = []
    for run in runs:
        while run and run[-1].lower() in _PREPOSITIONS:
            run = run[:-1]
        while run and run[0].lower() in _PREPOSITIONS:
            run = run[1:]
        if run and len(run) >= len(best):
            best = run
    return " ".join(best)


def standalone_query(question: str, previous: Sequence[str]) -> Rewrite:
    """Rewrite with the default (rule) rewriter."""
    return RuleRewriter().rewrite(question, previous)
