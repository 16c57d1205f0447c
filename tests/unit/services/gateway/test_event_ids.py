"""Which cursors are Redis stream ids: anything else must be a 400, never reach Redis."""

from __future__ import annotations

import pytest

from services.gateway.runs.models import is_event_id

TOP = 2**64 - 1


@pytest.mark.parametrize("good", ["0-0", "1-0", "1700000000000-3", f"{TOP}-{TOP}", "007-1"])
def test_stream_ids_are_accepted(good: str) -> None:
    assert is_event_id(good)


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "1-0\n",  # '$' in a Python regex matches before a final newline
        "\n1-0",
        " 1-0",
        f"{TOP + 1}-0",
        f"0-{TOP + 1}",
        "9" * 21 + "-0",
        "1-2-3",
        "-1-0",
        "1.5-0",
        "\u0661-\u0660",  # Arabic-Indic digits match \d in a str pattern; Redis wants ASCII
    ],
)
def test_non_ids_are_refused(bad: str) -> None:
    assert not is_event_id(bad)
