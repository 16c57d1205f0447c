"""One error shape for every failure: ``{"error": {"code", "message"}}``.

The run logic raises its own errors (runs/errors.py); ``http_error`` gives each
its status, code and headers here, so only the API layer speaks HTTP.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from redis.exceptions import RedisError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import BaseRoute, Route

from ragway.http_errors import error_response as error_response
from services.gateway.paths import errors as path_errors
from services.gateway.runs.errors import (
    ConversationNotFound,
    ConversationTooLarge,
    ConversationTurnLimit,
    DependencyUnavailable,
    IdempotencyConflict,
    InvalidIdempotencyKey,
    QuestionTooLong,
    QueueFull,
    RunAlreadyFinished,
    RunError,
    RunNotFinished,
    RunNotFound,
    RunWaitTimedOut,
)


class ApiError(Exception):
    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers


_STATUS: dict[type[RunError], tuple[int, str]] = {
    QuestionTooLong: (422, "question_too_long"),
    InvalidIdempotencyKey: (400, "invalid_idempotency_key"),
    IdempotencyConflict: (422, "idempotency_key_reused"),
    DependencyUnavailable: (503, "dependency_unavailable"),
    QueueFull: (503, "queue_full"),
    RunNotFound: (404, "run_not_found"),
    RunAlreadyFinished: (409, "run_finished"),
    RunNotFinished: (409, "run_not_finished"),
    RunWaitTimedOut: (504, "run_timeout"),
    ConversationNotFound: (404, "conversation_not_found"),
    ConversationTurnLimit: (409, "conversation_turn_limit"),
    ConversationTooLarge: (409, "conversation_too_large"),
}


def http_error(exc: RunError) -> ApiError:
    """The HTTP answer to a refusal of the run logic."""
    status, code = _STATUS[type(exc)]
    headers = None
    if isinstance(exc, DependencyUnavailable | QueueFull):
        headers = {"Retry-After": str(max(1, math.ceil(exc.retry_after_s)))}
    return ApiError(status, code, str(exc), headers)


_PATH_STATUS: dict[type[path_errors.PathError], tuple[int, str]] = {
    path_errors.InvalidPathName: (422, "invalid_path_name"),
    path_errors.UnknownPath: (404, "unknown_path"),
    path_errors.UnknownBuild: (422, "unknown_build"),
    path_errors.UnknownReranker: (422, "unknown_reranker"),
    path_errors.RetrieverUnavailable: (503, "retriever_unavailable"),
    path_errors.CanaryRunning: (409, "canary_running"),
    path_errors.NoCanary: (409, "no_canary"),
    path_errors.InvalidCandidate: (422, "invalid_candidate"),
    path_errors.InvalidSteps: (422, "invalid_steps"),
    path_errors.CanaryStepping: (409, "canary_stepping"),
}


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err.get("loc", ()) if x not in ("body", "query", "header"))
        msg = err.get("msg", "invalid")
        if err.get("type") == "json_invalid":
            return "the request body is not valid JSON"
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts) or "invalid request"


def endpoints(routes: Iterable[BaseRoute]) -> Iterator[Route | APIRoute]:
    """The app's endpoint routes, those of included routers too (an included router is
    one composite route in this FastAPI: its routes are inside it)."""
    for route in routes:
        if isinstance(route, Route | APIRoute):
            yield route
        elif (inner := getattr(route, "original_router", None)) is not None:
            yield from endpoints(inner.routes)


def allowed_methods(request: Request) -> str:
    """Every method some route takes at this path. Starlette's 405 names only the first
    route's methods, while one path often has a route per method (GET and PUT of
    /v1/admin/paths/{name}): a client would read that the others do not exist."""
    path = request.url.path
    methods = {
        method
        for route in endpoints(request.app.router.routes)
        if route.path_regex.match(path)
        for method in route.methods or ()
    }
    return ", ".join(sorted(methods))


def install(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, exc.headers)

    @app.exception_handler(RunError)
    async def _run_error(_: Request, exc: RunError) -> JSONResponse:
        error = http_error(exc)
        return error_response(error.status, error.code, error.message, error.headers)

    @app.exception_handler(path_errors.PathError)
    async def _path_error(_: Request, exc: path_errors.PathError) -> JSONResponse:
        # Paths and canary refusals (the admin API) map here like the run logic's.
        status, code = _PATH_STATUS[type(exc)]
        return error_response(status, code, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(422, "invalid_request", _validation_message(exc))

    @app.exception_handler(RedisError)
    async def _store_down(_: Request, exc: RedisError) -> JSONResponse:
        # The run store is unreachable: nothing was accepted; the client may retry.
        return error_response(
            503,
            "store_unavailable",
            "the run store is unavailable; retry shortly",
            {"Retry-After": "1"},
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        # Starlette's headers carry what the status needs, e.g. Allow on a 405.
        headers = dict(exc.headers) if exc.headers else {}
        if exc.status_code == 405:
            headers["Allow"] = allowed_methods(request)
        return error_response(exc.status_code, code, str(exc.detail), headers or None)
