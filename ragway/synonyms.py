"""Words a customer uses for what the pages call otherwise.

"On Enterprise, what's the longest we can keep stuff in the bin before it's wiped?"
meets a page about the trash period: the embedding reads "bin" as "trash", but the
evidence's term features (``missing``: no page says it; ``unsaid``: the answering page
does not) counted "bin" and "wiped" as the subject the pages lack, and the question
was refused. A question term is held where a page holds one of its synonyms here.

Kept to words that mean the same thing in any help centre. Words that name one
product's features apart ("upload" and "download", "plan" and "tier", "fee" and
"deposit") are no synonyms: a question about the one the pages lack must still be
refused. Synonyms only say a term is held; they add no coverage to a unit (tried:
it answered unanswerable questions with the nearest price).
"""

from __future__ import annotations

from ragway.text import stem

_GROUPS: tuple[tuple[str, ...], ...] = (
    ("trash", "bin", "recycle"),
    ("delete", "wipe", "erase", "purge", "remove"),
    ("storage", "space"),
    ("refund", "reimburse", "reimbursement"),
    ("computer", "desktop", "laptop"),
    ("buy", "purchase"),
    ("kid", "child", "children"),
    ("idle", "inactive"),
    ("ferry", "ship", "vessel", "boat"),
    # "call recording retention period" meets "How long we keep records".
    ("retention", "retain", "keep", "kept"),
    # "min/max password length" meets "must be 12 to 32 characters long".
    ("length", "long"),
    # "What's the fee if my payment bounces?" meets "If a payment is returned by your
    # bank, the returned payment fee is…", "Dishonoured payment".
    ("bounce", "dishonour", "dishonor", "return"),
    # Hours tables write the days short: "Sat: 7 am to 11 am" answers "on Saturdays".
    ("monday", "mon"),
    ("tuesday", "tue", "tues"),
    ("wednesday", "wed"),
    ("thursday", "thu", "thur", "thurs"),
    ("friday", "fri"),
    ("saturday", "sat"),
    ("sunday", "sun"),
)


def _table() -> dict[str, frozenset[str]]:
    table: dict[str, frozenset[str]] = {}
    for group in _GROUPS:
        stems = frozenset(stem(w) for w in group)
        for s in stems:
            table[s] = table.get(s, frozenset()) | (stems - {s})
    return table


_SAME_IDEA = _table()


def of(term: str) -> frozenset[str]:
    """The stems that say what the stemmed ``term`` says ("bin": "trash", "recycl")."""
    return _SAME_IDEA.get(term, frozenset())
