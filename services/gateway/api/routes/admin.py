"""/v1/admin: paths (release units), canary or shadow experiments, feedback. Admin keys only."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field, model_validator

from services.gateway.api.deps import AdminCaller, Feedback, Paths
from services.gateway.api.errors import ApiError
from services.gateway.api.schemas import ErrorBody, FeedbackPage
from services.gateway.paths.models import (
    CANDIDATE,
    CanaryMode,
    CanaryState,
    Gates,
    PathConfig,
    PathOptions,
    RerankerOffer,
)
from services.gateway.paths.report import Report
from services.gateway.runs.feedback import CURSOR_PATTERN, format_cursor, parse_cursor

router = APIRouter(prefix="/v1/admin", tags=["admin"])

ERRORS: dict[int | str, dict[str, object]] = {
    s: {"model": ErrorBody} for s in (400, 401, 403, 404, 409, 422, 431, 503)
}


class CanaryStart(BaseModel):
    model_config = {"extra": "forbid"}

    mode: Literal["canary", "shadow"] = Field(
        default="canary",
        description="canary: serve the candidate to `percent` of users; shadow: run it "
        "beside the baseline for `percent` of users, never serving it.",
    )
    candidate: str = Field(default=CANDIDATE, description="The path under test.")
    percent: float | None = Field(
        default=None,
        ge=0,
        le=100,
        description="Share of users, sticky per user. Required unless `steps` is given "
        "(then it may be left out, or must equal the first step).",
    )
    steps: list[float] | None = Field(
        default=None,
        description="Canary only: automatic steps, e.g. [5, 25, 50] (rising, each in "
        "(0, 100], at most 10). Each step is judged on the runs since it began: a pass moves "
        "to the next step, a pass of the last promotes the candidate, a breach rolls back.",
    )
    retrieval_only: bool = Field(
        default=False,
        description="Shadow only: compare ranked sources, with no second generator call.",
    )
    gates: Gates = Field(default_factory=Gates)

    @model_validator(mode="after")
    def _percent_or_steps(self) -> CanaryStart:
        if self.percent is None and self.steps is None:
            raise ValueError("give percent, or steps (whose first step is the percent)")
        return self


class CanaryPercent(BaseModel):
    model_config = {"extra": "forbid"}

    percent: float = Field(ge=0, le=100)


class CanaryStatus(BaseModel):
    state: CanaryState
    report: Report | None = Field(description="The current (or last) experiment's report.")


class Evaluation(BaseModel):
    report: Report
    state: CanaryState = Field(description="After the evaluation: `off` if it rolled back.")


@router.get("/paths", response_model=list[PathConfig], responses=ERRORS, summary="List paths")
async def list_paths(_: AdminCaller, paths: Paths) -> list[PathConfig]:
    """The latest version of every path; `baseline` is always there (version 0 = defaults)."""
    return [await paths.show(name) for name in await paths.names()]


@router.get("/paths/{name}", response_model=PathConfig, responses=ERRORS, summary="Show a path")
async def show_path(
    name: str,
    _: AdminCaller,
    paths: Paths,
    version: Annotated[int | None, Query(ge=0, description="Default: the latest")] = None,
) -> PathConfig:
    return await paths.show(name, version)


@router.put(
    "/paths/{name}",
    response_model=PathConfig,
    responses=ERRORS,
    summary="Set a path (stores its next version)",
)
async def set_path(name: str, body: PathOptions, _: AdminCaller, paths: Paths) -> PathConfig:
    """Validated first: a build the retriever does not know is a 422, and nothing is stored.
    Runs already routed keep the version they were given."""
    return await paths.set_path(name, body)


@router.get(
    "/rerankers",
    response_model=list[RerankerOffer],
    responses=ERRORS,
    summary="List the reranker artifacts a path may name",
)
async def list_rerankers(_: AdminCaller, paths: Paths) -> list[RerankerOffer]:
    """What the retriever has loaded: the shared default, each tenant's own, and the
    artifacts offered only to a path that names one (`reranker`)."""
    return await paths.rerankers()


@router.get("/canary", response_model=CanaryStatus, responses=ERRORS, summary="Canary status")
async def canary_status(_: AdminCaller, paths: Paths) -> CanaryStatus:
    state = await paths.state()
    report = await paths.report(state=state) if state.experiment else None
    return CanaryStatus(state=state, report=report)


@router.post(
    "/canary",
    status_code=201,
    response_model=CanaryState,
    responses=ERRORS,
    summary="Start a canary or a shadow",
)
async def start_canary(body: CanaryStart, _: AdminCaller, paths: Paths) -> CanaryState:
    """One experiment at a time (409 while one runs); the candidate must be a stored path."""
    return await paths.start(
        CanaryMode(body.mode),
        body.candidate,
        body.percent,
        body.gates,
        retrieval_only=body.retrieval_only,
        steps=body.steps,
    )


@router.post(
    "/canary/stop", response_model=CanaryState, responses=ERRORS, summary="Stop the experiment"
)
async def stop_canary(_: AdminCaller, paths: Paths) -> CanaryState:
    """Everyone is served by the baseline again at their next run."""
    return await paths.stop()


@router.post(
    "/canary/percent",
    response_model=CanaryState,
    responses=ERRORS,
    summary="Change the experiment's share of users",
)
async def canary_percent(body: CanaryPercent, _: AdminCaller, paths: Paths) -> CanaryState:
    """A step of the rollout: widening keeps the users already in on the candidate.
    Refused (409 `canary_stepping`) while the experiment steps on its own."""
    return await paths.set_percent(body.percent)


@router.post(
    "/canary/pause",
    response_model=CanaryState,
    responses=ERRORS,
    summary="Pause the experiment",
)
async def pause_canary(_: AdminCaller, paths: Paths) -> CanaryState:
    """Everyone is served by the baseline, and no run counts, until it is resumed."""
    return await paths.pause(True)


@router.post(
    "/canary/resume",
    response_model=CanaryState,
    responses=ERRORS,
    summary="Resume a paused experiment",
)
async def resume_canary(_: AdminCaller, paths: Paths) -> CanaryState:
    return await paths.pause(False)


@router.post(
    "/canary/rollback",
    response_model=CanaryState,
    responses=ERRORS,
    summary="Roll the candidate back",
)
async def rollback_canary(_: AdminCaller, paths: Paths) -> CanaryState:
    """Stop the experiment, recorded as rolled back; the baseline serves everyone."""
    return await paths.rollback()


@router.post(
    "/canary/promote",
    response_model=PathConfig,
    responses=ERRORS,
    summary="Promote the candidate to baseline",
)
async def promote_canary(_: AdminCaller, paths: Paths) -> PathConfig:
    """The candidate's tested version is stored as the baseline's next version and the
    experiment ends: everyone is served by it at their next run."""
    return await paths.promote()


@router.get("/canary/report", response_model=Report, responses=ERRORS, summary="Compare the paths")
async def canary_report(
    _: AdminCaller,
    paths: Paths,
    since_ms: Annotated[int, Query(ge=0, description="Only runs finished after this")] = 0,
) -> Report:
    """The running (else the last) experiment: baseline against candidate, and its gates."""
    return await paths.report(since_ms)


@router.post(
    "/canary/evaluate",
    response_model=Evaluation,
    responses=ERRORS,
    summary="Judge the experiment now (a breach rolls back)",
)
async def evaluate_canary(_: AdminCaller, paths: Paths) -> Evaluation:
    """What every finished run of the experiment triggers anyway, on demand."""
    report, state = await paths.evaluate()
    return Evaluation(report=report, state=state)


@router.get(
    "/canary/history",
    response_model=list[CanaryState],
    responses=ERRORS,
    summary="Ended experiments",
)
async def canary_history(_: AdminCaller, paths: Paths) -> list[CanaryState]:
    return await paths.history()


@router.get(
    "/feedback",
    response_model=FeedbackPage,
    responses=ERRORS,
    summary="Read a tenant's feedback on answers",
)
async def list_feedback(
    _: AdminCaller,
    feedback: Feedback,
    tenant: Annotated[str, Query(min_length=1, max_length=128, description="The tenant")],
    after: Annotated[
        str | None,
        Query(
            description="The `next_cursor` of the previous page",
            json_schema_extra={"pattern": CURSOR_PATTERN},
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 500,
) -> FeedbackPage:
    """Each run's current feedback, oldest first, a page at a time (`ragway feedback
    export` follows the pages). Feedback older than `feedback_retention_s` is gone."""
    cursor = None
    if after is not None:
        cursor = parse_cursor(after)
        if cursor is None:
            raise ApiError(400, "invalid_cursor", f"after {after[:64]!r} is not a feedback cursor")
    items, following = await feedback.page(tenant, cursor, limit)
    return FeedbackPage(
        items=items, next_cursor=None if following is None else format_cursor(following)
    )
