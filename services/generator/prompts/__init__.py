"""The versioned prompt contract: templates in files, passages enclosed as data.

The system message holds the policy; the user message holds the passages, each
inside ``<passage-NONCE id="n" …>`` tags, and then the question. Retrieved text never
reaches the system message. The boundary cannot be forged: NONCE is random per
request (``{nonce}`` in the template), so no document can write the tag that closes
its block or opens another. As defence in depth, before a passage is enclosed any
tag-like text that could read as a boundary or a role (``</passage>``,
``< /passage>``, ``<system>``, in any spacing) is defused, the refusal marker and
the nonce are removed, and sentences that address the model with instructions are
replaced (``services.generator.injection``).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from services.generator.backends.base import Passage
from services.generator.injection import redact_instructions

PROMPTS_DIR = Path(__file__).resolve().parent
DEFAULT_PROMPT = PROMPTS_DIR / "grounded-answer.yaml"
# "<" opening a reserved tag, whatever spacing, slashes or invisible characters come
# between it and the name ("< /passage>", "<\n/ passage>", "<\u200b/system>").
_TAG = re.compile(
    r"<(?=[\s/\u200b-\u200d\u2060\ufeff]*(?:passages?|system|user|assistant|instructions?|question)\b)",
    re.I,
)
_REQUIRED = ("name", "version", "refusal_marker", "system", "passage", "user")


class PromptError(ValueError):
    """A prompt template file that cannot be used."""


@dataclass(frozen=True, slots=True)
class RenderedPrompt:
    messages: list[dict[str, str]]
    # Passage numbers whose text lost a sentence that addressed the model.
    redacted: dict[int, int]
    # The request's boundary code: the tags that enclose the passages carry it.
    nonce: str = ""


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    name: str
    version: str  # "<name>-v<n>+<sha256 prefix>": what every run record stores
    refusal_marker: str
    system: str
    passage: str
    user: str

    @classmethod
    def load(cls, path: Path = DEFAULT_PROMPT) -> PromptTemplate:
        try:
            raw = path.read_bytes()
            data: Any = yaml.safe_load(raw)
        except (OSError, yaml.YAMLError) as exc:
            raise PromptError(f"cannot read prompt template {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise PromptError(f"prompt template {path} is not a mapping")
        missing = [k for k in _REQUIRED if not data.get(k)]
        if missing:
            raise PromptError(f"prompt template {path} lacks {', '.join(missing)}")
        marker = str(data["refusal_marker"])
        if not re.fullmatch(r"[A-Z][A-Z0-9_]{5,}", marker):
            raise PromptError(
                f"refusal_marker {marker!r} in {path} must be an upper-case token "
                "(letters, digits, _; at least 6 characters)"
            )
        digest = hashlib.sha256(raw).hexdigest()[:8]
        return cls(
            name=str(data["name"]),
            version=f"{data['name']}-v{data['version']}+{digest}",
            refusal_marker=marker,
            system=str(data["system"]),
            passage=str(data["passage"]),
            user=str(data["user"]),
        )

    def render(
        self, question: str, passages: Sequence[Passage], max_sentences: int
    ) -> RenderedPrompt:
        blocks: list[str] = []
        redacted: dict[int, int] = {}
        nonce = secrets.token_hex(8)  # 64 random bits per request, never stored
        for p in passages:
            text, removed = redact_instructions(p.text)
            if removed:
                redacted[p.number] = removed
            blocks.append(
                self.passage.format(
                    nonce=nonce,
                    number=p.number,
                    title=self._attribute(p.title, nonce),
                    section=self._attribute(p.section, nonce),
                    text=self._data(text, nonce),
                ).strip()
            )
        system = self.system.format(
            refusal_marker=self.refusal_marker, max_sentences=max_sentences, nonce=nonce
        ).strip()
        user = self.user.format(
            nonce=nonce, passages="\n".join(blocks), question=self._data(question, nonce)
        ).strip()
        return RenderedPrompt(
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            redacted=redacted,
            nonce=nonce,
        )

    def _data(self, text: str, nonce: str) -> str:
        """Text that stays data: no tag can close the block, no marker can fake a refusal."""
        text = text.replace(self.refusal_marker, "[marker removed]").replace(nonce, "")
        return _TAG.sub("&lt;", text)

    def _attribute(self, text: str, nonce: str) -> str:
        return self._data(text, nonce).replace('"', "'").replace("\n", " ")
