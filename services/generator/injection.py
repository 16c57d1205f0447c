"""Remove sentences of retrieved text that address the model with instructions.

Retrieved passages are data. The prompt says so, but a small model follows
whatever imperative it reads last, so sentences that talk to the model
("ignore the previous instructions…", "if you are an AI…", role tags) are
replaced by a placeholder before the passage is shown to it. The patterns aim
at text addressed to an AI; ordinary documentation ("the server responds with
429") is left alone, and a test checks that the demo knowledge base loses
nothing. Phrasings outside these patterns still meet the output checks: every
sentence must cite a passage and every number must appear in one.
"""

from __future__ import annotations

import re

PLACEHOLDER = "[instruction removed]"

_PATTERNS = [
    # "ignore / disregard / forget … previous instructions / the rules / the prompt"
    # (a line break inside the phrase does not end it: "ignore\nprevious instructions")
    r"\b(?:ignore|disregard|forget|override|bypass)\b[^.!?]{0,60}?"
    r"\b(?:instructions?|rules|prompts?|guidelines|polic(?:y|ies)|directives?)\b",
    # "disregard everything above", "forget what you were told", "ignore the text before this"
    r"\b(?:ignore|disregard|forget)\s+(?:all\s+|everything\s+|anything\s+|whatever\s+|what\s+)?"
    r"(?:(?:you\s+(?:were|have\s+been)\s+told)|(?:(?:that\s+|what\s+)?(?:is|was|came|comes)\s+)?"
    r"(?:above|before|previously|earlier|prior)|(?:the\s+)?(?:above|previous|preceding|prior|earlier)"
    r"\s+(?:text|content|context|messages?|passages?|sentences?|lines?))\b",
    # text that addresses the reader as a model
    r"\b(?:if|when|as|since)\s+you\s+are\s+(?:an?\s+|the\s+)?"
    r"(?:ai|assistant|chatbot|bot|language\s+model|llm|model)\b",
    r"\bas\s+an?\s+(?:ai|assistant|chatbot|language\s+model|llm)\b",
    r"\b(?:you\s+are\s+now|from\s+now\s+on,?\s+you|pretend\s+(?:to\s+be|you\s+are)|act\s+as\s+(?:an?\s+)?(?:ai|assistant|system))\b",
    r"\b(?:system\s+prompt|developer\s+message|new\s+instructions?|hidden\s+instructions?)\b",
    r"\bdo\s+not\s+(?:cite|mention\s+the\s+(?:passages?|sources?))\b",
    # role or data-block tags, and chat-template control tokens
    r"</?\s*(?:system|assistant|user|passages?|instructions?)\s*>",
    r"<\|[a-z_]+\|>|\[/?INST\]",
]
_INSTRUCTION = re.compile("|".join(f"(?:{p})" for p in _PATTERNS), re.I)
# A sentence ends at a terminator followed by a space (not the dot of "evil.example").
_SENTENCE = re.compile(r"[^\n]*?(?:[.!?]+(?=\s|$)|\n|$)")


def redact_instructions(text: str) -> tuple[str, int]:
    """``text`` with each sentence that addresses the model replaced; and how many were.

    Matched over the whole text, so a phrase split across lines removes every
    sentence (line) it touches.
    """
    hits = [m.span() for m in _INSTRUCTION.finditer(text)]
    if not hits:
        return text, 0
    out: list[str] = []
    removed = 0
    for m in _SENTENCE.finditer(text):
        sentence = m.group(0)
        start, end = m.span()
        if sentence and any(a < end and start < b for a, b in hits):
            removed += 1
            tail = "\n" if sentence.endswith("\n") else ""
            lead = sentence[: len(sentence) - len(sentence.lstrip())]
            out.append(f"{lead}{PLACEHOLDER}{tail}")
        else:
            out.append(sentence)
    return "".join(out), removed
