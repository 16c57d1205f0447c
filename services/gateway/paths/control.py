"""Paths and experiments as the gateway runs them: routing at submit, path options in
the executor, the run index, bounded shadows, and the automatic rollback.

    submit ─▶ route(caller, user) ─▶ record.path, .path_version, .experiment, .shadow
    executor ─▶ config(path, version) ─▶ build, mode, depths, rerank, output bound
    executor, run finished ─▶ finished(record)
        ├─ index the run under its experiment and path
        ├─ served run marked shadow ─▶ the candidate runs it, unseen (bounded; drops counted)
        └─ evaluate: the gates breached ─▶ stop the experiment, rolled_back=True
                     a stepped canary's step passed ─▶ its next step, or promote (steps.py)
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import grpc

from services.gateway import metrics
from services.gateway.paths import steps as stepping
from services.gateway.paths.errors import (
    CanaryRunning,
    CanaryStepping,
    InvalidCandidate,
    InvalidPathName,
    InvalidSteps,
    NoCanary,
    RetrieverUnavailable,
    UnknownBuild,
    UnknownPath,
    UnknownReranker,
)
from services.gateway.paths.models import (
    BASELINE,
    PATH_NAME,
    CanaryMode,
    CanaryState,
    Gates,
    PathConfig,
    PathOptions,
    RerankerOffer,
    default_path,
)
from services.gateway.paths.report import Report, build_report
from services.gateway.paths.routing import Route, route
from services.gateway.paths.store import PathStore
from services.gateway.runs.models import RunRecord, now_ms

log = logging.getLogger(__name__)

# Runs per side that a report reads, the first ones of the experiment: bounds the work
# of each evaluation. By then a sequential gate has long decided unless the candidate
# sits right at its limit; it stays inconclusive then (never a pass). Both sides are
# cut to the same span of time (same_span).
REPORT_WINDOW = 500

DescribeBuild = Callable[[str], Awaitable[str]]  # build id or alias → build id
ListRerankers = Callable[[], Awaitable[list[RerankerOffer]]]
ShadowRun = Callable[
    [RunRecord, str, int, bool], Coroutine[Any, Any, None]
]  # served run, path, version


class PathControl:
    def __init__(
        self,
        store: PathStore,
        describe_build: DescribeBuild,
        *,
        record_ttl_s: int,
        shadow_limit: int = 8,
        list_rerankers: ListRerankers | None = None,
    ) -> None:
        self._store = store
        self._describe = describe_build
        self._list_rerankers = list_rerankers
        self._ttl = record_ttl_s
        self._shadow_limit = shadow_limit
        self._shadow_run: ShadowRun | None = None
        self._shadows: set[asyncio.Task[None]] = set()

    def attach_shadow(self, run: ShadowRun) -> None:
        self._shadow_run = run

    async def close(self) -> None:
        for task in list(self._shadows):
            task.cancel()
        await asyncio.gather(*self._shadows, return_exceptions=True)

    # Paths

    async def names(self) -> list[str]:
        return await self._store.names()

    async def show(self, name: str, version: int | None = None) -> PathConfig:
        config = await self._store.get(name, version)
        if config is None:
            raise UnknownPath(name, version)
        return config

    async def config(self, name: str, version: int) -> PathConfig:
        """What the executor runs with; a vanished version falls back to the default."""
        return await self._store.get(name, version) or default_path(name)

    async def set_path(self, name: str, options: PathOptions) -> PathConfig:
        """Validate (the build and the reranker must exist) and store the next version."""
        if not PATH_NAME.match(name):
            raise InvalidPathName(name)
        if options.reranker:
            offered = [r.version for r in await self.rerankers()]
            if options.reranker not in offered:
                raise UnknownReranker(options.reranker, offered)
        build_id = ""
        if options.build:
            try:
                build_id = await self._describe(options.build)
            except grpc.aio.AioRpcError as exc:
                if exc.code() == grpc.StatusCode.NOT_FOUND:
                    raise UnknownBuild(options.build, exc.details() or "not found") from exc
                raise RetrieverUnavailable(f"{exc.code().name}: {exc.details()}") from exc
        config = PathConfig(name=name, version=0, build_id=build_id, **options.model_dump())
        stored = await self._store.put(config)
        log.info(
            "path set",
            extra={"path": name, "path_version": stored.version, "build": options.build},
        )
        return stored

    async def rerankers(self) -> list[RerankerOffer]:
        """The reranker artifacts the retriever has loaded, which a path may name."""
        if self._list_rerankers is None:
            return []
        try:
            return await self._list_rerankers()
        except grpc.aio.AioRpcError as exc:
            raise RetrieverUnavailable(f"{exc.code().name}: {exc.details()}") from exc

    # Routing

    async def route(self, tenant: str, key_id: str, user_id: str | None) -> Route:
        state, baseline_version = await self._store.routing_inputs()
        _observe(state)
        return route(state, baseline_version, tenant, key_id, user_id)

    # Experiments

    async def state(self) -> CanaryState:
        state = await self._store.state()
        _observe(state)
        return state

    async def start(
        self,
        mode: CanaryMode,
        candidate: str,
        percent: float | None,
        gates: Gates,
        *,
        retrieval_only: bool = False,
        steps: list[float] | None = None,
    ) -> CanaryState:
        """Begin an experiment; with ``steps``, a canary that widens and promotes itself."""
        if steps is not None:
            if mode is not CanaryMode.CANARY:
                raise InvalidSteps("steps are for a canary; a shadow serves no one")
            steps = stepping.validate_steps(steps, percent)
            percent = steps[0]
        if percent is None:
            raise InvalidSteps("give the percent, or steps whose first is the percent")
        if candidate == BASELINE:
            raise InvalidCandidate(candidate)
        candidate_config = await self.show(candidate)
        running = await self._store.active()
        if running is not None:
            raise CanaryRunning(running)
        state = CanaryState(
            mode=mode,
            experiment=f"exp_{uuid.uuid4().hex[:16]}",
            candidate=candidate,
            candidate_version=candidate_config.version,
            baseline_version=await self._store.latest_version(BASELINE),
            percent=percent,
            retrieval_only=retrieval_only and mode is CanaryMode.SHADOW,
            gates=gates,
            started_at_ms=now_ms(),
            steps=steps or [],
        )
        state = stepping.first_step(state, state.started_at_ms or now_ms())
        if not await self._store.start(state):
            raise CanaryRunning(await self._store.active() or "?")
        log.info(
            "experiment started",
            extra={
                "experiment": state.experiment,
                "mode": mode.value,
                "candidate": candidate,
                "candidate_version": state.candidate_version,
                "percent": percent,
                "steps": state.steps,
            },
        )
        _observe(state)
        return state

    async def stop(self, reason: str = "stopped by an operator") -> CanaryState:
        state = await self._store.state()
        if state.mode is CanaryMode.OFF or not await self._store.stop(
            stepping.end_running_step(state, now_ms()), reason, rolled_back=False
        ):
            raise NoCanary
        log.info("experiment stopped", extra={"experiment": state.experiment, "reason": reason})
        return await self.state()

    async def set_percent(self, percent: float) -> CanaryState:
        """Widen or narrow the running experiment (users already in stay in when widening)."""
        state = await self._store.state()
        if state.mode is not CanaryMode.OFF and stepping.current(state) is not None:
            raise CanaryStepping(state.steps)
        updated = state.model_copy(update={"percent": percent})
        if state.mode is CanaryMode.OFF or not await self._store.update(updated):
            raise NoCanary
        log.info("experiment percent", extra={"experiment": state.experiment, "percent": percent})
        return updated

    async def pause(self, paused: bool) -> CanaryState:
        """Pause (everyone on the baseline, nothing counted) or resume the experiment."""
        for _ in range(3):
            state = await self._store.state()
            if state.mode is CanaryMode.OFF:
                raise NoCanary
            updated = state.model_copy(update={"paused": paused})
            # On the step read: a step taken meanwhile by another replica is not undone.
            if await self._store.advance(state.step, updated):
                break
        else:
            raise NoCanary
        log.info("experiment paused", extra={"experiment": state.experiment, "paused": paused})
        _observe(updated)
        return updated

    async def rollback(self, reason: str = "rolled back by an operator") -> CanaryState:
        state = await self._store.state()
        if state.mode is CanaryMode.OFF or not await self._store.stop(
            stepping.end_running_step(state, now_ms()), reason, rolled_back=True
        ):
            raise NoCanary
        metrics.CANARY_ROLLBACKS.labels("operator").inc()
        log.warning(
            "canary rolled back",
            extra={
                "experiment": state.experiment,
                "candidate": state.candidate,
                "candidate_version": state.candidate_version,
                "rollback_reason": "operator",
                "reason": reason,
                "percent": state.percent,
            },
        )
        return await self.state()

    async def promote(self) -> PathConfig:
        """The candidate's version becomes the baseline's next version; the experiment ends."""
        state = await self._store.state()
        if state.mode is CanaryMode.OFF:
            raise NoCanary
        promoted = await self._promote(stepping.end_running_step(state, now_ms()), "promoted")
        metrics.CANARY_PROMOTIONS.labels("operator").inc()
        return promoted

    async def _promote(self, state: CanaryState, reason: str) -> PathConfig:
        """Store the candidate's tested version as the baseline's next; NoCanary if the
        experiment ended meanwhile (another replica promoted or rolled it back)."""
        candidate = await self.show(state.candidate, state.candidate_version)
        options = PathOptions.model_validate(
            candidate.model_dump(include=set(PathOptions.model_fields))
            | {"note": f"promoted from {candidate.name} v{candidate.version} ({state.experiment})"}
        )
        if not await self._store.stop(state, reason, rolled_back=False):
            raise NoCanary
        promoted = await self._store.put(
            PathConfig(
                name=BASELINE, version=0, build_id=candidate.build_id, **options.model_dump()
            )
        )
        log.info(
            "candidate promoted",
            extra={
                "experiment": state.experiment,
                "candidate": candidate.name,
                "candidate_version": candidate.version,
                "baseline_version": promoted.version,
                "reason": reason,
            },
        )
        _observe(await self._store.state())
        return promoted

    async def report(self, since_ms: int = 0, state: CanaryState | None = None) -> Report:
        """The running experiment's report, or else the last one's.

        A stepped canary's report, unless ``since_ms`` says otherwise, is its current
        step's: the runs finished since the step began, which is what the step is judged on.
        """
        state = state or await self._store.state()
        if state.experiment is None:
            raise NoCanary
        step = stepping.current(state) if state.mode is not CanaryMode.OFF else None
        if since_ms == 0 and step is not None:
            since_ms = step.started_at_ms
        baseline = await self._store.runs(state.experiment, BASELINE, since_ms, REPORT_WINDOW)
        candidate = await self._store.runs(
            state.experiment, state.candidate, since_ms, REPORT_WINDOW
        )
        baseline, candidate = same_span(baseline, candidate, REPORT_WINDOW)
        mode = state.mode.value
        if state.mode is CanaryMode.OFF:
            # An ended experiment: judged as what it was, shadow when it has shadow runs.
            mode = "shadow" if any(r.shadow_of for r in candidate) else "canary"
        # Feedback on the served runs (a shadow run is never seen, so never rated).
        ratings = await self._store.ratings([r.id for r in (*baseline, *candidate)])
        return build_report(
            state.experiment,
            mode,
            baseline,
            candidate,
            state.gates,
            candidate_name=state.candidate,
            dropped=await self._store.dropped(state.experiment),
            retrieval_only=state.retrieval_only,
            ratings=ratings,
            since_ms=since_ms,
            step=state.step if step is not None else None,
        )

    async def evaluate(self) -> tuple[Report, CanaryState]:
        """Report on the running experiment; a breach stops it at once (rolled back), and
        a stepped canary whose step passed moves on to its next step or is promoted."""
        state = await self._store.state()
        report = await self.report(state=state)
        if state.mode is CanaryMode.OFF:
            return report, state
        if stepping.current(state) is not None:
            if not state.paused:  # paused: no run counts, and no step is taken
                await self._step(state, report)
        elif report.verdict == "breach":
            await self._rolled_back(state, report)
        return report, await self.state()

    async def _rolled_back(self, state: CanaryState, report: Report) -> None:
        reason = "gates breached: " + ", ".join(report.breaches)
        if state.steps:
            reason += f" at step {state.step + 1} of {len(state.steps)} ({state.percent:g} %)"
        if not await self._store.stop(state, reason, rolled_back=True):
            return  # another replica stopped it first, and logged it
        metrics.CANARY_ROLLBACKS.labels("gate_breach").inc()
        # One line an alert can match: the experiment, what breached, the numbers.
        log.warning(
            "canary rolled back",
            extra={
                "experiment": state.experiment,
                "candidate": state.candidate,
                "candidate_version": state.candidate_version,
                "rollback_reason": "gate_breach",
                "reason": reason,
                "percent": state.percent,
                "breaches": report.breaches,
                "gates": [g.model_dump() for g in report.gates if g.verdict == "breach"],
            },
        )

    async def _step(self, state: CanaryState, report: Report) -> None:
        decision = stepping.decide(
            state, report.verdict, report.baseline.runs, report.candidate.runs, now_ms()
        )
        if decision.action == "rollback":
            await self._rolled_back(decision.state, report)
        elif decision.action == "promote":
            listed = ",".join(f"{p:g}" for p in state.steps)
            try:
                await self._promote(decision.state, f"promoted after steps {listed} passed")
            except NoCanary:
                return  # another replica ended it first
            metrics.CANARY_PROMOTIONS.labels("steps").inc()
        # Compare-and-set on the step: of two replicas that both see the pass, one
        # moves the canary on, and the other's stale state is not written.
        elif decision.action == "step" and await self._store.advance(state.step, decision.state):
            metrics.CANARY_STEPS.inc()
            log.info(
                "canary step",
                extra={
                    "experiment": state.experiment,
                    "candidate": state.candidate,
                    "from_percent": state.percent,
                    "percent": decision.state.percent,
                    "step": decision.state.step + 1,
                    "steps": len(state.steps),
                    "baseline_runs": report.baseline.runs,
                    "candidate_runs": report.candidate.runs,
                },
            )

    async def history(self) -> list[CanaryState]:
        return await self._store.history()

    # The executor's hook

    async def finished(self, record: RunRecord) -> None:
        """A run ended (its record is saved): index it, shadow it, judge the experiment."""
        if record.experiment is None:
            return
        await self._store.index(record, self._ttl)
        state = await self._store.state()
        if state.experiment != record.experiment or state.mode is CanaryMode.OFF:
            return  # the experiment ended meanwhile: nothing to shadow or to judge
        if record.shadow and state.mode is CanaryMode.SHADOW:
            self._spawn_shadow(record, state)
        await self.evaluate()

    def _spawn_shadow(self, record: RunRecord, state: CanaryState) -> None:
        if self._shadow_run is None:
            return
        if len(self._shadows) >= self._shadow_limit:
            # Never queue without bound behind the served traffic: drop, and count it.
            task = asyncio.create_task(
                self._store.count_dropped(record.experiment or "", self._ttl)
            )
        else:
            task = asyncio.create_task(
                self._shadow_run(
                    record, state.candidate, state.candidate_version, state.retrieval_only
                ),
                name=f"shadow-{record.id}",
            )
        self._shadows.add(task)
        task.add_done_callback(self._shadow_done)

    def _shadow_done(self, task: asyncio.Task[None]) -> None:
        self._shadows.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning(
                "shadow run failed",
                extra={"task": task.get_name(), "error": repr(task.exception())},
            )


def same_span(
    baseline: list[RunRecord], candidate: list[RunRecord], window: int
) -> tuple[list[RunRecord], list[RunRecord]]:
    """Both sides over the same span of time: up to when the first side filled its window.

    At 10 % the baseline reaches its window ten times sooner than the candidate; read
    alone, each side's first runs would cover different hours, and a load that grows
    over the experiment would show as a slower candidate. So once a side is full, the
    other keeps only the runs that finished by the full side's last one.
    """
    full = [side[-1].updated_at_ms for side in (baseline, candidate) if len(side) >= window]
    if not full:
        return baseline, candidate
    cutoff = min(full)
    return (
        [r for r in baseline if r.updated_at_ms <= cutoff],
        [r for r in candidate if r.updated_at_ms <= cutoff],
    )


def _observe(state: CanaryState) -> None:
    metrics.observe_canary(state.mode.value, state.percent, state.paused)
