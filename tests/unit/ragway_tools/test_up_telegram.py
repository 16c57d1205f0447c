"""`ragway up --telegram` refuses a missing token file or allow-list before any part starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragway_tools.cli import app


def _up(env: dict[str, str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["up", "--telegram"], env=env)
    return result.exit_code, " ".join((result.output + result.stderr).split())


def test_when_no_token_file_is_configured_then_up_stops_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RAGWAY_TELEGRAM_TOKEN_FILE", raising=False)
    code, output = _up({})
    assert code == 1
    assert "--telegram: RAGWAY_TELEGRAM_TOKEN_FILE is not set" in output


def test_when_the_allow_list_is_missing_then_up_names_it_and_never_prints_the_token(
    tmp_path: Path,
) -> None:
    (tmp_path / "token").write_text("123:secret-token\n")
    code, output = _up(
        {
            "RAGWAY_TELEGRAM_TOKEN_FILE": str(tmp_path / "token"),
            "RAGWAY_TELEGRAM_ALLOWLIST_FILE": str(tmp_path / "users.yaml"),
        }
    )
    assert code == 1
    assert "cannot read the Telegram allow-list" in output and "users.yaml" in output
    assert "secret-token" not in output
