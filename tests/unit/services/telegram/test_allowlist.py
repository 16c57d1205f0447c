"""The allow-list: users to keys, key secrets from files, every mistake named."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.telegram.allowlist import AllowList


def _write(folder: Path, users: str, key: str = "secret-key\n") -> Path:
    (folder / "a.key").write_text(key)
    path = folder / "users.yaml"
    path.write_text(f"keys:\n  staff: {{key_file: a.key}}\nusers:\n{users}")
    return path


def test_an_allowed_user_gets_the_key_and_an_unknown_one_nothing(tmp_path: Path) -> None:
    allow = AllowList.from_file(_write(tmp_path, "  - {telegram_id: 7, key_id: staff}\n"))
    grant = allow.grant(7)
    assert grant is not None and grant.api_key == "secret-key" and grant.key_id == "staff"
    assert "secret-key" not in repr(grant)
    assert allow.grant(8) is None and allow.grant(None) is None


@pytest.mark.parametrize(
    ("users", "key", "message"),
    [
        ("  - {telegram_id: 7, key_id: nope}\n", "k", "names key 'nope'"),
        ("  - {telegram_id: 7, key_id: staff}\n" * 2, "k", "listed twice"),
        ("  - {telegram_id: 7, key_id: staff}\n", "\n", "is empty"),
        ("  - {telegram_id: seven, key_id: staff}\n", "k", "is not valid"),
    ],
)
def test_a_bad_allow_list_is_refused_with_the_reason(
    tmp_path: Path, users: str, key: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        AllowList.from_file(_write(tmp_path, users, key))
