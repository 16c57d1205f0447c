"""What a question asks a member of staff may grant, and whether a page speaks of them.

"How much goodwill credit can a support agent give me?" asks about one actor's
discretion: what a support agent, a practice manager or a Tier 1 adviser may
refund, waive, credit or approve. Those limits live in staff handbooks, which a
customer's search does not see. The pages a customer does see meet such a
question closely ("You choose how to receive a refund: credits or your card"),
and the support of a loosely related unit is no answer to what the actor may
do: a page that never names the actor cannot say what the actor may grant.

The rule is narrow on purpose: the actor must be the one who grants (the
subject of "can … refund", "is … allowed to give", "… can waive"), so "Can an
agent help me change my booking?" or "I spoke to one of your agents" are not
such questions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The head nouns of staff roles; a qualifier before one ("support", "practice",
# "Tier 1", "Customer Care") narrows the role, and a page naming the head alone
# ("speak to a manager") may still say what the narrower role does.
_HEADS = (
    r"agent|manager|supervisor|team[\s-]leader|advis[eo]r|officer|staff|engineer"
    r"|representative|receptionist|clerk"
)
# What such a role grants at its discretion: money, a waiver, an exception. Not what
# any member of staff does for a customer ("put me through", "unlock my account",
# "issue a new card"), which a public page may well say without naming who does it.
_GRANTS = (
    r"give|refund|credit|waive|approve|authori[sz]e|write\s+(?:\w+\s+)?off|offer|raise"
    r"|knock|let\s+(?:\w+\s+)?off|grant|override|re-?apply|discount|comp"
)
_DETERMINER = r"(?:a|an|the|your|my|our|one|any)\s+"
# Up to four words naming the role, none of them an article: "the most a practice
# manager" names a practice manager.
_QUALIFIERS = r"(?:(?!(?:a|an|the)\b)[\w-]+\s+){0,4}?"
_ADVERB = r"(?:(?:still|just|actually|really|personally|also|only)\s+)?"
_ROLE = rf"(?P<role>{_QUALIFIERS}(?P<head>{_HEADS})s?)"
_GRANTING = (
    # "can a DishDash support agent refund", "will the manager let us off"
    re.compile(
        rf"\b(?:can|could|will|would|may|might)\s+{_DETERMINER}?{_ROLE}\s+{_ADVERB}(?:{_GRANTS})\b",
        re.IGNORECASE,
    ),
    # "is a support agent allowed to give", "a Tier 2 agent is allowed to approve"
    re.compile(
        rf"\b(?:is|are)\s+{_DETERMINER}?{_ROLE}\s+(?:allowed|able|permitted)\s+to\s+(?:{_GRANTS})\b",
        re.IGNORECASE,
    ),
    re.compile(
        rf"\b{_DETERMINER}{_ROLE}\s+(?:can|could|may|is\s+allowed\s+to|is\s+able\s+to)"
        rf"\s+{_ADVERB}(?:{_GRANTS})\b",
        re.IGNORECASE,
    ),
)


# Each head as a page may write it ("advisor" for "adviser", "team-leader"): the
# alternatives of ``_HEADS`` themselves.
_HEAD_SPELLINGS = tuple(re.compile(head) for head in _HEADS.split("|"))


@dataclass(frozen=True)
class Role:
    """A member of staff a question asks about: "support agent", its head "agent"."""

    phrase: str
    head: str

    def named_in(self, text: str) -> bool:
        """Whether ``text`` speaks of this kind of staff at all (the head noun, any
        spelling of "adviser", singular or plural)."""
        spelt = next(p.pattern for p in _HEAD_SPELLINGS if p.fullmatch(self.head))
        return re.search(rf"\b{spelt}s?\b", text, re.IGNORECASE) is not None


def granting_role(question: str) -> Role | None:
    """The member of staff whose discretion the question asks about, if any."""
    for pattern in _GRANTING:
        found = pattern.search(question)
        if found is not None:
            phrase = " ".join(found.group("role").split())
            head = " ".join(found.group("head").lower().split()).replace("-", " ")
            return Role(phrase=phrase, head=head)
    return None
