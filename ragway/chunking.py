"""Structural blocks → chunks: structure first, then a size limit.

1. Headings open sections; every chunk carries its heading path.
2. Within a section, whole blocks (paragraph, list, table, code) are packed into
   chunks of at most ``max_words`` words; a block is never cut while it fits.
3. Only a block longer than the limit is split, along its own structure: a list
   between items, a table between rows (every piece repeats the header row), a
   code block between lines (every piece re-fenced), a paragraph between
   sentences. A single unit longer than the limit is cut at word boundaries.

Chunk ids are stable: the document id, ``#``, a slug of the heading path, and
``-2``, ``-3``… for later pieces of the same path, counting on past any id
already taken in the document, so ids are unique within it. ``duplicate_rate`` measures
how many chunks repeat another's text (boilerplate, copied sections).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from ragway.parsing import Block
from ragway.units import footnote_mark

MAX_CHUNK_WORDS = 220
_SLUG = re.compile(r"[^a-z0-9]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_FENCE = re.compile(r"^(```+|~~~+)(.*)$")


@dataclass(frozen=True)
class Piece:
    chunk_id: str
    section: str  # heading path, " > " separated
    text: str


def slug(text: str) -> str:
    return _SLUG.sub("-", text.lower()).strip("-") or "section"


def words(text: str) -> int:
    return len(text.split())


def sections(blocks: Iterable[Block]) -> Iterator[tuple[list[str], list[Block]]]:
    """(heading path, blocks) per section, in document order."""
    path: list[tuple[int, str]] = []
    current: list[Block] = []
    for block in blocks:
        if block.kind == "heading":
            yield [t for _, t in path], current
            path = [(lv, t) for lv, t in path if lv < block.level] + [(block.level, block.text)]
            current = []
        else:
            current.append(block)
    yield [t for _, t in path], current


def chunk_blocks(
    document_id: str, title: str, blocks: Sequence[Block], *, max_words: int = MAX_CHUNK_WORDS
) -> list[Piece]:
    if max_words < 10:
        raise ValueError(f"max_words must be at least 10, got {max_words}")
    seen: dict[str, int] = {}
    used: set[str] = set()
    pieces: list[Piece] = []
    for headings, section_blocks in sections(blocks):
        if not section_blocks:
            continue
        # The document title is usually the top heading: keep the path below it.
        trail = headings[1:] if headings and headings[0] == title else headings
        section = " > ".join(trail)
        base = slug(section) if section else "intro"
        for text in pack(section_blocks, max_words):
            n = seen.get(base, 0)
            name = f"{base}-{n + 1}" if n else base
            # A piece suffix can spell another heading's slug ("Step" split in
            # two gives step-2, as does a heading "Step 2"): the first to claim
            # an id keeps it, the other counts on, so no chunk replaces another.
            while name in used:
                n += 1
                name = f"{base}-{n + 1}"
            seen[base] = n + 1
            used.add(name)
            pieces.append(Piece(f"{document_id}#{name}", section, text))
    return pieces


def pack(blocks: Sequence[Block], max_words: int) -> list[str]:
    """Greedy packing of structural units into texts of at most ``max_words`` words."""
    units: list[str] = []
    at = 0
    while at < len(blocks):
        block = blocks[at]
        at += 1
        if block.kind != "table":
            units += split_block(block, max_words)
            continue
        notes: list[str] = []
        while at < len(blocks) and _note_of(blocks[at], block):
            notes.append(blocks[at].text)
            at += 1
        units += _table_with_notes(block, notes, max_words)
    out: list[str] = []
    current: list[str] = []
    size = 0
    for unit in units:
        n = words(unit)
        if current and size + n > max_words:
            out.append("\n\n".join(current))
            current, size = [], 0
        current.append(unit)
        size += n
    if current:
        out.append("\n\n".join(current))
    return out


def _note_of(block: Block, table: Block) -> bool:
    """Whether ``block`` is a footnote under ``table``: a paragraph that starts with
    a mark one of the table's cells or headers carries ("pay day†" over "† Same-day
    runs are limited to $25,000 per run")."""
    mark = footnote_mark(block.text) if block.kind == "paragraph" else None
    return mark is not None and mark in table.text


def _table_with_notes(table: Block, notes: Sequence[str], max_words: int) -> list[str]:
    """A table and the footnotes under it, never packed apart: a row says what its
    mark means only beside its note (units.py reads them together), and a note
    alone ("4G home broadband for addresses that can't get a fixed line") no longer
    says which row it qualifies. A table split into pieces gives each piece the notes
    its rows or header point to; notes longer than half a chunk stay on their own."""
    size = sum(words(n) for n in notes)
    if not notes or size > max_words // 2:
        alone = [u for n in notes for u in _group([n], max_words, " ")]
        return split_block(table, max_words) + alone
    whole = "\n\n".join([table.text, *notes])
    if words(whole) <= max_words or not table.units:
        return [whole]
    budget = max(1, max_words - words(table.header) - size)
    pieces = [f"{table.header}\n{rows}" for rows in _group(table.units, budget, "\n")]
    # A paragraph of notes may hold several, one per line ("\\* …", "† …", "¹ …").
    marks = [{m for line in n.splitlines() if (m := footnote_mark(line))} for n in notes]
    out: list[str] = []
    for n, piece in enumerate(pieces):
        last = n == len(pieces) - 1
        # A note no row points to goes with the last piece, so it is never lost.
        mine = [
            note
            for note, its in zip(notes, marks, strict=True)
            if any(m in piece for m in its)
            or (last and not any(m in p for m in its for p in pieces))
        ]
        out.append("\n\n".join([piece, *mine]))
    return out


def split_block(block: Block, max_words: int) -> list[str]:
    """The block whole when it fits, else pieces along its own structure."""
    if words(block.text) <= max_words:
        return [block.text]
    if block.kind == "table" and block.units:
        budget = max(1, max_words - words(block.header))
        return [f"{block.header}\n{rows}" for rows in _group(block.units, budget, "\n")]
    if block.kind == "code" and block.units:
        fence, lang = "```", ""
        first = block.text.split("\n", 1)[0]
        if m := _FENCE.match(first):
            fence, lang = m.group(1), m.group(2).strip()
        return [
            f"{fence}{lang}\n{lines}\n{fence}" for lines in _group(block.units, max_words, "\n")
        ]
    if block.kind == "list" and block.units:
        return _group(block.units, max_words, "\n")
    return _group(_SENTENCE_END.split(block.text), max_words, " ")


def _group(units: Sequence[str], max_words: int, sep: str) -> list[str]:
    out: list[str] = []
    current: list[str] = []
    size = 0
    for unit in units:
        for part in _cut(unit, max_words):
            n = words(part)
            if current and size + n > max_words:
                out.append(sep.join(current))
                current, size = [], 0
            current.append(part)
            size += n
    if current:
        out.append(sep.join(current))
    return out


def _cut(unit: str, max_words: int) -> list[str]:
    """A unit longer than the limit, cut at word boundaries (its layout is lost)."""
    tokens = unit.split()
    if len(tokens) <= max_words:
        return [unit]
    return [" ".join(tokens[i : i + max_words]) for i in range(0, len(tokens), max_words)]


def text_digest(text: str) -> str:
    """Digest of a chunk's text with whitespace and case normalised."""
    return hashlib.sha256(" ".join(text.lower().split()).encode()).hexdigest()


def duplicate_rate(texts: Iterable[str]) -> float:
    """Share of chunks whose normalised text already appeared earlier."""
    seen: set[str] = set()
    total = dups = 0
    for text in texts:
        total += 1
        digest = text_digest(text)
        if digest in seen:
            dups += 1
        seen.add(digest)
    return dups / total if total else 0.0
