"""A chunk as the stored document (payload, ``_source``) every engine keeps beside it."""

from __future__ import annotations

from typing import Any

from services.retriever.model import ChunkRecord, Status


def chunk_payload(c: ChunkRecord) -> dict[str, Any]:
    return {
        "chunk_id": c.chunk_id,
        "document_id": c.document_id,
        "tenant": c.tenant,
        "access_groups": list(c.access_groups),
        "status": c.status.value,
        "effective_from": c.effective_from,
        "effective_to": c.effective_to,
        "version": c.version,
        "url": c.url,
        "title": c.title,
        "section": c.section,
        "text": c.text,
    }


def chunk_from_payload(p: dict[str, Any]) -> ChunkRecord:
    return ChunkRecord(
        chunk_id=p["chunk_id"],
        document_id=p["document_id"],
        tenant=p["tenant"],
        access_groups=tuple(p["access_groups"]),
        status=Status(p["status"]),
        effective_from=int(p["effective_from"]),
        effective_to=int(p["effective_to"]),
        version=p["version"],
        url=p["url"],
        title=p["title"],
        section=p["section"],
        text=p["text"],
    )
