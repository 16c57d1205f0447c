"""Webhook signatures: HMAC-SHA256 over ``<timestamp>.<raw body>``.

    X-Ragway-Timestamp: 1796020562            (unix seconds, when the sender signed)
    X-Ragway-Signature: sha256=<hex digest>   (of b"1796020562." + body)
    X-Ragway-Delivery:  <unique id per delivery; retries of one delivery reuse it>

Signing the timestamp with the body lets the receiver refuse a captured request
replayed later; the delivery id makes retries within the window harmless.
"""

from __future__ import annotations

import hashlib
import hmac

SCHEME = "sha256="


class SignatureError(ValueError):
    """Why a request's signature was refused, and its error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def sign(secret: str, timestamp: int | str, body: bytes) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return SCHEME + mac.hexdigest()


def verify(
    secret: str,
    *,
    timestamp: str | None,
    signature: str | None,
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
    if not signature.startswith(SCHEME):
        raise SignatureError("invalid_signature", "X-Ragway-Signature must start with 'sha256='")
    # Compare before judging the age: an unsigned request learns nothing about the window.
    if not hmac.compare_digest(sign(secret, timestamp, body), signature):
        raise SignatureError("invalid_signature", "the signature does not match the body")
    if abs(now - ts) > tolerance_s:
        raise SignatureError(
            "stale_timestamp",
            f"the signed timestamp is {int(now - ts)} s from now; the limit is {tolerance_s} s",
        )
    return ts
