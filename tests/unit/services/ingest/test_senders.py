"""Per-sender webhook secrets bound to tenants, with rotation (issue 16)."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.ingest.senders import load_senders, signing_keys
from services.ingest.signing import SignatureError, sign, verify_any

BODY = b'{"event": "document.deleted", "document": {"id": "a", "tenant": "acme"}}'
TWO = (
    "senders:\n"
    "  - {{id: {a}, tenants: [t], secrets: [{x}]}}\n"
    "  - {{id: {b}, tenants: [u], secrets: [{y}]}}\n"
)
FILE = """\
senders:
  - {id: acme-cms, tenants: [acme], secrets: [acme-new, acme-old]}
  - {id: globex-wiki, tenants: [globex, globex-eu], secrets: [globex-1]}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "senders.yaml"
    path.write_text(text)
    return path


def check(secrets: list[str], signed_with: str) -> tuple[int, int]:
    return verify_any(
        secrets,
        timestamp="1000",
        signature=sign(signed_with, 1000, "d-1", BODY),
        delivery_id="d-1",
        body=BODY,
        now=1000.0,
        tolerance_s=300,
    )


def test_each_sender_is_bound_to_its_tenants_and_both_rotation_secrets_verify(
    tmp_path: Path,
) -> None:
    keys = signing_keys("", write(tmp_path, FILE))
    secrets = [k.secret for k in keys]
    for secret in ("acme-new", "acme-old"):
        _, index = check(secrets, secret)
        assert keys[index].sender == "acme-cms"
        assert keys[index].allows("acme") and not keys[index].allows("globex")
    _, index = check(secrets, "globex-1")
    assert keys[index].allows("globex-eu") and not keys[index].allows("acme")
    with pytest.raises(SignatureError) as refused:
        check(secrets, "someone-else")
    assert refused.value.code == "invalid_signature"


def test_the_shared_secret_stays_valid_for_every_tenant(tmp_path: Path) -> None:
    keys = signing_keys("shared-secret", write(tmp_path, FILE))
    _, index = check([k.secret for k in keys], "shared-secret")
    assert keys[index].sender == "shared" and keys[index].allows("any-tenant")
    only_shared = signing_keys("shared-secret", None)
    assert [k.sender for k in only_shared] == ["shared"]


def test_a_stale_or_malformed_signature_is_the_answer_at_once() -> None:
    with pytest.raises(SignatureError) as stale:
        verify_any(
            ["a", "b"],
            timestamp="1",
            signature=sign("b", 1, "d", BODY),
            delivery_id="d",
            body=BODY,
            now=10_000.0,
            tolerance_s=300,
        )
    assert stale.value.code == "stale_timestamp"
    with pytest.raises(SignatureError, match="64 hex digits"):
        verify_any(
            ["a"],
            timestamp="1",
            signature="sha256=zz",
            delivery_id="d",
            body=BODY,
            now=1,
            tolerance_s=9,
        )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("senders: []\n", "not valid"),
        ("senders:\n  - {id: a, tenants: [t], secrets: [x, y, z]}\n", "not valid"),
        ("senders:\n  - {id: a, tenants: [], secrets: [x]}\n", "not valid"),
        (
            TWO.format(a="a", b="b", x="x", y="x"),
            "a secret is listed twice",
        ),
        (
            TWO.format(a="a", b="a", x="x", y="y"),
            "two senders share an id",
        ),
        ("senders:\n  - {id: a, tenants: [t], secrets: ['']}\n", "empty secret"),
        ("senders: [\n", "not YAML"),
    ],
)
def test_a_bad_secrets_file_fails_with_its_name(tmp_path: Path, text: str, problem: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ValueError, match=problem) as err:
        load_senders(path)
    assert str(path) in str(err.value)


def test_no_secret_at_all_refuses_to_start() -> None:
    with pytest.raises(ValueError, match="no webhook secret"):
        signing_keys("", None)
