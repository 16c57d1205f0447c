"""A chunk as the stored document (payload, ``_source``) every engine keeps beside it."""

from __future__ import annotations

import base64
import binascii
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


def dense_payload(c: ChunkRecord) -> dict[str, Any]:
    """The payload the dense engines keep: the chunk and its answer-unit vectors.

    Only the dense engines store the vectors: their payloads take new keys as they
    come, where the sparse indexes have fixed schemas (tantivy's schema version,
    OpenSearch's strict mapping) that existing builds were created with.
    """
    payload = chunk_payload(c)
    if c.unit_vectors:
        payload["unit_vectors"] = base64.b64encode(c.unit_vectors).decode("ascii")
    return payload


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
        unit_vectors=_unit_vectors(p.get("unit_vectors")),
    )


def _unit_vectors(value: Any) -> bytes:
    # Points written before unit vectors existed have none; a damaged value is
    # treated the same (the generator then embeds the units itself).
    if not isinstance(value, str) or not value:
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""
