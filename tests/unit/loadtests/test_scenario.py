"""Scenario files: the shipped ones load; bad ones are refused with the bad value named."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadtests.scenario import ScenarioError, load
from tests.conftest import ROOT

SCENARIOS = ROOT / "loadtests" / "scenarios"
ALL_KINDS = [
    "freeze_gateway",
    "kill_gateway",
    "pause_retriever",
    "restart_redis",
    "slow_generator",
]
# The CI's scenario (tests/integration/test_loadtest.py) has no freeze yet: a freeze
# must outlast the run lease, which the 40 s CI run cannot spare at the default lease.
CI_KINDS = [k for k in ALL_KINDS if k != "freeze_gateway"]


@pytest.mark.parametrize(
    ("name", "kinds"), [("ci", CI_KINDS), ("short", ALL_KINDS), ("soak-200x10m", ALL_KINDS)]
)
def test_the_shipped_scenarios_load_and_inject_every_fault_kind(
    name: str, kinds: list[str]
) -> None:
    scenario = load(SCENARIOS / f"{name}.yaml")
    assert scenario.name == name
    assert scenario.fault_kinds == kinds
    assert scenario.replicas >= 2


@pytest.mark.parametrize("name", ["short", "soak-200x10m"])
def test_a_freeze_outlasts_the_run_lease(name: str) -> None:
    scenario = load(SCENARIOS / f"{name}.yaml")
    lease_s = float(scenario.env.get("RAGWAY_RUN_LEASE_S", "30"))
    freezes = [f for f in scenario.faults if f.kind == "freeze_gateway"]
    assert freezes and all(f.end_s - f.at_s > lease_s for f in freezes)


def test_the_soak_scenario_is_ten_minutes_at_200_streams() -> None:
    scenario = load(SCENARIOS / "soak-200x10m.yaml")
    assert (scenario.duration_s, scenario.streams) == (600, 200)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text("name: t\nduration_s: 30\nstreams: 2\n" + text)
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("faults: [{at_s: 28, kind: pause_retriever, for_s: 5}]", "ends at 33 s, after the load"),
        ("faults: [{at_s: 1, kind: kill_gateway, replica: 2}]", "replica 2 does not exist"),
        ("faults: [{at_s: 1, kind: freeze_gateway, replica: 2, for_s: 1}]", "does not exist"),
        ("faults: [{at_s: 1, kind: unplug_cable}]", "faults.0"),
        ("faults: [{at_s: 1, kind: slow_generator, for_s: 2}]", "delta_delay_ms"),
        ("think_s: [2, 1]", "think_s must be [low, high]"),
        ("env: {PATH: /tmp}", "only set RAGWAY_* variables, not PATH"),
        ("colour: blue", "colour"),
    ],
)
def test_a_bad_scenario_is_refused_naming_the_problem(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(ScenarioError) as info:
        load(write(tmp_path, text))
    assert message in str(info.value)


def test_a_missing_file_is_a_scenario_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read scenario"):
        load(tmp_path / "nope.yaml")
