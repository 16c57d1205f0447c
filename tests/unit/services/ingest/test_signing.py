"""Webhook signatures and payloads, without a server."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from services.ingest.models import PAYLOAD, DocumentUpserted
from services.ingest.signing import SignatureError, sign, verify

BODY = b'{"event": "document.deleted", "document": {"id": "a", "tenant": "t"}}'


def check(**overrides: object) -> int:
    args: dict[str, object] = {
        "timestamp": "1000",
        "signature": sign("k", 1000, "d-1", BODY),
        "delivery_id": "d-1",
        "body": BODY,
        "now": 1010.0,
        "tolerance_s": 300,
    }
    return verify("k", **(args | overrides))  # type: ignore[arg-type]


def test_a_good_signature_returns_the_signed_time() -> None:
    assert check() == 1000
    assert sign("k", 1000, "d-1", BODY).startswith("sha256=") and len(sign("k", 1, "", b"")) == 71
    assert (
        check(signature=sign("k", 1000, "d-1", BODY).upper().replace("SHA256=", "sha256=")) == 1000
    )


@pytest.mark.parametrize(
    ("overrides", "code"),
    [
        ({"signature": None}, "missing_signature"),
        ({"timestamp": None}, "missing_timestamp"),
        ({"timestamp": "yesterday"}, "invalid_timestamp"),
        ({"signature": "md5=abc"}, "invalid_signature"),
        ({"body": BODY + b" "}, "invalid_signature"),  # one byte more
        # A captured request re-addressed to another tenant: the body is signed.
        ({"body": BODY.replace(b'"t"', b'"u"')}, "invalid_signature"),
        ({"timestamp": "1001"}, "invalid_signature"),  # the timestamp is signed too
        ({"delivery_id": "d-2"}, "invalid_signature"),  # and the delivery id
        ({"delivery_id": None}, "invalid_signature"),
        ({"signature": "sha256=" + "\u00e9" * 64}, "invalid_signature"),  # not ASCII: no 500
        ({"signature": "sha256=" + "0" * 63}, "invalid_signature"),
        ({"now": 1000.0 + 301}, "stale_timestamp"),
        ({"now": 1000.0 - 301}, "stale_timestamp"),
    ],
)
def test_each_bad_request_is_refused_with_its_code(overrides: dict[str, object], code: str) -> None:
    with pytest.raises(SignatureError) as err:
        check(**overrides)
    assert err.value.code == code


def test_payloads_validate_by_event() -> None:
    up = PAYLOAD.validate_json(
        b'{"event": "document.upserted", "document": {"id": "a", "tenant": "t",'
        b' "groups": ["g"], "content": "# A\\n\\ntext", "effective_from": "2026-01-01"}}'
    )
    assert isinstance(up, DocumentUpserted) and up.document.content_type == "text/markdown"
    for bad in (
        b'{"event": "document.upserted", "document": {"id": "a", "tenant": "t", "content": "x"}}',
        b'{"event": "document.access_changed", "document": {"id": "a", "tenant": "t"}}',
        b'{"event": "document.deleted", "document": {"id": "a#b", "tenant": "t"}}',
        b'{"event": "document.deleted", "document": {"id": "a", "tenant": "t", "x": 1}}',
        b'{"event": "document.upserted", "document": {"id": "a", "tenant": "t", "groups": ["g"],'
        b' "content": "%%%", "content_type": "application/pdf"}}',
    ):
        with pytest.raises(ValidationError):
            PAYLOAD.validate_json(bad)
