"""Scenario files: the shipped ones load; bad ones are refused with the bad value named."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadtests.scenario import ScenarioError, load
from tests.conftest import ROOT

SCENARIOS = ROOT / "loadtests" / "scenarios"
ALL_KINDS = ["kill_gateway", "pause_retriever", "restart_redis", "slow_generator"]


@pytest.mark.parametrize("name", ["ci", "short", "soak-200x10m"])
def test_the_shipped_scenarios_load_and_inject_every_fault_kind(name: str) -> None:
    scenario = load(SCENARIOS / f"{name}.yaml")
    assert scenario.name == name
    assert scenario.fault_kinds == ALL_KINDS
    assert scenario.replicas >= 2


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
