"""Citation markers in answer text, and page text that only looks like one.

An answer cites passage ``n`` of its context as ``[n]`` (or ``[n, m]``). Pages
have brackets of their own: ``"steps": [5, 25, 50]`` in a configuration example
reads exactly like a citation of passages 5, 25 and 50. So where an answer quotes
page text, a ``[`` that opens such a group is written ``\\[`` (the Markdown escape,
which renders as ``[``), and a marker is a bracket group with no backslash before
it. Every reader of answer text (the generator's checks, the gateway's canary
agreement, the evaluation) uses these patterns, so they never disagree on what an
answer cites.
"""

from __future__ import annotations

import re

# A citation marker: one or more passage numbers in brackets, not escaped.
MARKER = re.compile(r"(?<!\\)\[\s*(\d+(?:\s*,\s*\d+)*)\s*\]")
# The same group in page text: a "[" before digits, not escaped yet.
_LITERAL = re.compile(r"(?<!\\)\[(?=\s*\d+(?:\s*,\s*\d+)*\s*\])")
_ESCAPED = re.compile(r"\\\[")


def cited(text: str) -> list[int]:
    """The passage numbers ``text`` cites, in order of first citation."""
    found = (int(n) for m in MARKER.finditer(text) for n in m.group(1).split(","))
    return list(dict.fromkeys(found))


def without_markers(text: str, replacement: str = " ") -> str:
    """``text`` with its citation markers replaced."""
    return MARKER.sub(replacement, text)


def escape_literals(text: str) -> str:
    """Page text made safe to quote in an answer: ``[5, 25, 50]`` → ``\\[5, 25, 50]``."""
    return _LITERAL.sub(r"\\[", text)


def unescape(text: str) -> str:
    """Answer text as a person reads it: ``\\[5, 25, 50]`` → ``[5, 25, 50]``."""
    return _ESCAPED.sub("[", text)
