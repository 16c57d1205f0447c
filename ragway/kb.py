"""Documents from files or webhook payloads: metadata, parsing and chunks.

Formats (by file suffix or content type): Markdown (``.md``, ``.markdown``),
HTML (``.html``, ``.htm``), plain text (``.txt``) and PDF (``.pdf``). Metadata
comes from the source itself (YAML front matter in Markdown and text,
``<meta name="...">`` in HTML, the PDF's title), then from a sidecar file
``<file>.meta.yaml`` beside it, then from the loader's defaults:

    ---
    title: Streaming and replay       # default: first '# ' heading / <title>, else file name
    document_id: streaming            # default: path relative to the folder, no suffix
    url: /docs/streaming              # default: empty
    version: "1.0"                    # default: "1"
    tenant: demo                      # required (or the loader's --tenant)
    groups: [public]                  # required (or the loader's --groups)
    status: current                   # current | deprecated | draft
    effective_from: 2026-01-01        # optional dates (UTC)
    effective_to: 2027-01-01
    ---

Chunking (ragway.chunking) follows the structure: heading sections, whole
lists, tables and code blocks, a size limit applied afterwards. Chunk ids are
stable (document id + heading path + part), so reloading replaces rather than
duplicates.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ragway.chunking import MAX_CHUNK_WORDS, chunk_blocks, slug
from ragway.parsing import Parsed, ParseError, parse
from ragway.v1 import retriever_pb2

__all__ = ["MAX_CHUNK_WORDS", "Defaults", "Document", "DocumentError", "slug"]

SUFFIXES = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".txt": "text",
    ".pdf": "pdf",
}
CONTENT_TYPES = {
    "text/markdown": "markdown",
    "text/html": "html",
    "text/plain": "text",
    "application/pdf": "pdf",
}
SIDECAR = ".meta.yaml"
_STATUS = {
    "current": retriever_pb2.DOCUMENT_STATUS_CURRENT,
    "deprecated": retriever_pb2.DOCUMENT_STATUS_DEPRECATED,
    "draft": retriever_pb2.DOCUMENT_STATUS_DRAFT,
}


class DocumentError(ValueError):
    """A document that cannot be loaded, with the file and the reason."""


@dataclass(frozen=True)
class Defaults:
    """Metadata for documents that do not set it; None/empty makes the field required."""

    tenant: str | None = "demo"
    groups: tuple[str, ...] = ("public",)
    max_words: int = MAX_CHUNK_WORDS


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
    source_format: str = "markdown"
    checksum: str = ""  # sha256 of the source bytes


def parse_document(path: Path, root: Path, defaults: Defaults) -> Document:
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise DocumentError(
            f"{path}: unknown type {path.suffix or '(no suffix)'!r}; "
            f"known: {', '.join(sorted(SUFFIXES))}"
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DocumentError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    meta: dict[str, Any] = {}
    sidecar = path.with_name(path.name + SIDECAR)
    if sidecar.is_file():
        try:
            loaded = yaml.safe_load(sidecar.read_text(encoding="utf-8")) or {}
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise DocumentError(f"{path}: invalid sidecar {sidecar.name}: {exc}") from exc
        if not isinstance(loaded, dict):
            raise DocumentError(f"{path}: sidecar {sidecar.name} must hold a mapping")
        meta = loaded
    fallback_id = path.relative_to(root).with_suffix("").as_posix()
    try:
        return build_document(
            kind, data, meta, defaults, fallback_id=fallback_id, fallback_title=path.stem
        )
    except DocumentError as exc:
        raise DocumentError(f"{path}: {exc}") from None


def build_document(
    kind: str,
    data: bytes,
    overrides: dict[str, Any],
    defaults: Defaults,
    *,
    fallback_id: str = "",
    fallback_title: str = "",
) -> Document:
    """Parse ``data`` as ``kind`` and chunk it; ``overrides`` win over the source's metadata."""
    if not data.strip():
        raise DocumentError("empty document")
    try:
        parsed = parse(kind, data)
    except ParseError as exc:
        raise DocumentError(str(exc)) from None
    meta = parsed.meta | overrides
    if not any(b.kind != "heading" for b in parsed.blocks):
        raise DocumentError("empty document" if not parsed.blocks else "no text outside headings")
    doc = _document(kind, parsed, meta, defaults, fallback_id, fallback_title)
    doc.checksum = hashlib.sha256(data).hexdigest()
    pieces = chunk_blocks(doc.document_id, doc.title, parsed.blocks, max_words=defaults.max_words)
    doc.chunks = [
        retriever_pb2.Chunk(
            chunk_id=p.chunk_id,
            document_id=doc.document_id,
            tenant=doc.tenant,
            access_groups=doc.groups,
            status=doc.status,  # type: ignore[arg-type]
            effective_from_unix=doc.effective_from,
            effective_to_unix=doc.effective_to,
            version=doc.version,
            url=doc.url,
            title=doc.title,
            section=p.section,
            text=p.text,
        )
        for p in pieces
    ]
    return doc


def _document(
    kind: str,
    parsed: Parsed,
    meta: dict[str, Any],
    defaults: Defaults,
    fallback_id: str,
    fallback_title: str,
) -> Document:
    status_name = str(meta.get("status", "current"))
    if status_name not in _STATUS:
        raise DocumentError(f"status {status_name!r} is not one of {sorted(_STATUS)}")
    tenant = meta.get("tenant", defaults.tenant)
    if not tenant:
        raise DocumentError("missing required metadata: tenant (set it in the source or --tenant)")
    groups = meta.get("groups", list(defaults.groups) or None)
    if groups is None:
        raise DocumentError("missing required metadata: groups (set it in the source or --groups)")
    if isinstance(groups, str):
        groups = [groups]
    if not groups or not all(isinstance(g, str) and g for g in groups):
        raise DocumentError("groups must be a non-empty list of names")
    document_id = str(meta.get("document_id") or fallback_id)
    if not document_id:
        raise DocumentError("missing required metadata: document_id")
    effective_from = _unix(meta.get("effective_from"), "effective_from")
    effective_to = _unix(meta.get("effective_to"), "effective_to")
    if effective_to and effective_to <= effective_from:
        raise DocumentError("effective_to must be after effective_from")
    return Document(
        document_id=document_id,
        title=str(meta.get("title") or parsed.title or fallback_title or document_id),
        url=str(meta.get("url", "")),
        version=str(meta.get("version", "1")),
        tenant=str(tenant),
        groups=list(groups),
        status=_STATUS[status_name],
        effective_from=effective_from,
        effective_to=effective_to,
        body="\n\n".join(b.text for b in parsed.blocks),
        source_format=kind,
    )


def _unix(value: Any, name: str) -> int:
    if value in (None, ""):
        return 0
    if isinstance(value, str):
        try:
            value = (
                dt.date.fromisoformat(value)
                if len(value) == 10
                else dt.datetime.fromisoformat(value)
            )
        except ValueError:
            raise DocumentError(f"{name} must be a date like 2026-01-31, got {value!r}") from None
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    elif isinstance(value, dt.date):
        moment = dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
    else:
        raise DocumentError(f"{name} must be a date like 2026-01-31, got {value!r}")
    return int(moment.timestamp())


def discover(
    paths: Sequence[Path], suffixes: Sequence[str] | None = (".md",)
) -> list[tuple[Path, Path]]:
    """(file, root) pairs under the given files and folders.

    With ``suffixes`` only those files of a folder; with None every file but
    hidden ones and metadata sidecars (so unknown types get reported).
    """
    found: list[tuple[Path, Path]] = []
    for p in paths:
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                rel = f.relative_to(p).parts
                if not f.is_file() or any(part.startswith(".") for part in rel):
                    continue
                if f.name.endswith(SIDECAR):
                    continue
                if suffixes is None or f.suffix.lower() in suffixes:
                    found.append((f, p))
        elif p.is_file():
            found.append((p, p.parent))
        else:
            raise DocumentError(f"{p}: no such file or folder")
    return found
