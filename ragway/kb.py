"""Loads a folder of Markdown documents into a knowledge build through the retriever.

Each ``.md`` file is one document. Optional YAML front matter sets its metadata:

    ---
    title: Streaming and replay       # default: first '# ' heading, else file name
    document_id: streaming            # default: path relative to the folder, no suffix
    url: /docs/streaming              # default: empty
    version: "1.0"                    # default: "1"
    tenant: demo                      # default: the loader's --tenant
    groups: [public]                  # default: the loader's --groups
    status: current                   # current | deprecated | draft
    effective_from: 2026-01-01        # optional dates (UTC)
    effective_to: 2027-01-01
    ---

Chunks follow the headings: each section becomes one chunk carrying its heading
path; long sections split at paragraph boundaries. Chunk ids are stable
(document id + heading path + part), so reloading replaces rather than duplicates.
(Full parsing and chunking — HTML, tables, dedupe — comes with ingestion.)
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ragway.v1 import retriever_pb2

MAX_CHUNK_WORDS = 220
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)
_SLUG = re.compile(r"[^a-z0-9]+")
_STATUS = {
    "current": retriever_pb2.DOCUMENT_STATUS_CURRENT,
    "deprecated": retriever_pb2.DOCUMENT_STATUS_DEPRECATED,
    "draft": retriever_pb2.DOCUMENT_STATUS_DRAFT,
}


class DocumentError(ValueError):
    """A document that cannot be loaded, with the file and the reason."""


@dataclass(frozen=True)
class Defaults:
    tenant: str = "demo"
    groups: tuple[str, ...] = ("public",)


@dataclass
class Document:
    document_id: str
    title: str
    url: str
    version: str
    tenant: str
    groups: list[str]
    status: int
    effective_from: int
    effective_to: int
    body: str
    chunks: list[retriever_pb2.Chunk] = field(default_factory=list)


def slug(text: str) -> str:
    return _SLUG.sub("-", text.lower()).strip("-") or "section"


def parse_document(path: Path, root: Path, defaults: Defaults) -> Document:
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DocumentError(f"{path}: cannot read: {exc}") from exc
    meta: dict[str, Any] = {}
    match = _FRONT_MATTER.match(raw)
    if match:
        try:
            loaded = yaml.safe_load(match.group(1)) or {}
        except yaml.YAMLError as exc:
            raise DocumentError(f"{path}: invalid front matter: {exc}") from exc
        if not isinstance(loaded, dict):
            raise DocumentError(f"{path}: front matter must be a mapping")
        meta = loaded
        raw = raw[match.end() :]
    if not raw.strip():
        raise DocumentError(f"{path}: empty document")
    status_name = str(meta.get("status", "current"))
    if status_name not in _STATUS:
        raise DocumentError(f"{path}: status {status_name!r} is not one of {sorted(_STATUS)}")
    groups = meta.get("groups", list(defaults.groups))
    if isinstance(groups, str):
        groups = [groups]
    if not groups or not all(isinstance(g, str) and g for g in groups):
        raise DocumentError(f"{path}: groups must be a non-empty list of names")
    first_heading = next((m.group(2) for m in map(_HEADING.match, raw.splitlines()) if m), None)
    doc = Document(
        document_id=str(
            meta.get("document_id") or path.relative_to(root).with_suffix("").as_posix()
        ),
        title=str(meta.get("title") or first_heading or path.stem),
        url=str(meta.get("url", "")),
        version=str(meta.get("version", "1")),
        tenant=str(meta.get("tenant", defaults.tenant)),
        groups=list(groups),
        status=_STATUS[status_name],
        effective_from=_unix(meta.get("effective_from"), path, "effective_from"),
        effective_to=_unix(meta.get("effective_to"), path, "effective_to"),
        body=raw,
    )
    doc.chunks = list(_chunks(doc))
    if not doc.chunks:
        raise DocumentError(f"{path}: no text outside headings and code")
    return doc


def _unix(value: Any, path: Path, name: str) -> int:
    if value in (None, ""):
        return 0
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    elif isinstance(value, dt.date):
        moment = dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
    else:
        raise DocumentError(f"{path}: {name} must be a date like 2026-01-31, got {value!r}")
    return int(moment.timestamp())


def _sections(body: str) -> Iterator[tuple[list[str], str]]:
    """(heading path, text) per section; code fences never hold headings."""
    path: list[tuple[int, str]] = []
    lines: list[str] = []
    in_code = False
    for line in body.splitlines():
        if line.strip().startswith("```"):
            in_code = not in_code
        heading = None if in_code else _HEADING.match(line)
        if heading:
            yield [t for _, t in path], "\n".join(lines).strip()
            level = len(heading.group(1))
            path = [(lv, t) for lv, t in path if lv < level] + [(level, heading.group(2))]
            lines = []
        else:
            lines.append(line)
    yield [t for _, t in path], "\n".join(lines).strip()


def _split(text: str, max_words: int) -> list[str]:
    """Paragraph-aligned pieces of at most ~max_words (a longer paragraph stays whole)."""
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for para in re.split(r"\n\s*\n", text):
        n = len(para.split())
        if current and size + n > max_words:
            pieces.append("\n\n".join(current))
            current, size = [], 0
        current.append(para)
        size += n
    if current:
        pieces.append("\n\n".join(current))
    return pieces


def _chunks(doc: Document) -> Iterator[retriever_pb2.Chunk]:
    seen: dict[str, int] = {}
    for headings, text in _sections(doc.body):
        if not text:
            continue
        # The document title is usually the top heading: keep the path below it.
        trail = headings[1:] if headings and headings[0] == doc.title else headings
        section = " > ".join(trail)
        base = slug(section) if section else "intro"
        for part in _split(text, MAX_CHUNK_WORDS):
            n = seen.get(base, 0)
            seen[base] = n + 1
            yield retriever_pb2.Chunk(
                chunk_id=f"{doc.document_id}#{base}" + (f"-{n + 1}" if n else ""),
                document_id=doc.document_id,
                tenant=doc.tenant,
                access_groups=doc.groups,
                status=doc.status,  # type: ignore[arg-type]
                effective_from_unix=doc.effective_from,
                effective_to_unix=doc.effective_to,
                version=doc.version,
                url=doc.url,
                title=doc.title,
                section=section,
                text=part,
            )


def discover(paths: Sequence[Path]) -> list[tuple[Path, Path]]:
    """(file, root) pairs for every .md file under the given files and folders."""
    found: list[tuple[Path, Path]] = []
    for p in paths:
        if p.is_dir():
            found.extend((f, p) for f in sorted(p.rglob("*.md")))
        elif p.is_file():
            found.append((p, p.parent))
        else:
            raise DocumentError(f"{p}: no such file or folder")
    return found
