"""The llama.cpp build helper: its crash report and the lock split."""

from __future__ import annotations

import stat
from pathlib import Path

from ragway_tools import llm_build


def test_a_smoke_child_killed_by_sigill_is_one_line_naming_what_to_delete(
    tmp_path: Path,
) -> None:
    # A stand-in for a Python whose llama.cpp uses instructions this CPU lacks.
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\nkill -ILL $$\n")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    lines: list[str] = []
    assert llm_build.smoke(str(python), tmp_path / "wheels", lines.append) == 1
    assert lines == [
        "error: the llama.cpp build crashed with SIGILL (illegal instruction): it was "
        f"compiled for another CPU; delete {tmp_path}/wheels/{llm_build.FLAVOUR}/ and "
        "rebuild with 'make install-llm'"
    ]


def test_a_failing_smoke_child_shows_its_output_and_status(tmp_path: Path) -> None:
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho 'no model here' >&2\nexit 3\n")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    lines: list[str] = []
    assert llm_build.smoke(str(python), tmp_path, lines.append) == 1
    assert lines == ["no model here", "error: the llama.cpp smoke check failed (exit 3)"]


def test_the_llm_lock_holds_only_what_the_llm_extra_adds(tmp_path: Path) -> None:
    # One freeze of [dev,llm] (as `make lock` takes it), split in two.
    root = llm_build.ROOT
    pins = (root / "requirements.lock").read_text() + (root / "requirements-llm.lock").read_text()
    frozen = tmp_path / "frozen.txt"
    frozen.write_text("\n".join(sorted(ln for ln in pins.splitlines() if "==" in ln)) + "\n")
    main, llm = tmp_path / "main.lock", tmp_path / "llm.lock"
    llm_build.split_lock(frozen, main, llm)

    def pinned(path: Path) -> set[str]:
        return {ln for ln in path.read_text().splitlines() if "==" in ln}

    names = {pin.split("==")[0] for pin in pinned(llm)}
    assert names == {"diskcache", "llama_cpp_python", "starlette-context"}
    assert pinned(main) == pinned(root / "requirements.lock")
    assert pinned(root / "requirements-llm.lock") == pinned(llm)
