"""Source formats → structural blocks (headings, paragraphs, lists, tables, code).

Every format is reduced to the same block list, rendered as Markdown, so that
one chunker serves them all and the extractive generator sees one notation
(code fences, ``| a | b |`` tables, ``- item`` lists):

    Markdown  markdown-it-py (CommonMark + tables); blocks keep their source lines
    HTML      the standard library's HTMLParser; <title> and <meta name=...> give metadata
    text      blank-line paragraphs
    PDF       pypdf text per page, blank-line paragraphs; the PDF's /Title

Markdown and plain text may start with YAML front matter for their metadata.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any, Literal

import yaml
from markdown_it import MarkdownIt

from ragway.units import is_second_header_row

BlockKind = Literal["heading", "paragraph", "list", "table", "code", "quote"]
FORMATS = ("markdown", "html", "text", "pdf")
# Metadata names read from HTML <meta name="..."> (also with a "ragway:" prefix).
META_NAMES = (
    "document_id",
    "tenant",
    "groups",
    "status",
    "version",
    "url",
    "title",
    "effective_from",
    "effective_to",
)
# A paragraph's leading asterisk, which Markdown would read as a list marker.
_LEADING_STAR = re.compile(r"^\*(?=\s)")
_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)


class ParseError(ValueError):
    """The source cannot be read as its format says."""


@dataclass(frozen=True)
class Block:
    kind: BlockKind
    text: str  # Markdown rendering of the whole block
    level: int = 0  # heading level
    # Units a too-long block may be split into without breaking structure:
    # list items, table rows (each repeated with `header`), code lines.
    units: tuple[str, ...] = ()
    header: str = ""  # a table's header row and separator


@dataclass
class Parsed:
    blocks: list[Block]
    meta: dict[str, Any] = field(default_factory=dict)
    title: str | None = None  # the format's own title (first heading, <title>, /Title)


def parse(kind: str, data: bytes) -> Parsed:
    if kind == "pdf":
        return _parse_pdf(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"not UTF-8 text: {exc}") from exc
    if kind == "markdown":
        meta, body = split_front_matter(text)
        return _with_meta(parse_markdown(body), meta)
    if kind == "text":
        meta, body = split_front_matter(text)
        return Parsed(blocks=text_blocks(body), meta=meta)
    if kind == "html":
        return parse_html(text)
    raise ParseError(f"unknown format {kind!r}; known: {', '.join(FORMATS)}")


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    try:
        loaded = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        raise ParseError(f"invalid front matter: {exc}") from exc
    if not isinstance(loaded, dict):
        raise ParseError("front matter must be a mapping")
    return loaded, text[match.end() :]


def _with_meta(parsed: Parsed, meta: dict[str, Any]) -> Parsed:
    parsed.meta = meta
    return parsed


# -- Markdown ---------------------------------------------------------------

_MD = MarkdownIt("commonmark").enable("table")


def parse_markdown(body: str) -> Parsed:
    body = _admonitions(body)
    lines = body.splitlines()
    tokens = _MD.parse(body)
    blocks: list[Block] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.level != 0 or tok.map is None or tok.nesting == -1:
            i += 1
            continue
        # The block's tokens run to the matching close at level 0.
        j = i
        if tok.nesting == 1:
            while not (tokens[j].nesting == -1 and tokens[j].level == 0):
                j += 1
        inner = tokens[i : j + 1]
        start, end = tok.map
        source = "\n".join(lines[start:end]).strip("\n")
        if tok.type == "heading_open":
            heading = _HEADING_ATTRIBUTES.sub("", inner[1].content).strip()
            blocks.append(Block("heading", heading, level=int(tok.tag[1])))
        elif tok.type in ("bullet_list_open", "ordered_list_open"):
            items = [
                "\n".join(lines[t.map[0] : t.map[1]]).strip("\n")
                for t in inner
                if t.type == "list_item_open" and t.level == 1 and t.map
            ]
            blocks.append(Block("list", source, units=tuple(items)))
        elif tok.type == "table_open":
            header = "\n".join(lines[start : start + 2])
            rows = [
                lines[t.map[0]]
                for t in inner
                if t.type == "tr_open" and t.map and t.map[0] >= start + 2
            ]
            if rows and is_second_header_row(lines[start], rows[0]):
                # "| | | Standard | Member |" under "| Item | Service | Fee (AUD) | | |"
                # names the fee columns: every piece of a split table needs it too.
                header, rows = f"{header}\n{rows[0]}", rows[1:]
            blocks.append(Block("table", source, units=tuple(rows), header=header))
        elif tok.type in ("fence", "code_block"):
            blocks.append(Block("code", source, units=tuple(tok.content.rstrip("\n").split("\n"))))
        elif tok.type == "blockquote_open":
            blocks.append(Block("quote", source))
        elif tok.type == "hr":
            pass
        elif tok.type == "html_block":
            # Help centres paste HTML into Markdown (a <dl> of terms, a <table>,
            # <details> FAQs). As a paragraph its tags were stripped later and its
            # cells and terms ran together ("Parcel lockerLockers hold…"); an
            # editor's <!-- comment --> was indexed as text.
            blocks += _html_blocks(source)
        elif source.strip():
            blocks.append(Block("paragraph", _DEFINITION_LINE.sub(": ", source)))
        i = j + 1
    title = next((b.text for b in blocks if b.kind == "heading" and b.level == 1), None)
    return Parsed(blocks=blocks, title=title)


# Admonitions, as MkDocs ('!!! note "Who can sign up"' over an indented body, or '???'
# for a collapsible one) and Docusaurus (':::tip Opting out' … ':::') write them.
# CommonMark reads the marker as the first words of a paragraph ('!!! warning "Leaving
# Budget Billing" You can leave…') or the indented body as code. They are written as
# the note they are: a quote led by its title or its kind ("> **Note:** …").
_MKDOCS_ADMONITION = re.compile(r'^(?:!!!|\?\?\?\+?)\s+([A-Za-z][\w-]*)(?:\s+"([^"]*)")?\s*$')
_DOCUSAURUS_OPEN = re.compile(r"^:::([A-Za-z][\w-]*)(?:\[[^\]]*\])?(?:\s+(.*?))?\s*$")
_DOCUSAURUS_CLOSE = re.compile(r"^:::\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _admonitions(body: str) -> str:
    """MkDocs and Docusaurus admonitions as Markdown quotes (see above)."""
    if "!!!" not in body and ":::" not in body and "???" not in body:
        return body
    lines = body.split("\n")
    out: list[str] = []
    fenced = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            fenced = not fenced
        mkdocs = None if fenced else _MKDOCS_ADMONITION.match(line)
        docusaurus = None if fenced else _DOCUSAURUS_OPEN.match(line)
        if mkdocs:
            inner: list[str] = []
            i += 1
            while i < len(lines) and (lines[i].startswith(("    ", "\t")) or not lines[i].strip()):
                inner.append(lines[i][4:] if lines[i].startswith("    ") else lines[i].lstrip("\t"))
                i += 1
            out += _as_note(mkdocs.group(2) or mkdocs.group(1), inner)
            continue
        if docusaurus:
            inner = []
            i += 1
            while i < len(lines) and not _DOCUSAURUS_CLOSE.match(lines[i]):
                inner.append(lines[i])
                i += 1
            out += _as_note(docusaurus.group(2) or docusaurus.group(1), inner)
            i += 1  # the closing ":::"
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def _as_note(title: str, inner: list[str]) -> list[str]:
    """An admonition's lines as a quote led by its title: "> **Note:** …"."""
    while inner and not inner[-1].strip():
        inner.pop()
    while inner and not inner[0].strip():
        inner.pop(0)
    label = title.strip().rstrip(":")
    label = label[:1].upper() + label[1:]
    if not inner:
        return [f"> **{label}**", ""]
    quoted = [f"> **{label}:** {inner[0].strip()}", *(f"> {ln}".rstrip() for ln in inner[1:])]
    return [*quoted, ""]


# A heading's attribute list, "## Refunds {#refunds}" (kramdown, Pandoc, MkDocs): the
# anchor is markup, not the section's name that passages and citations carry.
_HEADING_ATTRIBUTES = re.compile(r"\s*\{\s*[#.:][^{}]*\}\s*$")
# A definition list in the PHP Markdown Extra / Pandoc style: "Term\n: Definition".
# CommonMark reads it as one paragraph, and the line break became "Term : Definition".
_DEFINITION_LINE = re.compile(r"[ \t]*\n:[ \t]+")


# -- Plain text (and a PDF's text) -------------------------------------------------
#
# Terms and policies exported as text, and PDF guides, write their structure in the
# characters themselves: a heading in capitals ("4. EARLY CANCELLATION"), clauses
# numbered "4.2", lists of "-" or "(a)" items whose lines wrap with an indent, and
# tables as columns aligned with spaces. Read as paragraphs split at blank lines, a
# heading ran into the clause under it and a table into one line of text ("HOW YOUR
# PRICE IS CALCULATED Energy charge 13.9 cents per kWh Cedarline base charge $5.00…").
# So the text is written as the Markdown it means and read as Markdown.

# A heading in capitals, numbered or not: "ELECTRICITY PRICE", "2. YOUR RIGHT TO CANCEL".
_CAPS_HEADING = re.compile(r"^(?:\d+(?:\.\d+)*\.?\s+)?(?=[^a-z]*[A-Z]{2})[^a-z]{3,80}$")
# Where an aligned table's columns part: three spaces or more inside a line.
_COLUMN_GAP = re.compile(r"\S {3,}\S")
_CELL_SPLIT = re.compile(r"\s{2,}")
# A list item: "- ", "* ", "• ", "(a) ", "a) ", "(iv) ", or a step "1. " / "1) ".
_TEXT_ITEM = re.compile(r"^(?:[-*\u2022]\s+|\(?(?:[a-z]|[ivx]{1,4})\)\s+|\d{1,2}[.)]\s+(?=\S))")
# A clause numbered "4.2" starts a paragraph of its own, wrapped or not.
_CLAUSE = re.compile(r"^\d+\.\d+(?:\.\d+)*\.?\s+\S")


def text_blocks(body: str) -> list[Block]:
    """Plain text's blocks: its headings, clauses, lists and aligned tables."""
    return parse_markdown(text_markdown(body)).blocks


def text_markdown(body: str) -> str:
    """Plain text written as the Markdown its layout means (see above)."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n", body):
        out += _text_pieces([ln.rstrip() for ln in para.split("\n") if ln.strip()])
    return "\n\n".join(out) + "\n"


def _text_pieces(lines: list[str]) -> list[str]:
    """One blank-line paragraph of plain text as Markdown blocks."""
    pieces: list[str] = []
    kind = ""  # what ``current`` is: "para", "item" or "table"
    current: list[str] = []
    rows: list[list[str]] = []

    def close() -> None:
        nonlocal kind, current, rows
        if kind == "table":
            pieces.append(_text_table(rows))
        elif kind == "item":
            pieces.append("\n".join(current))
        elif current:
            pieces.append(" ".join(current))
        kind, current, rows = "", [], []

    for raw in lines:
        line = raw.strip()
        indented = len(raw) - len(raw.lstrip()) >= 4
        if kind == "table" and indented and not _COLUMN_GAP.search(line):
            rows[-1][-1] = f"{rows[-1][-1]} {line}"  # a cell wrapped under itself
            continue
        if _COLUMN_GAP.search(line):
            if kind != "table":
                close()
                kind = "table"
            rows.append(_CELL_SPLIT.split(line))
            continue
        if (
            _CAPS_HEADING.match(line)
            and len(line.split()) <= 12
            and not line.endswith(",")
            # Four letters or more: a code on a line of its own ("FH-221") is no heading.
            and sum(ch.isalpha() for ch in line) >= 4
        ):
            close()
            pieces.append("## " + line.rstrip(":"))
            continue
        item = _TEXT_ITEM.match(line)
        if item and not _CLAUSE.match(line):
            if kind == "para" and current:
                # A lead-in before its items ("We will not charge a fee if:").
                pieces.append(" ".join(current))
                current = []
            elif kind != "item":
                close()
            kind = "item"
            current.append(_text_item(line, item.group(0).strip(), item.end()))
            continue
        if _CLAUSE.match(line) or (kind == "table"):
            close()
            kind, current = "para", [line]
            continue
        if kind == "item":
            current[-1] = f"{current[-1]} {line}"  # an item's wrapped line
            continue
        kind = "para"
        current.append(line)
    close()
    return pieces


def _text_item(line: str, marker: str, end: int) -> str:
    """A plain-text list item as Markdown: a step keeps its number ("2. …"), a lettered
    item its letter ("- (a) …", which a clause may cite), a bullet its words."""
    if marker[:-1].isdigit():
        return f"{marker[:-1]}. {line[end:]}"
    if marker[0] in "-*\u2022":
        return f"- {line[end:]}"
    return f"- {line}"


def _reads_as_data(first: list[str], second: list[str]) -> bool:
    """Whether a table's first row is a row like the next, not the columns' names:
    "Day 22 | First late penalty | USD 25" over "Day 61 | Second late penalty | USD 35".
    Promoted to a header, it named every row's cells ("First late penalty: Second late
    penalty; USD 25: USD 35"). Alike means two cells or more written the same way but for
    their numbers, one of them with a number ("Daily rate 1-2 days" over "£46" is not)."""
    alike = [
        a
        for a, b in zip(first, second, strict=False)
        if a and _DIGITS.sub("0", a) == _DIGITS.sub("0", b)
    ]
    return len(alike) >= 2 and any(_DIGITS.search(a) for a in alike)


_DIGITS = re.compile(r"\d+")


def _names_prices(first: list[str], rest: list[list[str]]) -> bool:
    """Whether two columns' first row names them as a price list does: "Item | Charge
    (NZD)" over "Lost or damaged key | 350". Read as a label and its value, the currency
    was lost from every row ("Lost or damaged key — 350" held no amount). A first row of
    labels and values ("Email | help@…") is no such header: it has no price word."""
    return (
        not any(_DIGITS.search(cell) for cell in first)
        and _PRICE_HEADER.search(first[-1]) is not None
        and all(_DIGITS.search(row[-1]) for row in rest if len(row) > 1)
    )


# "Charge (NZD)", "Price", "Fee (£)", "Cost per night ($)".
_PRICE_HEADER = re.compile(
    r"^(?:[\w-]+\s+){0,2}(?:charges?|prices?|fees?|costs?|rates?|amounts?)\b[^()]{0,20}"
    r"(?:\((?:[A-Z]{3}|[$£€¥]|[A-Z]{1,2}\$)\))?$",
    re.IGNORECASE,
)


def _text_table(rows: list[list[str]]) -> str:
    """Aligned columns as a Markdown table: with three columns or more the first row
    names them unless it reads as data; two columns are labels and their values (an
    empty header), as an HTML table of two columns without <th> is read, unless the
    first row heads a price list."""
    width = max(len(r) for r in rows)
    if len(rows) == 1 and width == 2:
        return f"{rows[0][0]}: {rows[0][1]}"

    def line(cells: list[str]) -> str:
        cells = [c.replace("|", "\\|") for c in cells] + [""] * (width - len(cells))
        return "| " + " | ".join(cells) + " |"

    if width >= 3:
        named = len(rows) > 1 and not _reads_as_data(rows[0], rows[1])
    else:
        named = len(rows) > 2 and _names_prices(rows[0], rows[1:])
    head, body = (rows[0], rows[1:]) if named else ([""] * width, rows)
    return "\n".join([line(head), "|" + " --- |" * width, *(line(r) for r in body)])


# -- HTML -------------------------------------------------------------------

_BLOCK_TAGS = {"p", "div", "section", "article", "main", "header", "footer", "aside", "br", "hr"}
# An FAQ's "<details><summary>Question?</summary>Answer</details>": the question is a
# paragraph of its own, not glued to its answer ("fee?Yes: 50 %").
_BLOCK_TAGS |= {"details", "summary", "blockquote", "figure", "figcaption", "address"}
_SKIP_TAGS = {"script", "style", "noscript", "template", "nav", "svg"}
# A help centre's page is its article inside the site's chrome (header, breadcrumbs,
# "Was this article helpful?", related articles, footer). Where the page marks its
# article (<main>, <article>, role="main"), only the article is read; chrome inside
# it, and widgets anywhere, are not. Otherwise every page carried the same
# "Still need help? Contact us…" and the titles of other articles.
_MAIN_START = re.compile(r"<(?:main|article)\b|\brole\s*=\s*[\"']?main\b", re.I)
_CHROME_TAGS = {"form", "button", "select", "dialog"}
# An accordion made of a <button> and the panel it opens (a help centre's own widget,
# not <details>): the button is the FAQ's question. Told by its aria-expanded or
# aria-controls, or by an enclosing element named accordion, collapsible or faq.
_ACCORDION_NAME = re.compile(r"(?:^|[-_])(?:accordion|collapsible|faq)s?(?:$|[-_])", re.I)
_CHROME_IN_MAIN = {"footer", "aside"}
# Class or id words of page widgets, matched whole between "-" or "_" ("article-votes",
# "related_articles"), so "shared-drives" or "commentary" are not widgets.
_CHROME_NAME = re.compile(
    r"(?:^|[-_])(?:breadcrumbs?|votes?|voting|feedback|related|share|sharing|social|"
    r"comments?|sidebar|cookies?|pagination|toc|skip-link|footer|topbar|navbar|masthead)"
    r"(?:$|[-_])|^article-meta$",
    re.I,
)
# The ARIA landmarks of a site's own chrome: its header, footer, menus and search.
_CHROME_ROLES = {"banner", "contentinfo", "navigation", "search"}
# A page's header is the site's banner (its logo, search box and "Sign in") unless it
# holds a heading: an article's own header holds its title. A help centre that marks
# no article read "Medirun Pharmacy Help Center / Sign in" as the page's opening
# passage, which a question about the page's title then retrieved instead of its text.
# Named as a page's header is named ("header", "site-header"), not a card's or a
# table's ("plan-header" may hold a plan's name and no heading).
_HEADER_NAME = re.compile(r"^(?:(?:site|global|hc|top|main|page)[-_])?header$", re.I)
# Tags inside a table cell that separate its words rather than open blocks.
_IN_CELL = {"ul", "ol", "li", "p", "div", "br"}
_VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "wbr"}


class _HtmlBlocks(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self.meta: dict[str, Any] = {}
        self.title: str | None = None
        self._text: list[str] = []
        self._skip = 0
        # Whether the page marks its article (see _MAIN_START); set before feeding.
        self.scoped = False
        self._main: list[list[Any]] = []  # open article elements: [tag, same-tag depth]
        self._chrome: list[list[Any]] = []  # open chrome elements, the same way
        self._in_title = False
        self._heading: int | None = None
        self._pre = False
        self._lists: list[list[str]] = []  # open lists, innermost last
        self._ordered: list[bool] = []  # whether each open list is an <ol>
        # A definition list: its "term: definition" items, and the open term or definition.
        self._definitions: list[str] | None = None
        self._term = ""
        self._definition: list[str] | None = None
        self._item: list[str] | None = None
        # An item whose nested list is open: its place in its own list, so the words
        # after the nested list ("<li>Open Settings <ul>…</ul> then choose Billing.")
        # join it rather than land in a paragraph after the whole list.
        self._parents: list[int] = []
        self._resumes: int | None = None
        self._table: list[_Row] | None = None
        self._cell: list[str] | None = None
        self._summary = False  # inside a <details> accordion's <summary>
        self._accordions: list[list[Any]] = []  # open accordion elements: [tag, same-tag depth]
        # Tabs: the open tab panel elements, the index in ``blocks`` of the last heading
        # the page wrote (the section tabs go under), and where each panel ended.
        self._panels: list[list[Any]] = []
        self._section: int | None = None
        self._panel_ends: list[tuple[int, int]] = []
        # Open header elements outside the article: [tag, same-tag depth, first block].
        self._headers: list[list[Any]] = []

    def _enter(self, tag: str, attrs: list[tuple[str, str | None]]) -> bool:
        """Track the article and the chrome; False: the tag is inside chrome."""
        if tag in _VOID_TAGS:
            return not self._chrome
        for stack in (self._chrome, self._main, self._accordions, self._panels, self._headers):
            if stack and stack[-1][0] == tag:
                stack[-1][1] += 1
        if self._chrome:
            return False
        a = dict(attrs)
        named = f"{a.get('class') or ''} {a.get('id') or ''}".split()
        if any(_ACCORDION_NAME.search(word) for word in named):
            self._accordions.append([tag, 1])
        if tag == "button" and _opens_a_panel(a, bool(self._accordions)):
            return True
        if (
            tag in _CHROME_TAGS
            or (self._main and tag in _CHROME_IN_MAIN)
            or any(_CHROME_NAME.search(word) for word in named)
            or a.get("role") in _CHROME_ROLES
        ):
            self._chrome.append([tag, 1])
            return False
        if tag in ("main", "article") or a.get("role") == "main":
            self._main.append([tag, 1])
        if not self._main and (tag == "header" or any(_HEADER_NAME.search(w) for w in named)):
            self._flush()
            self._headers.append([tag, 1, len(self.blocks)])
        return True

    def _leave(self, tag: str) -> bool:
        """The end tag's side of ``_enter``; False: the tag was inside chrome or closed it."""
        was_chrome = bool(self._chrome)
        panels = len(self._panels)
        for stack in (self._chrome, self._main, self._accordions, self._panels, self._headers):
            if stack and stack[-1][0] == tag:
                stack[-1][1] -= 1
                if stack[-1][1] == 0:
                    closed = stack.pop()
                    if stack is self._headers and not was_chrome:
                        self._flush()
                        self._drop_banner(closed[2])
        if len(self._panels) < panels and self._section is not None:
            self._flush()
            self._panel_ends.append((len(self.blocks), self._section))
        return not was_chrome

    def _drop_banner(self, first: int) -> None:
        """A header that wrote no heading was the site's banner: its blocks go."""
        if any(b.kind == "heading" for b in self.blocks[first:]):
            return
        del self.blocks[first:]

    @property
    def _reading(self) -> bool:
        """Whether text here is the page's content: not chrome, and in the article
        when the page marks one."""
        return not self._chrome and (bool(self._main) or not self.scoped)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not self._enter(tag, attrs):
            return
        if self._cell is not None and tag in _IN_CELL:
            # A list or lines inside a cell ("<td><ul><li>SSO</li><li>Audit log</li>"):
            # the cell's words, kept apart, not a list of the page's.
            if "".join(self._cell).strip():
                self._cell.append("; " if tag == "li" else " ")
            return
        if tag in _SKIP_TAGS:
            self._skip += 1
        elif tag == "title":
            self._in_title = True
        elif tag == "meta":
            a = dict(attrs)
            name = (a.get("name") or "").removeprefix("ragway:")
            if name in META_NAMES and a.get("content") is not None:
                value: Any = a["content"]
                if name == "groups":
                    value = [g.strip() for g in str(value).split(",") if g.strip()]
                self.meta[name] = value
        elif re.fullmatch(r"h[1-6]", tag):
            self._flush()
            self._heading = int(tag[1])
        elif tag == "pre":
            self._flush()
            self._pre = True
        elif tag in ("ul", "ol"):
            self._flush()
            if self._item is not None and self._lists:
                self._end_item()
                self._parents.append(len(self._lists[-1]) - 1)
            self._lists.append([])
            self._ordered.append(tag == "ol")
        elif tag == "li":
            if self._item is not None and self._lists:  # "</li>" is optional in HTML
                self._end_item()
            self._item = []
        elif tag == "dl":
            self._flush()
            self._definitions = []
        elif tag in ("dt", "dd") and self._definitions is not None:
            self._definition = []
        elif tag in ("summary", "button"):  # a button here opens an accordion's panel
            self._flush()
            self._summary = True
        elif (a := dict(attrs)).get("role") == "tabpanel" and (label := a.get("aria-label")):
            # A tab's panel ("iOS", "Android", "Web") says for what its steps are: its
            # label heads it, one level under the heading it is in.
            self._flush()
            self._panels.append([tag, 1])
            section = self.blocks[self._section].level if self._section is not None else 1
            self.blocks.append(Block("heading", label.strip(), level=min(section + 1, 6)))
        elif tag == "table":
            self._flush()
            self._table = []
        elif tag == "tr" and self._table is not None:
            self._close_cell()  # "</td>" and "</tr>" are optional in HTML
            self._table.append(_Row())
        elif tag in ("td", "th") and self._table is not None:
            self._close_cell()
            self._cell = []
            if not self._table:  # a cell before any <tr>
                self._table.append(_Row())
            a = dict(attrs)
            spans = (_span(a.get("colspan"), 50), _span(a.get("rowspan"), 500))
            self._table[-1].spans.append(spans)
            self._table[-1].heads.append(tag == "th")
        elif tag in _BLOCK_TAGS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if not self._leave(tag):
            return
        if self._cell is not None and tag in _IN_CELL:
            return
        if tag in _SKIP_TAGS:
            self._skip = max(0, self._skip - 1)
        elif tag == "title":
            self._in_title = False
        elif re.fullmatch(r"h[1-6]", tag) and self._heading is not None:
            text = " ".join("".join(self._text).split())
            self._text = []
            if text:
                self._section = len(self.blocks)
                self.blocks.append(Block("heading", text, level=self._heading))
            self._heading = None
        elif tag == "pre":
            code = "".join(self._text).strip("\n")
            self._text = []
            self._pre = False
            if code.strip():
                self.blocks.append(
                    Block("code", f"```\n{code}\n```", units=tuple(code.split("\n")))
                )
        elif tag == "li" and self._item is not None and self._lists:
            self._end_item()
        elif tag in ("ul", "ol") and self._lists:
            if self._item is not None:  # its last item's "</li>" left out
                self._end_item()
            items = self._lists.pop()
            ordered = self._ordered.pop()
            # Items keep their markers; an <ol>'s its numbers ("the third step" is asked
            # by number). A nested list's items arrive indented and already marked.
            marked: list[str] = []
            number = 0
            for item in items:
                if item.startswith("  "):
                    marked.append(item)
                else:
                    number += 1
                    marked.append(f"{number}. {item}" if ordered else f"- {item}")
            if self._lists:  # a nested list continues its parent's items, indented
                self._lists[-1].extend("  " + m for m in marked)
                if self._parents:
                    self._resumes = self._parents.pop()
                    self._item = []
            elif marked:
                self.blocks.append(Block("list", "\n".join(marked), units=tuple(marked)))
        elif tag in ("dt", "dd") and self._definition is not None:
            text = " ".join("".join(self._definition).split())
            self._definition = None
            if tag == "dt":
                self._term = text
            elif self._definitions is not None and text:
                # A term and its definition read as one item: "Export link lifetime: 7 days".
                self._definitions.append(f"{self._term}: {text}" if self._term else text)
        elif tag == "dl" and self._definitions is not None:
            rendered = tuple(f"- {d}" for d in self._definitions)
            if rendered:
                self.blocks.append(Block("list", "\n".join(rendered), units=rendered))
            self._definitions, self._term = None, ""
        elif tag in ("summary", "button") and self._summary:
            self._summary = False
            text = " ".join("".join(self._text).split())
            self._text = []
            if text:
                # An accordion's summary is the FAQ's question however it is written
                # ("The car park was full and I missed my train"): labelled as one,
                # it is read as the context of the answer below it, not as an answer.
                asked = text if text.endswith("?") else f"Q: {text}"
                self.blocks.append(Block("paragraph", asked))
        elif tag in ("td", "th", "tr"):
            self._close_cell()
        elif tag == "table" and self._table is not None:
            self._close_cell()
            self._emit_table(self._table)
            self._table = None
        elif tag in _BLOCK_TAGS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if not self._reading and not self._in_title:
            return
        if self._in_title:
            self.title = ((self.title or "") + data).strip() or None
        elif self._cell is not None:
            self._cell.append(data)
        elif self._definition is not None:
            self._definition.append(data)
        elif self._item is not None:
            self._item.append(data)
        elif self._table is None:
            self._text.append(data)

    def close(self) -> None:
        super().close()
        self._flush()
        # What follows a set of tabs belongs to the section again, not to the last tab:
        # its heading is repeated there (last first, so the indexes hold).
        for end, section in reversed(self._panel_ends):
            following = self.blocks[end] if end < len(self.blocks) else None
            if following is not None and following.kind != "heading":
                self.blocks.insert(end, self.blocks[section])

    def _end_item(self) -> None:
        """The open item's words into its list, a new item or the rest of the item
        whose nested list just ended; no item is open after it."""
        assert self._item is not None
        text = " ".join("".join(self._item).split())
        self._item = None
        items, resumes, self._resumes = self._lists[-1], self._resumes, None
        # The parent may have had no words of its own ("<li><ol>…</ol>then…"): then
        # there is no item to resume (its index was -1 into an empty list, an
        # IndexError), and the words after the nested list are an item of their own.
        if resumes is not None and 0 <= resumes < len(items):
            if text:
                items[resumes] += " " + text
        elif text:
            items.append(text)

    def _flush(self) -> None:
        if self._heading is not None or self._pre:
            return
        text = " ".join("".join(self._text).split())
        self._text = []
        if text:
            # "<p>* Billed annually.</p>" is a footnote, not a Markdown list item.
            self.blocks.append(Block("paragraph", _LEADING_STAR.sub(r"\\*", text)))

    def _close_cell(self) -> None:
        """The open cell's words into its row; nothing when no cell is open."""
        if self._cell is None or not self._table:
            self._cell = None
            return
        text = " ".join("".join(self._cell).split()).replace(" ;", ";")
        self._table[-1].cells.append(text.replace("|", "\\|"))
        self._cell = None

    def _emit_table(self, table: list[_Row]) -> None:
        rows = _grid([r for r in table if r.cells])
        if not rows:
            return
        # Header rows spread over two rows ("Price per seat" spanning "Monthly" and
        # "Annual") read as one: each column named by all of its header cells.
        heads = 0
        while heads < len(rows) - 1 and rows[heads][1] and rows[heads][2]:
            heads += 1
        if heads > 1:
            names = [
                " ".join(dict.fromkeys(c for c in column if c))
                for column in zip(*(r[0] for r in rows[:heads]), strict=True)
            ]
            rows = [(names, True, True), *rows[heads:]]
        width = max(len(cells) for cells, _, _ in rows)

        def line(cells: list[str]) -> str:
            return "| " + " | ".join(cells + [""] * (width - len(cells))) + " |"

        # The first row is the header whether or not it used <th>: a table's
        # rows are only meaningful with their column names. Except where no cell is
        # a <th> and a cell of the first row reads as a value, not a column's name
        # ("Support hours | 9am to 5pm", "How to pay | Lineside app, ParkLine app or
        # pay machines (card and contactless only)"): that is a table of labelled
        # values, every row of it data; promoted to a header, its value named every
        # other row's value. A table of two columns without a <th> is one too ("Email |
        # support@…", "Status page | status.…"): a header of two names is written
        # with <th> where a page means one, and a label promoted to a header garbles
        # every row, where a header read as data only loses two column names. A <th>
        # that heads its row ("<th scope="row">321</th><td>Voicemail</td>") names the
        # row, not the columns: only a row of <th> alone is a header row.
        labelled = not any(every for _, _, every in rows) and (
            width == 2 or not all(_names_a_column(cell) for cell in rows[0][0])
        )
        head = [""] * width if labelled else rows[0][0]
        header = line(head) + "\n" + "|" + " --- |" * width
        body = tuple(line(cells) for cells, _, _ in (rows if labelled else rows[1:]))
        self.blocks.append(Block("table", "\n".join([header, *body]), units=body, header=header))


def _opens_a_panel(attrs: dict[str, str | None], in_accordion: bool) -> bool:
    """Whether a <button> is an accordion's question rather than a control."""
    if attrs.get("role") == "tab":
        return False
    return in_accordion or "aria-expanded" in attrs or "aria-controls" in attrs


def _names_a_column(cell: str) -> bool:
    """Whether a cell reads as a column's name: a few words, no number, no sentence."""
    return (
        len(cell.split()) <= 4
        and not any(ch.isdigit() for ch in cell)
        and not any(mark in cell for mark in ',;()@/".')
        and not cell.endswith((".", "!"))
    )


@dataclass
class _Row:
    """One <tr> as read: its cells' text, each cell's (colspan, rowspan) and whether
    it was a <th>."""

    cells: list[str] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)
    heads: list[bool] = field(default_factory=list)


def _span(value: str | None, most: int) -> int:
    """A colspan or rowspan: 1 unless a number, at most ``most`` (a page's "9999"
    must not make a table of millions of cells)."""
    try:
        return max(1, min(int(value or 1), most))
    except ValueError:
        return 1


def _grid(rows: list[_Row]) -> list[tuple[list[str], bool, bool]]:
    """The rows with their spans laid out: a cell that spans columns fills each of
    them, one that spans rows fills its column in the rows below. Each row: its
    cells, whether any cell was a <th>, whether every cell was."""
    out: list[tuple[list[str], bool, bool]] = []
    below: dict[int, list[Any]] = {}  # column -> [text, rows still to fill]
    for row in rows:
        cells: list[str] = []
        heads: list[bool] = []
        for text, (across, down), th in zip(row.cells, row.spans, row.heads, strict=False):
            _carry(below, cells, heads)
            for _ in range(across):
                if down > 1:
                    below[len(cells)] = [text, down - 1, th]
                cells.append(text)
                heads.append(th)
        _carry(below, cells, heads)
        out.append((cells, any(heads), all(heads)))
    return out


def _carry(below: dict[int, list[Any]], cells: list[str], heads: list[bool]) -> None:
    """Fill the row's next columns from the cells above that span down into them."""
    while len(cells) in below:
        column = below[len(cells)]
        cells.append(column[0])
        heads.append(column[2])
        column[1] -= 1
        if column[1] == 0:
            del below[len(cells) - 1]


def _read_html(text: str, *, scoped: bool) -> _HtmlBlocks:
    parser = _HtmlBlocks()
    parser.scoped = scoped
    parser.feed(text)
    parser.close()
    return parser


def _html_blocks(text: str) -> list[Block]:
    """The blocks of an HTML fragment (a Markdown document's HTML block)."""
    return _read_html(text, scoped=False).blocks


def parse_html(text: str) -> Parsed:
    parser = _read_html(text, scoped=bool(_MAIN_START.search(text)))
    first_h1 = next((b.text for b in parser.blocks if b.kind == "heading" and b.level == 1), None)
    title = parser.title
    # "How do I reset my password? | Acme Help Center": the article's own heading.
    if title is None or (first_h1 and title != first_h1 and title.startswith(first_h1)):
        title = first_h1
    return Parsed(blocks=parser.blocks, meta=parser.meta, title=title)


# -- PDF --------------------------------------------------------------------


def _parse_pdf(data: bytes) -> Parsed:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
        info = reader.metadata
    except (PdfReadError, ValueError, KeyError, OSError) as exc:
        raise ParseError(f"not a readable PDF: {exc}") from exc
    title = str(info.title).strip() if info is not None and info.title else None
    return Parsed(blocks=text_blocks(pdf_text(pages)), title=title or None)


# "12", "Page 3", "3 / 12", "Page 3 of 12": a page's number, no content.
_PAGE_NUMBER = re.compile(r"^(?:page\s+)?\d{1,4}(?:\s*(?:/|of)\s*\d{1,4})?$", re.I)
# A word broken at a line's end: "configu-" over "ration".
_BROKEN_WORD = re.compile(r"(?<=[a-z])-\n(?=[a-z])")


def pdf_text(pages: list[str]) -> str:
    """The pages' text as a reader sees it, each page a paragraph of its own unless
    a sentence runs on over the break.

    A PDF's running header and footer ("Acme Help Center | Billing guide", "Page
    3 of 12") are text on every page: they were read into the sentence that runs
    across the page break and into every chunk. A line on at least 60 % of the
    pages of a document of three or more pages, and a line that is only a page
    number, are left out; a word hyphenated across a line break is joined.
    """
    # Lines keep their indent: a table's cell wrapped under itself is told by it.
    lines = [[line.rstrip() for line in page.splitlines()] for page in pages]
    counts = Counter(ln.strip() for page_lines in lines for ln in set(page_lines) if ln.strip())
    running = {ln for ln, n in counts.items() if len(pages) >= 3 and n >= 0.6 * len(pages)}
    if len(pages) == 2:
        # Two pages: the same line of four words or more opening (or closing) both
        # is their running header (or footer); a short one may be a heading.
        texts = _texts(lines)
        for edge in (0, -1):
            ends = {page[edge].strip() if page else "" for page in texts}
            if len(ends) == 1 and len(next(iter(ends)).split()) >= 4:
                running |= ends
    text = ""
    for page_lines in lines:
        page = "\n".join(
            ln
            for ln in page_lines
            if ln.strip() and ln.strip() not in running and not _PAGE_NUMBER.match(ln.strip())
        )
        if not page:
            continue
        # A sentence that runs on over the page break stays one paragraph.
        runs_on = text and not text.endswith((".", "!", "?", ":")) and page[0].islower()
        text += ("\n" if runs_on else "\n\n" if text else "") + page
    return _BROKEN_WORD.sub("", text)


def _texts(lines: list[list[str]]) -> list[list[str]]:
    """Each page's lines that hold text, without its page number."""
    return [
        [ln for ln in page if ln.strip() and not _PAGE_NUMBER.match(ln.strip())] for page in lines
    ]
