"""The generator's run-time fault switch: off without its setting, follows its file with it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from services.generator.faults import FaultSwitch


def bump(path: Path, text: str) -> None:
    path.write_text(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # a new mtime, surely


def test_without_a_fault_file_setting_no_file_is_read(tmp_path: Path) -> None:
    switch = FaultSwitch(None, static_delay_ms=0)
    (tmp_path / "faults.json").write_text('{"delta_delay_ms": 500}')
    assert switch.delta_delay_s() == 0.0


def test_the_file_switches_the_delay_on_and_off_at_run_time(tmp_path: Path) -> None:
    path = tmp_path / "faults.json"
    switch = FaultSwitch(path, static_delay_ms=0)
    assert switch.delta_delay_s() == 0.0  # no file: no fault
    bump(path, '{"delta_delay_ms": 250}')
    assert switch.delta_delay_s() == 0.25
    bump(path, '{"delta_delay_ms": 40}')
    assert switch.delta_delay_s() == 0.04
    path.unlink()
    assert switch.delta_delay_s() == 0.0


@pytest.mark.parametrize(
    "text", ['{"delta_delay_ms": -1}', '{"delta_delay_ms": "300"}', "[1]", "{not json", "true"]
)
def test_a_malformed_file_is_ignored_and_reported(
    tmp_path: Path, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "faults.json"
    switch = FaultSwitch(path, static_delay_ms=10)
    bump(path, text)
    assert switch.delta_delay_s() == 0.01  # the static setting still applies
    assert "fault file ignored" in caplog.text
