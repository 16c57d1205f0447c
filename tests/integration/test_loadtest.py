"""The CI's load test: a small scenario with every fault kind, and the invariants must hold.

It starts its own stack (Redis server, retriever, generator, two gateway replicas)
because it kills parts of it. About a minute and a half on the 2-core machine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loadtests import runner
from loadtests.scenario import load
from tests.conftest import ROOT

pytestmark = pytest.mark.loadtest


def test_every_invariant_holds_under_every_fault_kind(tmp_path: Path) -> None:
    scenario = load(ROOT / "loadtests" / "scenarios" / "ci.yaml")
    result = runner.run(scenario, tmp_path / "report", tmp_path / "stack")

    # The faults really happened, each kind at least once.
    assert sorted({w.kind for w in result.faults}) == scenario.fault_kinds
    assert len(result.faults) == len(scenario.faults)
    # The checks checked something: runs, and finished runs across the Redis restart.
    assert result.traces, "no run was accepted"
    assert all(c.checked > 0 for c in result.checks), [(c.name, c.checked) for c in result.checks]
    # Clients really dropped streams and resumed them on the other replica.
    assert sum(t.drops for t in result.traces) > 0
    assert any(len(t.replicas) > 1 for t in result.traces)

    broken = {c.name: c.violations[:5] for c in result.checks if not c.holds}
    assert not broken, broken
    for name in ("ci.md", "ci.json", "ci.png"):
        assert (tmp_path / "report" / name).stat().st_size > 0
