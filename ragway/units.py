"""Answer units: the pieces of a passage that can stand on their own as an answer.

A passage is a chunk of Markdown (ragway/chunking.py keeps tables as ``| a | b |``
rows, lists as ``- item`` lines, and paragraphs as their source lines, often
hard-wrapped). Splitting it into lines and sentences loses what makes a piece
mean something: a table row without its header is "| Business | $12 | 100 GB |",
a step without its lead-in is "Click Save.", half of a wrapped sentence is no
sentence at all. So the passage is read back into blocks first, and every unit
carries the context it needs:

- a **sentence** of a paragraph or a note (wrapped lines joined first);
- a **list item** with its lead-in (the sentence before the list, usually ending
  in ":") and, for a nested item, its parent item;
- a **table row** with its header cells and its row key (the first cell);
- a **code line** with its lead-in (commands, config keys).

``text`` is what an answer may quote: the unit's own words, Markdown emphasis and
link syntax removed, nothing added that is not in the passage. A row answer may
name only some of its cells (``row_text``), still only the row's own words.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

UnitKind = Literal["sentence", "item", "row", "code"]

# A pipe table's delimiter row. GFM needs only one hyphen a cell, so "|:-|-:|:-:|"
# (alignment written tersely) is one too; markdown-it reads such a table as a table.
_TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$")
# A line that starts with a bold label: "**Idle fee:** $0.40" or "**Idle fee**: $0.40".
_LABEL = re.compile(r"^(\*\*|__)[^*_\n]{1,80}?(?::\s*\1|\1\s*:)")
# Items: Markdown's markers, and the bullets of text pasted from a word processor or a
# ticketing tool ("• Email 48 hours before"), which are no Markdown but read as a list.
_LIST_ITEM = re.compile(r"^(\s*)([-*+•◦▪‣\u2013]|\d{1,3}[.)])\s+(.*)$")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
# A quote's ">" mark at a line's start (each line of a multi-line text).
QUOTE_MARK = re.compile(r"^\s*>\s?", re.M)
_FENCE = re.compile(r"^\s*(```+|~~~+)")
# The markers of a callout box, not its words: Docusaurus/VuePress ":::tip" … ":::",
# MkDocs '!!! warning "Heads up"' (its body indented under it), GitHub "> [!NOTE]".
_CALLOUT = re.compile(r"^\s*(?::{3,}\s*[\w-]*.*|(?:!!!|\?\?\?\+?)\s+[\w-]+(?:\s+\".*\")?)\s*$")
_ALERT = re.compile(r"\[!(?:NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]\s*", re.I)
# The same marker as the older GitHub style and many editors write it: a line of its
# own holding one bold word ("> **Warning**", "⚠️ **Note**"), which was read as the
# first word of the sentence under it ("Warning Clearing the cache deletes…").
_ALERT_LINE = re.compile(
    r"^\s*(?:>\s*)*(?:[^\w\s*]{1,3}\s*)?(\*\*|__)"
    r"(?:note|tip|important|warning|caution|info|danger|attention)\1:?\s*$",
    re.I,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[`*_A-Z0-9])")
# Abbreviations after which a period does not end a sentence.
# An initialism's periods ("the U.S. Postal Service", "U.K. mobiles") end nothing either.
_ABBREVIATION = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|approx|incl|excl|no|min|max|sec|ext|est|ca|cf|al"
    r"|Inc|Ltd|Co|Corp|Dr|Mr|Mrs|Ms|Prof|St|Mt|Jr|Sr)\.|(?:\b[A-Z]\.){2,})$"
)
# Abbreviations that are only one with the number after them: "Plan No. 3",
# "Fig. 2", "Jan. 15", "ext. 204" ("… the answer is No. Then …" still ends).
_NUMBERED = re.compile(
    r"\b(?:No|Nr|Fig|Vol|Art|Sec|Ext|Tel|pp?|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.$"
)
# A clock time's "a.m."/"p.m." before its time zone: "Orders placed before 2 p.m. PT
# ship the same day" is one sentence, and its answer keeps the zone, also written out:
# "If you ask before 5 p.m. Central Time on a business day" ("UK time", "Eastern
# Standard Time").
_CLOCK = re.compile(r"\b[ap]\.m\.$", re.IGNORECASE)
_ZONE = re.compile(
    r"[A-Z]{1,4}T\b|UTC\b|GMT\b|[A-Z]{2,5}[+-]\d|(?:[A-Z][A-Za-z]*\s+){1,3}[Tt]ime\b"
)

_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
# A reference-style link, "[the pricing page][pricing]" or "[Pricing][]", and the
# line that defines its address, "[pricing]: https://…", which the page never shows.
_REF_LINK = re.compile(r"!?\[([^\]^]+)\]\[[^\]]*\]")
_REF_DEFINITION = re.compile(r"^\s{0,3}\[[^\]^]+\]:\s*\S+(?:\s+[\"'(].*[\"')])?\s*$")
_EMPHASIS = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC = re.compile(r"(?<![\w*])([*_])(?=\S)(.+?)(?<=\S)\1(?![\w*])")
_CODE = re.compile(r"`([^`]+)`")
_HTML_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_AUTOLINK = re.compile(r"<((?:https?|ftp)://[^>\s]+|mailto:[^>\s]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)>")
_FOOTNOTE_REF = re.compile(r"\[\^[^\]\s]+\]")
# An emoji shortcode, ":warning:" or ":heavy_check_mark:" (GitHub, MkDocs, Slack
# exports): the page shows an icon, the words around it are the sentence.
# The marks of a feature table (":white_check_mark:" and ":x:" in a Markdown table
# are its yes and no) are kept as the marks; other icons go.
_SHORTCODE = re.compile(r"(?<![\w:/]):([a-z][a-z0-9_+-]*):(?![\w:/])(\s?)")
_SHORTCODE_MARKS = {
    "white_check_mark": "✓",
    "heavy_check_mark": "✓",
    "ballot_box_with_check": "✓",
    "x": "✗",
    "heavy_multiplication_x": "✗",
    "negative_squared_cross_mark": "✗",
    "no_entry_sign": "✗",
}


def _shortcode(m: re.Match[str]) -> str:
    mark = _SHORTCODE_MARKS.get(m.group(1))
    return f"{mark}{m.group(2)}" if mark else ""


# A Markdown footnote's definition, "[^1]: Per seat.": its label is layout.
_FOOTNOTE_DEF = re.compile(r"(?:^|(?<=\s))\[\^[^\]\s]+\]:\s*")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|~<>&])")
_HELD = re.compile(r"\x00(\d+)\x00")
_HELD_CODE = re.compile(r"\x01(\d+)\x01")
_PLACEHOLDERS = str.maketrans("", "", "\x00\x01")
_BREAK = re.compile(r"<br\s*/?>", re.I)
_BREAK_END = re.compile(_BREAK.pattern + r"\s*$", re.I)  # a line ending in a "<br>"


def plain(text: str) -> str:
    """Markdown inline syntax removed: what a person reads, not what the source says.

    ``**10 codes**`` → ``10 codes``, ``[the console](https://…)`` → ``the console``,
    ``\u0060sso.enforce\u0060`` → ``sso.enforce``. The words and numbers stay exactly
    as written, so the grounding checks still find every one in the passage. Inline
    code is kept verbatim, whatever it holds: ``\u0060--carrier <code> --on\u0060``
    is a command with a placeholder, not an HTML tag, and ``\u0060__init__\u0060`` is
    no emphasis. Outside code, text reads as the rendered page does: entities are
    their characters, an autolink is its address, an escaped character is that
    character, and struck-out text (what no longer holds) is gone.
    """
    # Code is held aside while the prose around it is read as one text, so that
    # emphasis wrapping code ("**`HS-204` — Authentication failed.**") is removed
    # as a whole; read piece by piece, each "**" was left raw in the answer.
    # The placeholders below are control characters no reader sees: a page's own
    # (pasted from elsewhere) is dropped, so it cannot pose as one (an IndexError).
    text = text.translate(_PLACEHOLDERS)
    code: list[str] = []

    def hold(m: re.Match[str]) -> str:
        code.append(m.group(1).replace("\\|", "|"))
        return f"\x01{len(code) - 1}\x01"

    prose = _plain_prose(_CODE.sub(hold, text))
    return " ".join(_HELD_CODE.sub(lambda m: code[int(m.group(1))], prose).split())


def _plain_prose(text: str) -> str:
    # A backslash-escaped character is that character, never syntax: "\\*wildcard\\*"
    # is a word between asterisks, not emphasis. Held aside until the syntax is gone.
    escaped: list[str] = []

    def hold(m: re.Match[str]) -> str:
        escaped.append(m.group(1))
        return f"\x00{len(escaped) - 1}\x00"

    text = _ESCAPED.sub(hold, text)
    text = _BREAK.sub(" ", text)  # a line break inside a cell or paragraph separates words
    text = _AUTOLINK.sub(r"\1", text)  # <https://…> is a link whose text is its address
    text = _LINK.sub(r"\1", text)
    text = _REF_LINK.sub(r"\1", text)
    text = _SHORTCODE.sub(_shortcode, text)
    text = _FOOTNOTE_DEF.sub("", text)
    text = _FOOTNOTE_REF.sub("", text)
    # Struck-out text is what no longer holds ("~~$12~~ $10 a month"): not read at all.
    text = _STRIKE.sub("", text)
    for _ in range(2):  # nested emphasis: ***x*** or **_x_**
        text = _EMPHASIS.sub(r"\2", text)
        text = _ITALIC.sub(r"\2", text)
    text = _HTML_TAG.sub("", text)
    # Entities last: "&lt;b&gt;" is the text "<b>", not a tag to remove.
    text = html.unescape(text)
    return _HELD.sub(lambda m: escaped[int(m.group(1))], text)


@dataclass(frozen=True, slots=True)
class Unit:
    kind: UnitKind
    position: int  # order within the passage
    text: str  # what an answer quotes (plain, the unit's own words)
    context: str = ""  # lead-in, parent item or header line: read with the unit, not quoted
    key: str = ""  # a row's first cell, an item's lead-in
    cells: tuple[tuple[str, str], ...] = field(default=())  # a row's (header, cell) pairs
    # The footnotes a row's marks point to ("pay day†" and "† Same-day runs are limited
    # to $25,000 per run."): read with the row and quoted with it.
    note: str = ""
    # The marks of those footnotes ("†", "*"): an answer that quotes the note beside
    # the row leaves them out of the cells (``unmarked``).
    note_marks: str = ""

    @property
    def asked(self) -> str:
        """The page's question a sentence answers (an FAQ's), if any: its context
        without the sentence it leans on (``_sentence_units`` builds both)."""
        if self.kind != "sentence":
            return ""
        return self.context.removesuffix(self.key).strip() if self.key else self.context

    def row_text(self, columns: Sequence[int] | None = None) -> str:
        """A row as a sentence of its own cells: ``Business — Storage: 100 GB; Price: $12``.

        ``columns`` (indexes into ``cells``, the key column excluded) keeps only
        the cells that answer the question; the key always leads.
        """
        if self.kind != "row":
            return self.text
        rest = [
            (h, c)
            for i, (h, c) in enumerate(self.cells)
            if i > 0 and (columns is None or i in columns)
        ]
        parts = [f"{h}: {c}" if h else c for h, c in rest if c]
        return f"{self.key} — " + "; ".join(parts) if parts else self.key


def split_sentences(text: str) -> list[str]:
    """Sentences of one paragraph (already joined), abbreviations kept whole."""
    pieces: list[str] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        head = text[start : m.start()].rstrip()
        before, after = text[: m.start()].rstrip(), text[m.end() :]
        if (
            _ABBREVIATION.search(before)
            or (_NUMBERED.search(before) and after[:1].isdigit())
            or (_CLOCK.search(before) and _ZONE.match(after))
        ):
            continue
        if head:
            pieces.append(text[start : m.start()].strip())
        start = m.end()
    tail = text[start:].strip()
    if tail:
        pieces.append(tail)
    return [p for p in pieces if p]


def _cells(line: str) -> list[str]:
    return [plain(c) for c in _raw_cells(line)]


def _raw_cells(line: str) -> list[str]:
    """A table line's cells as written, emphasis and all."""
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return re.split(r"(?<!\\)\|", body)


def units(text: str) -> list[Unit]:
    """The answer units of one passage, in reading order."""
    out: list[Unit] = []
    blocks = _blocks(text)
    lead_in = ""
    asked = ""  # an FAQ's question, alone in its paragraph, for the paragraph after it
    notes: dict[str, str] = {}  # the passage's footnotes by their mark
    for kind, lines in blocks:
        if kind == "heading":
            lead_in, asked = "", ""
            continue
        if kind == "paragraph" or kind == "quote":
            joined = plain(" ".join(QUOTE_MARK.sub("", ln).strip() for ln in lines))
            footnote = _FOOTNOTE.match(joined) if kind == "paragraph" else None
            if footnote:
                notes.setdefault(footnote.group(1).lstrip("\\"), footnote.group(2))
                # Quoted on its own, the mark points at a table the answer does not show.
                joined = footnote.group(2)
            sentences = split_sentences(joined)
            asked = _sentence_units(sentences, asked, out)
            lead_in = sentences[-1] if sentences else ""
            continue
        asked = ""
        if kind == "list":
            _list_units(lines, lead_in, out)
            lead_in = ""
        elif kind == "table":
            _table_units(lines, lead_in, out)
            lead_in = ""
        elif kind == "code":
            for ln in lines:
                line = ln.strip()
                if line and not line.startswith("#"):
                    out.append(Unit("code", len(out), line, context=lead_in, key=lead_in))
            lead_in = ""
    return _with_footnotes(out, notes)


# Marks that tie a table cell to a note under the table: "$34.75†", "Custom¹", "1,000*".
FOOTNOTE_MARK = re.compile(r"[*†‡§¶¹²³⁴⁵⁶⁷⁸⁹]")
# A footnote: a paragraph that starts with a mark (a Markdown "\*" too).
_FOOTNOTE = re.compile(r"^(\\?\*|[†‡§¶]|[¹²³⁴⁵⁶⁷⁸⁹])\s*(\S.*)$")


def unmarked(text: str, marks: str) -> str:
    """``text`` without the footnote marks ``marks`` where they end a word ("charge*",
    "pay day†"): quoted beside its note, a mark is a stray asterisk to the reader.
    A mark that starts a word ("*.example.com") or is a unit's power ("10 m²" when
    "²" marks no note) stays."""
    if not marks:
        return text
    return re.sub(rf"(?<=\S)[{re.escape(marks)}]+(?=[\s;,.:)]|$)", "", text)


def footnote_mark(paragraph: str) -> str | None:
    """The mark a footnote paragraph starts with ("†", "¹", "*" of "\\* Only…"), else None."""
    found = _FOOTNOTE.match(paragraph.lstrip().split("\n", 1)[0])
    return found.group(1).lstrip("\\") if found else None


def _with_footnotes(found: list[Unit], notes: dict[str, str]) -> list[Unit]:
    """Rows with the footnotes their cells point to, as context and as ``note``."""
    if not notes:
        return found
    out: list[Unit] = []
    for u in found:
        marked = {
            mark: note
            for mark, note in notes.items()
            if u.kind == "row" and any(mark in cell for _, cell in u.cells)
        }
        if marked:
            note = " ".join(marked.values())
            u = replace(
                u, context=f"{u.context} {note}".strip(), note=note, note_marks="".join(marked)
            )
        out.append(u)
    return out


# A sentence that leans on the one before it: "Other carriers reject the label with
# error PCL-2207." says which carriers only with "Only USPS and Royal Mail deliver to
# PO boxes." before it.
_LEANS_BACK = re.compile(
    r"^(?:this|that|these|those|it|its|they|their|them|other|others|such|both|neither|"
    r"otherwise|instead|however|then|if so|if not|in that case|in this case)\b",
    re.I,
)


# A sentence in the asker's own voice.
_ASKER = re.compile(r"\b(?:I(?:['\u2019](?:m|ve|d|ll))?|[Mm]y|[Mm]e)\b")
# The same, where a capital "My" names a product ("Sign in to My Homestead.") unless
# it opens the sentence ("My order is late.").
_ASKER_OPENING = re.compile(r"\bI(?:['\u2019](?:m|ve|d|ll))?\b|\b(?:my|me)\b|^My\s+[a-z]")
# The labels of an FAQ written as "Q: …? A: …": the page's layout, not its words.
_QUESTION_LABEL = re.compile(r"^(?:Q|Question)\s*[:.]\s+", re.I)
_ANSWER_LABEL = re.compile(r"^(?:A|Answer)\s*[:.]\s+")


def _sentence_units(sentences: list[str], asked: str, out: list[Unit]) -> str:
    """A paragraph's sentences as units; the question it leaves for the next paragraph.

    A question is not an answer: an FAQ's "Do you ship to PO boxes?" (or a quoted
    customer's question) is read with the sentences that answer it, as their
    context, and is not a unit of its own. A sentence that leans on the one
    before it quotes that one too (``key``), so it stands on its own.
    """
    previous = ""
    # A "Q:" runs to its question mark or its "A:", whatever its sentences end with:
    # "Q: My session didn't start, but there's a payment on my card. Why?" is one
    # question, not a statement and a "Why?".
    labelled: list[str] | None = None
    continued = False  # the sentence before was the paragraph's question or its asker's
    # The asker's own sentences that open a paragraph before its question ("**I left
    # my bag on the train a few minutes ago. Can you stop it?**"): the question's too.
    opening = 0
    while (
        opening < len(sentences) - 1
        and _ASKER_OPENING.search(sentences[opening])
        and not sentences[opening].endswith("?")
    ):
        opening += 1
    if 0 < opening < len(sentences) and sentences[opening].endswith("?"):
        sentences = [" ".join(sentences[: opening + 1]), *sentences[opening + 1 :]]
    for sentence in sentences:
        if _QUESTION_LABEL.match(sentence):
            labelled = []
        if labelled is not None and not _ANSWER_LABEL.match(sentence):
            labelled.append(sentence)
            asked, previous = _QUESTION_LABEL.sub("", " ".join(labelled)), ""
            if sentence.endswith("?"):
                labelled = None
            continue
        labelled = None
        if sentence.endswith("?"):
            asked, previous = sentence, ""
            continued = True
            continue
        if continued and _ASKER.search(sentence):
            # The asker goes on in the first person ("Is there a way to see which
            # contractors are missing a W-9? I keep finding them the week of the
            # deadline."): still the question, not an answer to it.
            asked = f"{asked} {sentence}"
            continue
        continued = False
        if asked and not previous:
            # "Q: … A: Open a claim within 21 days." answers without its label.
            sentence = _ANSWER_LABEL.sub("", sentence) or sentence
        lean = previous if previous and _LEANS_BACK.match(sentence) else ""
        context = " ".join(t for t in (asked, lean) if t)
        out.append(Unit("sentence", len(out), sentence, context=context, key=lean))
        previous = sentence
    # Only a question standing alone (an FAQ's bold question, a post that asks) carries over.
    if not sentences:
        return ""
    carries = continued or labelled is not None or sentences[-1].endswith("?")
    return asked if carries else ""


def _blocks(text: str) -> list[tuple[str, list[str]]]:
    """Lines grouped into (kind, lines): heading, paragraph, quote, list, table, code."""
    blocks: list[tuple[str, list[str]]] = []
    current: tuple[str, list[str]] | None = None
    in_code = False
    gap = False  # a blank line inside a list: a loose list may go on after it

    def close() -> None:
        nonlocal current, gap
        if current is not None and current[1]:
            blocks.append(current)
        current = None
        # No list is open to go on: a list, a blank line, then a callout ("!!! warning")
        # left the gap set with nothing open, and the next line failed an assertion.
        gap = False

    lines = text.splitlines()
    bare_table = _bare_table_lines(lines)
    broken = False  # the line before ended in a hard line break
    for i, raw in enumerate(lines):
        after_break, broken = broken, raw.endswith(("  ", "\\")) or bool(_BREAK_END.search(raw))
        if _FENCE.match(raw):
            if in_code:
                close()
                in_code = False
            else:
                close()
                in_code = True
                current = ("code", [])
            continue
        if in_code:
            assert current is not None
            current[1].append(raw)
            continue
        if _CALLOUT.match(raw):
            close()  # the box's words are a paragraph of their own
            continue
        if _REF_DEFINITION.match(raw) or _ALERT_LINE.match(raw):
            continue
        line = _ALERT.sub("", raw.rstrip())
        if not line.strip():
            if current is not None and current[0] == "list":
                gap = True
            else:
                close()
            continue
        stripped = line.strip()
        heading = _HEADING.match(stripped)
        if heading:
            close()
            blocks.append(("heading", [heading.group(1)]))
            continue
        if gap:
            gap = False
            assert current is not None
            if _continues_list(current[1], raw):
                current[1].append(line)
                continue
            close()
        if stripped.startswith("|") or i in bare_table:
            kind = "table"
        elif QUOTE_MARK.match(line):
            kind = "quote"
        elif _LIST_ITEM.match(line):
            kind = "list"
        elif current is not None and current[0] == "list" and raw[:1].isspace():
            kind = "list"  # an item's continuation line
        else:
            kind = "paragraph"
        if current is not None and current[0] == "list" and kind == "paragraph":
            # A wrapped item continues without indentation in many sources.
            kind = "list"
        if (
            kind == "paragraph"
            and current is not None
            and current[0] == "paragraph"
            and (
                after_break
                or _NOTE_LINE.match(stripped)
                or (_LABEL.match(stripped) and _ends_line(current[1][-1]))
                or (_DASHED.match(stripped) and _DASHED.match(current[1][-1].strip()))
            )
        ):
            # "**Idle fee:** $0.40 a minute" under "**Max sessions:** 20", a line
            # after a hard break, a footnote under the one before ("² The Home M also
            # runs on…" under "¹ Standard installation…"), or "Max files per folder —
            # 10,000" under "Max folder depth — 20 levels" is a line of its own, not one
            # run-on sentence.
            close()
        if current is None or current[0] != kind:
            close()
            current = (kind, [])
        current[1].append(line)
    close()
    return blocks


# A line that starts a footnote: its mark, then a space ("² The Home M…", "\\* Only
# on Premium."). An unescaped "* " is a list item and "**Bold**" is emphasis.
_NOTE_LINE = re.compile(r"^(?:\\\*|[†‡§¶¹²³⁴⁵⁶⁷⁸⁹])\s+\S")


# A "name — value" line: a short capitalised name (a few words, no punctuation), one
# dash with spaces around it, the value. Wrapped prose with a dash in it ("…, and —
# for annual plans over **$3,000** — payment…") does not fit the name.
_DASHED = re.compile(
    r"^[A-Z0-9][\w'/&+()-]*(?: [\w'/&+()-]+){0,4} [\u2014\u2013]\s+[^\u2014\u2013]+$"
)


def is_table_separator(line: str) -> bool:
    """Whether a line of a pipe table is its delimiter row ("| --- | :-: |")."""
    return bool(_TABLE_SEPARATOR.match(line.strip()))


def _ends_line(previous: str) -> bool:
    """Whether a paragraph line is whole, so a bold label after it starts a line of its
    own: another label line, or a finished sentence. "Paid plans are billed" followed
    by "**per seat**: …" is one sentence wrapped."""
    text = previous.strip()
    return bool(_LABEL.match(text)) or text.endswith((".", "!", "?", ":"))


def _bare_table_lines(lines: list[str]) -> set[int]:
    """The lines of pipe tables written without their outer pipes: "Plan | Price"
    over "--- | ---", then rows up to the first line without a pipe."""
    found: set[int] = set()
    i = 0
    while i + 1 < len(lines):
        head, separator = lines[i].strip(), lines[i + 1].strip()
        if (
            "|" in head
            and "|" in separator
            and not head.startswith("|")
            and is_table_separator(separator)
        ):
            end = i + 2
            while end < len(lines) and "|" in lines[end]:
                end += 1
            found.update(range(i, end))
            i = end
        else:
            i += 1
    return found


def _continues_list(lines: list[str], raw: str) -> bool:
    """Whether a line after a blank line goes on with the list above it: another item
    of the same kind ("1." after "1.", "-" after "-"), a nested one, or an indented
    paragraph of an item. A paragraph at the margin, or a list of the other kind,
    starts something new."""
    m = _LIST_ITEM.match(raw)
    if m is None:
        return raw[:1].isspace()
    if m.group(1):
        return True
    first = _LIST_ITEM.match(lines[0])
    return first is not None and first.group(2)[0].isdigit() == m.group(2)[0].isdigit()


def _list_units(lines: list[str], lead_in: str, out: list[Unit]) -> None:
    items: list[tuple[int, str, str]] = []  # (indent, marker, text)
    for line in lines:
        m = _LIST_ITEM.match(line)
        if m:
            items.append((len(m.group(1).expandtabs(4)), m.group(2), m.group(3).strip()))
        elif items:
            # A line belongs to the last item it is indented under: "   Then confirm."
            # under "2. Click Add card." goes on with step 2, not with the bullet
            # nested in it; a line at the margin is a wrapped last item.
            indent = len(line) - len(line.lstrip())
            at = len(items) - 1
            while indent and at > 0 and items[at][0] >= indent:
                at -= 1
            start, marker, text = items[at]
            items[at] = (start, marker, f"{text} {line.strip()}")
    parents: list[tuple[int, str]] = []
    for indent, marker, raw in items:
        while parents and parents[-1][0] >= indent:
            parents.pop()
        text = plain(raw)
        if not text:  # "- ![](shot.png)", an empty "1.": no words to quote
            continue
        enumerated = f"{marker} {text}" if marker[0].isdigit() else text
        context = " ".join([lead_in, *(p for _, p in parents)]).strip()
        out.append(Unit("item", len(out), enumerated, context=context, key=lead_in))
        parents.append((indent, text))


def is_second_header_row(header_line: str, line: str) -> bool:
    """Whether a table's first row after the separator goes on naming its columns
    (``_second_header``); chunking repeats it with the header in every piece."""
    return _second_header(_cells(header_line), line)


def _second_header(header: list[str], line: str) -> bool:
    """A second header row written as the first row ("| | | 30-day rolling | 12-month
    |" under "| Plan | Data | Price per month | |"): it fills header cells left empty
    (spanned by the one before), and either leaves its key cell empty, as no row does,
    or is bold throughout over a blank key header (``_names_columns``)."""
    sub = _cells(line)
    spanned = any(sub[i] and not (header[i] if i < len(header) else "") for i in range(1, len(sub)))
    return spanned and (not sub[0] or _names_columns(header, line))


def _names_columns(header: list[str], line: str) -> bool:
    """Whether a table's first row, under a header row that leaves its key column
    blank, is a second header row: every cell bold and no number in it ("| | Price by
    species (£) | | |" over "| **Procedure** | **Dog** | **Cat** | **Rabbit** |")."""
    # As written: ``_cells`` takes the bold off, and the bold is the sign.
    raw = [c.strip() for c in _raw_cells(line)]
    return (
        not header[0]
        and all(c.startswith("**") and c.endswith("**") for c in raw if c)
        and not any(ch.isdigit() for c in raw for ch in c)
    )


def _merged_header(header: list[str], sub: list[str]) -> list[str]:
    """Two header rows as one, an empty cell of the first spanned by the one before it:
    "Price per month" over "30-day rolling" and "12-month" names the columns "Price per
    month 30-day rolling" and "Price per month 12-month", as an HTML colspan does."""
    names: list[str] = []
    spanning = ""
    for i in range(max(len(header), len(sub))):
        top = header[i] if i < len(header) else ""
        below = sub[i] if i < len(sub) else ""
        spanning = top or (spanning if i else "")
        names.append(f"{spanning} {below}".strip() if below else top)
    return names


# A key column of short codes under a one-word header: "| Band | … |" over "| B | … |".
_KEY_NOUN = re.compile(r"[A-Za-z][a-z]+")
_KEY_CODE = re.compile(r"[A-Z0-9]{1,3}")


def _named_key(header: str, key: str) -> str:
    """A row's key as people name the row: "Band B", "Zone 2", not a bare "B".

    A question asks for "a Band B home"; the row's own cell says only "B", which no
    word of the question matches and no answer can stand on.
    """
    if _KEY_NOUN.fullmatch(header) and _KEY_CODE.fullmatch(key):
        return f"{header} {key}"
    return key


def _table_units(lines: list[str], lead_in: str, out: list[Unit]) -> None:
    rows = [ln for ln in lines if not is_table_separator(ln)]
    has_header = len(lines) > 1 and is_table_separator(lines[1])
    if not rows:
        return
    header = _cells(rows[0]) if has_header else []
    body = rows[1:] if has_header else rows
    if header and body and _second_header(header, body[0]):
        header, body = _merged_header(header, _cells(body[0])), body[1:]
    header_line = " | ".join(h for h in header if h)
    context = f"{lead_in} {header_line}".strip()
    above = ""  # the last row's own first cell
    for line in body:
        cells = _cells(line)
        if not any(cells):
            continue
        if not cells[0] and above:
            # A row that leaves its first cell blank goes on with the row above, as a
            # rowspan does: "| 2 people | 3 | 7.49 |" then "| | 4 | 6.99 |".
            cells = [above, *cells[1:]]
        above = cells[0]
        names = header + [""] * (len(cells) - len(header))
        pairs = tuple(zip(names, cells, strict=False))
        key = _named_key(header[0] if header else "", cells[0])
        unit = Unit("row", len(out), "", context=context, key=key, cells=pairs)
        out.append(
            Unit("row", unit.position, unit.row_text(), context=context, key=key, cells=pairs)
        )
