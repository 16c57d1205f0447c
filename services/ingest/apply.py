"""What a worker does with one delivery. Plain functions: the Celery task only calls them.

Every step is idempotent: a document is replaced by deleting its chunks and
upserting the new ones under stable chunk ids, so running a delivery twice (a
worker killed mid-task, a redelivery) leaves the same index as running it once.
Changes reach the live build and, when one is being prepared, the candidate.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import grpc
from pydantic import ValidationError

from ragway import redaction
from ragway.build_targets import target_builds
from ragway.kb import CONTENT_TYPES, Defaults, DocumentError, build_document
from ragway.v1 import retriever_pb2 as pb
from ragway.v1 import retriever_pb2_grpc as pb_grpc
from services.ingest.deliveries import TERMINAL, DeliveryStore
from services.ingest.models import (
    PAYLOAD,
    DocumentAccessChanged,
    DocumentDeleted,
    DocumentUpserted,
)

log = logging.getLogger(__name__)
_TRANSIENT = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNKNOWN,
}
_STATUS = {
    "current": pb.DOCUMENT_STATUS_CURRENT,
    "deprecated": pb.DOCUMENT_STATUS_DEPRECATED,
    "draft": pb.DOCUMENT_STATUS_DRAFT,
}
# The document lease. Renewed before every retriever write (each bounded by its
# deadline, far below this), so a long apply keeps it and a lost one stops the writes.
LOCK_TTL_S = 300


class TransientError(RuntimeError):
    """Worth retrying: the retriever is away or busy, or another worker holds the document."""


class PermanentError(ValueError):
    """Retrying cannot help: the document itself is bad. It goes to the dead letters."""


@dataclass(frozen=True)
class Outcome:
    state: str  # done | superseded | skipped (already terminal)
    builds: tuple[str, ...] = ()
    chunks: int = 0


def doc_key(tenant: str, document_id: str) -> str:
    return f"{tenant}\x1f{document_id}"


def process(
    store: DeliveryStore, stub: pb_grpc.RetrieverStub, delivery_id: str, *, timeout_s: float
) -> Outcome:
    """Apply one recorded delivery. Raises TransientError or PermanentError."""
    record = store.get(delivery_id)
    body = store.body(delivery_id)
    if record is None or body is None:
        # Expired or never recorded: nothing to do, and nothing a retry would find.
        log.warning("delivery not found", extra={"delivery_id": delivery_id})
        return Outcome("skipped")
    if record["state"] in TERMINAL:
        return Outcome("skipped")
    try:
        payload = PAYLOAD.validate_json(body)
    except ValidationError as exc:
        raise PermanentError(f"stored body no longer validates: {exc}") from None
    ref = payload.document
    key = doc_key(ref.tenant, ref.id)
    occurred = payload.occurred_at or float(record["signed_at"])
    owner = delivery_id
    if not store.lock_document(key, owner, LOCK_TTL_S):
        raise TransientError(f"document {ref.id!r} is being applied by another delivery")
    try:
        # Under the lease, so no other delivery of this document moves it meanwhile.
        newest = store.newest_applied(key)
        if newest is not None and occurred < newest:
            return Outcome("superseded")

        def renew() -> None:
            if not store.lock_document(key, owner, LOCK_TTL_S):
                # Frozen past the lease while another delivery took the document: its
                # writes are the ones that count now; this one stops and is retried.
                raise TransientError(f"document {ref.id!r}: the lease was lost to another delivery")

        outcome = _apply(stub, payload, timeout_s, renew)
        _redact(store, payload)
        store.advance(key, occurred)
        return outcome
    finally:
        store.unlock_document(key, owner)


def _redact(
    store: DeliveryStore, payload: DocumentUpserted | DocumentDeleted | DocumentAccessChanged
) -> None:
    """Take the document's text out of the runs that read it (ragway/redaction.py).

    After the retriever writes, so no new run reads it; before the delivery is marked
    applied, so a Redis error here retries the whole (idempotent) delivery. Every access
    change counts, not only a removed group: which groups lost it is not known here,
    and the run's next reader may be anyone of the old ones.
    """
    if isinstance(payload, DocumentUpserted):
        return
    reason = (
        redaction.Reason.DOCUMENT_DELETED
        if isinstance(payload, DocumentDeleted)
        else redaction.Reason.ACCESS_CHANGED
    )
    ref = payload.document
    runs = redaction.redact_document(store.client, ref.tenant, ref.id, reason)
    if runs:
        log.info(
            "runs redacted",
            extra={
                "tenant": ref.tenant,
                "document_id": ref.id,
                "reason": reason.value,
                "runs": runs,
            },
        )


def _apply(
    stub: pb_grpc.RetrieverStub,
    payload: DocumentUpserted | DocumentDeleted | DocumentAccessChanged,
    timeout_s: float,
    renew: Callable[[], None],
) -> Outcome:
    ref = payload.document
    chunks: list[pb.Chunk] = []
    if isinstance(payload, DocumentUpserted):
        d = payload.document
        meta = {
            "document_id": d.id,
            "tenant": d.tenant,
            "groups": d.groups,
            "url": d.url,
            "version": d.version,
            "status": d.status,
            "effective_from": d.effective_from,
            "effective_to": d.effective_to,
        } | ({"title": d.title} if d.title else {})
        try:
            doc = build_document(
                CONTENT_TYPES[d.content_type],
                d.source_bytes(),
                meta,
                Defaults(tenant=None, groups=()),
                fallback_title=d.id,
            )
        except DocumentError as exc:
            raise PermanentError(f"document {d.id!r}: {exc}") from None
        chunks = doc.chunks
    try:
        builds = tuple(target_builds(stub, timeout_s))
        for build in builds:
            renew()
            if isinstance(payload, DocumentAccessChanged):
                a = payload.document
                stub.UpdateAccess(
                    pb.UpdateAccessRequest(
                        build=build,
                        tenant=a.tenant,
                        document_id=a.id,
                        access_groups=a.groups or [],
                        status=_STATUS[a.status] if a.status else pb.DOCUMENT_STATUS_UNSPECIFIED,
                        origin=pb.WRITE_ORIGIN_INCREMENTAL,
                    ),
                    timeout=timeout_s,
                )
                continue
            if not chunks:  # a deletion
                stub.Delete(
                    pb.DeleteRequest(
                        tenant=ref.tenant,
                        document_ids=[ref.id],
                        build=build,
                        origin=pb.WRITE_ORIGIN_INCREMENTAL,
                    ),
                    timeout=timeout_s,
                )
            for start in range(0, len(chunks), 64):
                renew()
                stub.Upsert(
                    pb.UpsertRequest(
                        chunks=chunks[start : start + 64],
                        build=build,
                        origin=pb.WRITE_ORIGIN_INCREMENTAL,
                        # The first call replaces the old version in one write, so
                        # searches keep finding it while the new one embeds.
                        replace_documents=start == 0,
                    ),
                    timeout=timeout_s,
                )
    except grpc.RpcError as exc:
        code = exc.code()
        message = f"retriever: {code.name}: {exc.details()}"
        if code in _TRANSIENT:
            raise TransientError(message) from None
        raise PermanentError(message) from None
    return Outcome("done", builds, len(chunks))
