"""The scenario file: how many streams, for how long, and which faults at which second."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, Field, ValidationError, model_validator


class ScenarioError(ValueError):
    """A scenario file that cannot run, with a message naming the bad value."""


class _Step(BaseModel):
    model_config = {"extra": "forbid"}

    at_s: float = Field(ge=0, description="Seconds after the load starts.")


class KillGateway(_Step):
    """kill -9 one gateway replica; start it again on the same port after down_s."""

    kind: Literal["kill_gateway"]
    replica: int = Field(default=0, ge=0)
    down_s: float = Field(default=3.0, ge=0, le=300)

    @property
    def end_s(self) -> float:
        return self.at_s + self.down_s


class FreezeGateway(_Step):
    """SIGSTOP one gateway replica for for_s (past its run lease: another replica takes its
    runs over), then SIGCONT: the woken executor must not write into the runs it lost."""

    kind: Literal["freeze_gateway"]
    replica: int = Field(default=0, ge=0)
    for_s: float = Field(gt=0, le=300)

    @property
    def end_s(self) -> float:
        return self.at_s + self.for_s


class PauseRetriever(_Step):
    """SIGSTOP the retriever process, SIGCONT it after for_s."""

    kind: Literal["pause_retriever"]
    for_s: float = Field(gt=0, le=300)

    @property
    def end_s(self) -> float:
        return self.at_s + self.for_s


class RestartRedis(_Step):
    """Stop the Redis server (SIGKILL by default: a crash) and start it on the same AOF."""

    kind: Literal["restart_redis"]
    signal: Literal["KILL", "TERM"] = "KILL"
    down_s: float = Field(default=1.0, ge=0, le=300)

    @property
    def end_s(self) -> float:
        return self.at_s + self.down_s


class SlowGenerator(_Step):
    """Pause the generator before every answer delta for for_s (the generator's fault file)."""

    kind: Literal["slow_generator"]
    delta_delay_ms: int = Field(gt=0, le=60_000)
    for_s: float = Field(gt=0, le=3600)

    @property
    def end_s(self) -> float:
        return self.at_s + self.for_s


Fault = Annotated[
    KillGateway | FreezeGateway | PauseRetriever | RestartRedis | SlowGenerator,
    Field(discriminator="kind"),
]


class Disconnects(BaseModel):
    """How clients drop their stream: after a random number of events, then resume."""

    model_config = {"extra": "forbid"}

    probability: float = Field(default=0.5, ge=0, le=1, description="Per run.")
    max_per_run: int = Field(default=2, ge=0, le=20)
    after_events: tuple[int, int] = (1, 12)
    pause_s: tuple[float, float] = (0.05, 1.0)


class Scenario(BaseModel):
    model_config = {"extra": "forbid"}

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    description: str = ""
    duration_s: float = Field(gt=0, le=24 * 3600, description="Clients start runs this long.")
    drain_s: float = Field(default=120, gt=0, description="Then they finish what they started.")
    streams: int = Field(ge=1, le=5000, description="Concurrent virtual users, one stream each.")
    replicas: int = Field(default=2, ge=1, le=16)
    think_s: tuple[float, float] = (0.0, 0.5)
    disconnects: Disconnects = Field(default_factory=Disconnects)
    seed: int = 2026
    # Passed to every service of the stack (e.g. a short RAGWAY_RUN_LEASE_S).
    env: dict[str, str] = Field(default_factory=dict)
    faults: list[Fault] = Field(default_factory=list)

    @model_validator(mode="after")
    def _faults_fit(self) -> Scenario:
        for step in self.faults:
            if step.end_s > self.duration_s:
                raise ValueError(
                    f"fault {step.kind} at {step.at_s:g} s ends at {step.end_s:g} s, "
                    f"after the load ({self.duration_s:g} s)"
                )
            if isinstance(step, KillGateway | FreezeGateway) and step.replica >= self.replicas:
                raise ValueError(
                    f"{step.kind} replica {step.replica} does not exist "
                    f"(replicas: 0-{self.replicas - 1})"
                )
        for low, high, what in (
            (*self.think_s, "think_s"),
            (*self.disconnects.pause_s, "disconnects.pause_s"),
            (*self.disconnects.after_events, "disconnects.after_events"),
        ):
            if not 0 <= low <= high:
                raise ValueError(f"{what} must be [low, high] with 0 <= low <= high")
        bad = [k for k in self.env if not k.startswith("RAGWAY_")]
        if bad:
            raise ValueError(f"env may only set RAGWAY_* variables, not {', '.join(bad)}")
        return self

    @property
    def fault_kinds(self) -> list[str]:
        return sorted({f.kind for f in self.faults})


def load(path: Path) -> Scenario:
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ScenarioError(f"cannot read scenario {path}: {exc}") from None
    try:
        return Scenario.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(x) for x in e['loc']) or '(top)'}: {e['msg']}" for e in exc.errors()
        )
        raise ScenarioError(f"scenario {path}: {problems}") from None
