"""Webhook signatures: HMAC-SHA256 over ``<timestamp>.<delivery id>.<raw body>``.

    X-Ragway-Timestamp: 1796020562            (unix seconds, when the sender signed)
    X-Ragway-Delivery:  <unique id per delivery; retries of one delivery reuse it>
    X-Ragway-Signature: sha256=<hex digest>   (of b"1796020562.<delivery id>." + body)

Signing the timestamp with the body lets the receiver refuse a captured request
replayed later; signing the delivery id too means a captured request cannot be
replayed within the window under a fresh id (as a new delivery), so the
delivery id's idempotency makes every replay harmless.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Sequence

SCHEME = "sha256="
_DIGEST = re.compile(r"sha256=[0-9a-fA-F]{64}")


class SignatureError(ValueError):
    """Why a request's signature was refused, and its error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def sign(secret: str, timestamp: int | str, delivery_id: str, body: bytes) -> str:
    signed = f"{timestamp}.{delivery_id}.".encode() + body
    return SCHEME + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def verify(
    secret: str,
    *,
    timestamp: str | None,
    signature: str | None,
    delivery_id: str | None,
    body: bytes,
    now: float,
    tolerance_s: int,
) -> int:
    """The signed timestamp when the signature holds; SignatureError otherwise."""
    if not signature:
        raise SignatureError("missing_signature", "the X-Ragway-Signature header is missing")
    if not timestamp:
        raise SignatureError("missing_timestamp", "the X-Ragway-Timestamp header is missing")
    try:
        ts = int(timestamp)
    except ValueError:
        raise SignatureError(
            "invalid_timestamp", "X-Ragway-Timestamp must be unix seconds"
        ) from None
    # Header values arrive as latin-1 text: a non-ASCII one must be refused
    # here, since compare_digest raises on non-ASCII str.
    if not _DIGEST.fullmatch(signature):
        raise SignatureError(
            "invalid_signature", "X-Ragway-Signature must be 'sha256=' and 64 hex digits"
        )
    expected = sign(secret, timestamp, delivery_id or "", body)
    # Compare before judging the age: an unsigned request learns nothing about the window.
    if not hmac.compare_digest(expected.encode(), signature.lower().encode()):
        raise SignatureError("invalid_signature", "the signature does not match the body")
    if abs(now - ts) > tolerance_s:
        raise SignatureError(
            "stale_timestamp",
            f"the signed timestamp is {int(now - ts)} s from now; the limit is {tolerance_s} s",
        )
    return ts


def verify_any(
    secrets: Sequence[str],
    *,
    timestamp: str | None,
    signature: str | None,
    delivery_id: str | None,
    body: bytes,
    now: float,
    tolerance_s: int,
) -> tuple[int, int]:
    """(signed timestamp, index of the secret that verified it); SignatureError otherwise.

    Each secret is tried in turn (rotation keeps two per sender); a problem other
    than a non-matching digest (missing header, malformed value, stale timestamp)
    is the answer at once.
    """
    for index, secret in enumerate(secrets):
        try:
            ts = verify(
                secret,
                timestamp=timestamp,
                signature=signature,
                delivery_id=delivery_id,
                body=body,
                now=now,
                tolerance_s=tolerance_s,
            )
        except SignatureError as exc:
            if exc.code != "invalid_signature" or not _DIGEST.fullmatch(signature or ""):
                raise
            continue
        return ts, index
    raise SignatureError("invalid_signature", "the signature does not match the body")
