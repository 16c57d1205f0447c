"""What the bot writes: the streaming preview, the final answer with numbered sources,
split to fit Telegram's message limit."""

from __future__ import annotations

import html
from typing import Any

from ragway.citations import unescape

# Telegram's limit on a message's text, counted after entity parsing; the HTML we send
# is measured before parsing, which is longer, so staying under it is always safe.
MESSAGE_LIMIT = 4096

WAITING = "Searching the knowledge base…"
UNAVAILABLE = "The knowledge service cannot be reached right now. Please try again in a minute."
NOT_ALLOWED = (
    "Sorry, this bot answers only the people its operators have added. "
    "If you should have access, ask them to add your Telegram user id: {user_id}."
)
NEW_CONVERSATION = "New conversation: your next question starts afresh."
FAILED = "I could not finish this answer ({code}). Please try again."


def preview(text: str) -> str:
    """The answer so far, as plain text that fits one message."""
    # "\\[5, 25, 50]" is a page's own bracket, escaped so it never reads as a citation.
    text = unescape(text).strip() or WAITING
    if len(text) <= MESSAGE_LIMIT:
        return text
    return text[: MESSAGE_LIMIT - 1] + "…"


def source_link(url: str, base_url: str) -> str | None:
    if url.startswith(("https://", "http://")):
        return url
    if base_url and url.startswith("/"):
        return base_url.rstrip("/") + url
    return None


def final_messages(answer: dict[str, Any], base_url: str = "") -> list[str]:
    """The answer (or the refusal and its reason), then its numbered sources, as HTML
    messages each within the limit."""
    blocks: list[str] = []
    if answer.get("refused"):
        reason = answer.get("refusal_detail") or answer.get("refusal_reason") or "no reason given"
        blocks.append("<b>I can't answer that from the knowledge base.</b>")
        blocks.extend(_pieces(f"Reason: {reason}"))
    blocks.extend(_pieces(unescape(str(answer.get("answer") or ""))))
    citations = answer.get("citations") or []
    if citations:
        blocks.append("\n<b>Sources</b>")
    for citation in citations:
        title = html.escape(str(citation.get("title") or citation.get("document_id") or "source"))
        url = source_link(str(citation.get("url") or ""), base_url)
        label = f'<a href="{html.escape(url, quote=True)}">{title}</a>' if url else title
        section = str(citation.get("section") or "")
        line = f"[{int(citation.get('number', 0))}] {label}"
        if section:
            line += f" — {html.escape(section)}"
        if not url and citation.get("url"):
            line += f" ({html.escape(str(citation['url']))})"
        blocks.append(line[:MESSAGE_LIMIT])
    return _pack([b for b in blocks if b.strip()])


def _pieces(text: str) -> list[str]:
    """Escaped pieces of ``text`` each within the limit, cut at a newline or space when one
    is near (escaping is per character, so escaping each piece equals escaping the whole)."""
    pieces: list[str] = []
    rest = text.strip()
    while rest:
        cut = len(rest)
        while len(html.escape(rest[:cut], quote=False)) > MESSAGE_LIMIT:
            cut = _cut_point(rest, min(cut - 1, MESSAGE_LIMIT))
        pieces.append(html.escape(rest[:cut].strip(), quote=False))
        rest = rest[cut:].strip()
    return pieces


def _cut_point(text: str, limit: int) -> int:
    for sep in ("\n", " "):
        at = text.rfind(sep, limit // 2, limit)
        if at > 0:
            return at
    return limit


def _pack(blocks: list[str]) -> list[str]:
    messages: list[str] = []
    current = ""
    for block in blocks:
        joined = f"{current}\n{block}" if current else block
        if len(joined) <= MESSAGE_LIMIT:
            current = joined
        else:
            messages.append(current)
            current = block
    if current:
        messages.append(current)
    return messages
