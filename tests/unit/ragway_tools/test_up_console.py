"""`ragway up --console` refuses to start when Gradio is not installed, before any part."""

from __future__ import annotations

import importlib.util

import pytest
from typer.testing import CliRunner

from ragway_tools.cli import app


def test_when_gradio_is_missing_then_up_console_stops_at_once_and_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "gradio" else real(name, *a)
    )
    result = CliRunner().invoke(app, ["up", "--console"])
    output = " ".join((result.output + result.stderr).split())
    assert result.exit_code == 1
    assert "--console: gradio is not installed" in output and "console extra" in output
