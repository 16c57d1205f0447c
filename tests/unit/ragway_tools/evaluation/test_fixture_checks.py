"""Every help-centre fixture passes its own checker: each fact literally on its gold
page, each trap on a deprecated page, every caller's key hashing to its tenant."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]


FIXTURES = ["helpcentre", "supportdesk", "servicehub", "homecart", "hostclub", "harbourpad"]


@pytest.mark.parametrize(
    "fixture",
    [
        *FIXTURES,
        "lineside",
        "fernhill",
        "kestrel",
        "tidewater",
        "saltmarsh",
        "marlowe",
        "ashgrove",
        "copperleaf",
        "juniper",
        "orchard",
        "wrenfield",
        "quayside",
        "pinecrest",
        "bramble",
        "thornbury",
        "kingsmere",
        "seabright",
        "galloway",
        "ravensworth",
        "ambleside",
        "holloway",
        "dunmore",
        "westcombe",
        "lochinver",
        "redcliffe",
        "oakhampton",
    ],
)
def test_the_fixture_passes_its_checker(fixture: str) -> None:
    # Each fixture's own check.py: eval/lineside's reads its HTML pages as text, and
    # eval/fernhill's its plain-text and PDF pages too (the four fixtures after it run
    # fernhill's on their own folders), before the generic checks, which know only
    # Markdown pages.
    done = subprocess.run(
        [sys.executable, f"eval/{fixture}/check.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "TOTAL" in done.stdout  # it got as far as counting the segments
