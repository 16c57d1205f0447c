"""Pseudo-queries made from a knowledge base's own documents (no labels needed).

A help centre has no judged queries, but its structure says what each chunk is
about. Four kinds of query come out of a chunk, each paired with that chunk as
the relevant passage:

- ``heading``: the page title and heading path ("Deleted files Restore a file"),
  which is how a search box is used;
- ``first-sentence``: a section's first sentence, asked of the rest of the
  section (the sentence is cut from every passage of the group, so the answer is
  not a copy of the question);
- ``keyphrase``: the chunk's most distinctive words against the rest of the
  tenant's chunks (idf-weighted), a keyword query;
- ``table-row``: a table row's key with a column header ("Business Storage"),
  the way table cells are asked for.

Only current documents count: deprecated and draft pages are never served, so
they are neither positives nor negatives. Everything here is per tenant and pure
(no model, no retriever), which is what the unit tests pin.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ragway.reranker_artifact import passage_text
from ragway.text import STOPWORDS, split_sentences
from ragway.units import is_table_separator

KINDS = ("heading", "first-sentence", "keyphrase", "table-row")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9]|[A-Za-z]")


@dataclass(frozen=True)
class SourceChunk:
    """The fields of a chunk that training reads (a ``retriever_pb2.Chunk`` has them)."""

    tenant: str
    document_id: str
    chunk_id: str
    title: str
    section: str
    text: str

    @property
    def passage(self) -> str:
        """What the retriever reranks for this chunk (``ChunkRecord.embedding_text``)."""
        return passage_text(self.title, self.text, self.section)


@dataclass(frozen=True)
class PseudoQuery:
    tenant: str
    chunk_id: str
    kind: str
    query: str

    @property
    def key(self) -> str:
        return f"{self.tenant}\x1f{self.chunk_id}\x1f{self.kind}\x1f{self.query}"


def render(chunk: SourceChunk, kind: str) -> str:
    """The passage text a group of this ``kind`` shows the model, for any chunk in it.

    ``first-sentence`` groups see every passage without its first sentence, so
    the positive does not contain the query verbatim while the negatives do not
    differ from it in shape either.
    """
    if kind != "first-sentence":
        return chunk.passage
    sentences = split_sentences(chunk.text)
    rest = " ".join(sentences[1:]) if len(sentences) > 1 else chunk.text
    return passage_text(chunk.title, rest, chunk.section)


def heading_query(chunk: SourceChunk) -> str | None:
    parts = [chunk.title, *[p.strip() for p in chunk.section.split(">")]]
    query = " ".join(dict.fromkeys(p for p in parts if p))
    return query if len(query.split()) >= 2 else None


def first_sentence_query(chunk: SourceChunk) -> str | None:
    if chunk.text.lstrip().startswith(("|", "-", "*", "```", "1.")):
        return None  # a table, list or code block has no first sentence to ask with
    sentences = split_sentences(chunk.text)
    if len(sentences) < 2:
        return None  # nothing would be left to answer it
    first = " ".join(sentences[0].split())
    return first if 5 <= len(first.split()) <= 40 else None


def table_row_queries(chunk: SourceChunk, *, per_row: int = 2) -> list[str]:
    """ "<row key> <column header>" for the first ``per_row`` value columns of each row."""
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in chunk.text.splitlines()
        if line.lstrip().startswith("|") and not is_table_separator(line)
    ]
    if len(rows) < 2:
        return []
    header, body = rows[0], rows[1:]
    out: list[str] = []
    for row in body:
        key = _plain(row[0]) if row else ""
        if not key:
            continue
        columns = [h for h in (_plain(h) for h in header[1:]) if h][:per_row]
        out.extend(f"{key} {column}" for column in columns)
    return out


def keyphrase_query(terms: Counter[str], idf: dict[str, float], *, size: int = 4) -> str | None:
    scored = sorted(terms, key=lambda t: (-terms[t] * idf.get(t, 0.0), t))
    picked = [t for t in scored if idf.get(t, 0.0) > 0][:size]
    return " ".join(picked) if len(picked) >= 2 else None


def generate(
    chunks: Sequence[SourceChunk], *, kinds: Sequence[str] = KINDS, table_rows: int = 6
) -> list[PseudoQuery]:
    """Every kind's queries for the chunks of ONE tenant (mixing tenants is refused)."""
    tenants = {c.tenant for c in chunks}
    if len(tenants) > 1:
        raise ValueError(f"pseudo-queries are made per tenant; got {sorted(tenants)}")
    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown pseudo-query kind(s) {sorted(unknown)}; known: {KINDS}")
    terms = {c.chunk_id: _terms(c.passage) for c in chunks}
    df: Counter[str] = Counter()
    for counted in terms.values():
        df.update(counted.keys())
    n = max(1, len(chunks))
    # A term in most chunks names the product, not the chunk: idf ~0 drops it.
    idf = {t: math.log(n / d) for t, d in df.items()}
    out: list[PseudoQuery] = []
    for c in chunks:
        found: list[tuple[str, str | None]] = []
        if "heading" in kinds:
            found.append(("heading", heading_query(c)))
        if "first-sentence" in kinds:
            found.append(("first-sentence", first_sentence_query(c)))
        if "keyphrase" in kinds:
            found.append(("keyphrase", keyphrase_query(terms[c.chunk_id], idf)))
        if "table-row" in kinds:
            found.extend(("table-row", q) for q in table_row_queries(c)[:table_rows])
        seen: set[str] = set()
        for kind, query in found:
            if query and query.lower() not in seen:
                seen.add(query.lower())
                out.append(PseudoQuery(c.tenant, c.chunk_id, kind, query))
    return out


def held_out(query: PseudoQuery, fraction: float, salt: str = "") -> bool:
    """Whether a query's chunk is in the held-out slice (stable, by chunk, not by query).

    Splitting by chunk keeps a held-out chunk's other queries out of training, so
    early stopping measures chunks the model has not been shown as positives.
    """
    digest = hashlib.sha256(f"{salt}\x1f{query.tenant}\x1f{query.chunk_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def split(
    queries: Iterable[PseudoQuery], fraction: float, salt: str = ""
) -> tuple[list[PseudoQuery], list[PseudoQuery]]:
    train: list[PseudoQuery] = []
    heldout: list[PseudoQuery] = []
    for q in queries:
        (heldout if held_out(q, fraction, salt) else train).append(q)
    return train, heldout


def _plain(cell: str) -> str:
    """A table cell without Markdown emphasis or code marks."""
    return " ".join(cell.replace("**", "").replace("`", "").replace("*", "").split())


def _terms(text: str) -> Counter[str]:
    return Counter(
        w.lower()
        for w in _TOKEN.findall(text)
        if len(w) >= 4 and w.lower() not in STOPWORDS and not w.lower().startswith("http")
    )
