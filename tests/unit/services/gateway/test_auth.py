from __future__ import annotations

from pathlib import Path

import pytest

from services.gateway.auth import AuthError, KeyEntry, KeyRegistry, Principal, digest
from tests.conftest import FIXTURES, ROOT

REGISTRY = KeyRegistry.from_file(FIXTURES / "api-keys.yaml")


def test_a_valid_key_maps_to_its_tenant_and_groups() -> None:
    assert REGISTRY.authenticate("key-acme-hr", None) == Principal(
        key_id="acme-hr", tenant="acme", groups=frozenset({"staff", "hr"})
    )


def test_a_key_is_a_server_key_unless_its_entry_names_another_kind() -> None:
    assert REGISTRY.authenticate("key-acme-hr", None).kind == "server"
    assert REGISTRY.authenticate("key-demo-admin", None).kind == "admin"


@pytest.mark.parametrize(
    ("key", "origin", "status", "code"),
    [
        (None, None, 401, "missing_api_key"),
        ("", None, 401, "missing_api_key"),
        ("nope", None, 401, "invalid_api_key"),
        ("key-acme-disabled", None, 403, "key_disabled"),
        ("key-demo-public", "https://evil.example", 403, "origin_not_allowed"),
    ],
)
def test_bad_credentials_are_refused_with_a_precise_status(
    key: str | None, origin: str | None, status: int, code: str
) -> None:
    with pytest.raises(AuthError) as err:
        REGISTRY.authenticate(key, origin)
    assert (err.value.status, err.value.code) == (status, code)


def test_an_allowed_origin_passes() -> None:
    assert REGISTRY.authenticate("key-demo-public", "https://www.ragway.example").tenant == "demo"


def test_key_files_are_validated_on_load(tmp_path: Path) -> None:
    bad = tmp_path / "keys.yaml"
    bad.write_text("keys:\n  - id: x\n    sha256: not-hex\n    tenant: t\n    groups: [g]\n")
    with pytest.raises(ValueError, match="invalid API key file"):
        KeyRegistry.from_file(bad)
    with pytest.raises(FileNotFoundError, match="RAGWAY_API_KEYS_FILE"):
        KeyRegistry.from_file(tmp_path / "missing.yaml")


def test_the_shipped_demo_keys_load() -> None:
    registry = KeyRegistry.from_file(ROOT / "config/api-keys.yaml")
    assert registry.authenticate("rgw-demo-sre-key", None).groups == {"public", "sre"}


def _entry(key_id: str, key: str, **fields: object) -> KeyEntry:
    return KeyEntry.model_validate(
        {"id": key_id, "sha256": digest(key), "tenant": "t", "groups": ["g"], **fields}
    )


def test_two_entries_with_one_key_id_are_refused() -> None:
    # Regression (issue 16): ids name a key in logs, run records and its rate limits, and
    # two entries under one id (another tenant, say) were accepted.
    with pytest.raises(ValueError, match="'k' is the id of two API key entries"):
        KeyRegistry([_entry("k", "key-1"), _entry("k", "key-2", tenant="other")])


def test_during_a_rotation_the_new_and_the_previous_key_are_both_the_same_key() -> None:
    registry = KeyRegistry([_entry("k", "key-new", previous_sha256=digest("key-old"))])
    assert registry.authenticate("key-new", None) == registry.authenticate("key-old", None)
    assert registry.authenticate("key-old", None).key_id == "k"
    with pytest.raises(AuthError):
        registry.authenticate("key-older", None)


def test_a_previous_digest_may_not_be_another_keys_digest() -> None:
    with pytest.raises(ValueError, match="share the same sha256"):
        KeyRegistry([_entry("a", "key-a"), _entry("b", "key-b", previous_sha256=digest("key-a"))])
    with pytest.raises(ValueError, match="previous_sha256"):
        _entry("a", "key-a", previous_sha256=digest("key-a"))
