"""Automatic steps of a canary (``ragway canary start --steps 5,25,50``): pure functions.

    start ─▶ step 0 at steps[0] %
    every evaluation of step i, on the runs finished since step i began:
        breach ─▶ rollback (step i: breach)
        pass   ─▶ i < last: step i+1 at steps[i+1] % (step i: pass)
                  i = last: promote the candidate (step i: pass)
        inconclusive ─▶ stay

Each step is judged on its own runs, not the experiment's so far: evidence gathered
at 5 % says nothing of how the candidate holds at 25 %, and a pass at one step must
not carry the next one through before a single run of it was seen.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from services.gateway.paths.errors import InvalidSteps
from services.gateway.paths.models import MAX_STEPS, CanaryState, Step

Action = Literal["stay", "step", "promote", "rollback"]


def validate_steps(steps: Sequence[float], percent: float | None) -> list[float]:
    """The steps as given, when they are usable; else InvalidSteps (nothing is started)."""
    if not steps:
        raise InvalidSteps("give at least one step, e.g. --steps 5,25,50")
    if len(steps) > MAX_STEPS:
        raise InvalidSteps(f"{len(steps)} steps; at most {MAX_STEPS}")
    for value in steps:
        if not math.isfinite(value) or not 0 < value <= 100:
            raise InvalidSteps(f"step {value:g} is outside (0, 100]")
    if any(b <= a for a, b in itertools.pairwise(steps)):
        raise InvalidSteps("steps must rise strictly, e.g. 5,25,50")
    if percent is not None and percent != steps[0]:
        raise InvalidSteps(
            f"percent {percent:g} differs from the first step {steps[0]:g}: give one or the other"
        )
    return list(steps)


def first_step(state: CanaryState, now_ms: int) -> CanaryState:
    """The state of a new experiment with steps: at the first step's percentage."""
    if not state.steps:
        return state
    return state.model_copy(
        update={
            "percent": state.steps[0],
            "step": 0,
            "step_history": [Step(percent=state.steps[0], started_at_ms=now_ms)],
        }
    )


def current(state: CanaryState) -> Step | None:
    """The running step of a stepped canary, else None."""
    if not state.steps or not state.step_history:
        return None
    last = state.step_history[-1]
    return last if last.verdict == "running" else None


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    state: CanaryState  # what to store: the next step, or the step's ending (rollback, promote)


def decide(
    state: CanaryState,
    verdict: str,
    baseline_runs: int,
    candidate_runs: int,
    now_ms: int,
) -> Decision:
    """What the verdict of the current step's report does to a stepped canary."""
    step = current(state)
    if step is None:
        return Decision("stay", state)
    judged = step.model_copy(
        update={"baseline_runs": baseline_runs, "candidate_runs": candidate_runs}
    )
    if verdict == "inconclusive":
        return Decision("stay", state)
    history = state.step_history[:-1]
    ended = judged.model_copy(
        update={"ended_at_ms": now_ms, "verdict": "breach" if verdict == "breach" else "pass"}
    )
    if verdict == "breach":
        return Decision("rollback", state.model_copy(update={"step_history": [*history, ended]}))
    if state.step + 1 >= len(state.steps):
        return Decision("promote", state.model_copy(update={"step_history": [*history, ended]}))
    following = state.steps[state.step + 1]
    return Decision(
        "step",
        state.model_copy(
            update={
                "step": state.step + 1,
                "percent": following,
                "step_history": [
                    *history,
                    ended,
                    Step(percent=following, started_at_ms=now_ms),
                ],
            }
        ),
    )


def end_running_step(state: CanaryState, now_ms: int, verdict: str = "stopped") -> CanaryState:
    """The state with its running step (if any) closed with ``verdict``."""
    step = current(state)
    if step is None:
        return state
    closed = step.model_copy(update={"ended_at_ms": now_ms, "verdict": verdict})
    return state.model_copy(update={"step_history": [*state.step_history[:-1], closed]})
