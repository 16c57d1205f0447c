"""Liveness and readiness that tell the truth about the dependencies."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from redis.exceptions import RedisError

from services.gateway.api.deps import Clients, Store

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="Liveness: the process answers")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get(
    "/readyz",
    summary="Readiness: Redis, retriever and generator all serving",
    responses={503: {"description": "A dependency is not serving"}},
)
async def readyz(store: Store, clients: Clients) -> JSONResponse:
    """`status` is `ok`, `degraded` (all serving, but a circuit breaker is not closed:
    runs may be refused or fail fast) or `unavailable` (a dependency is not serving)."""
    checks: dict[str, bool] = {}
    try:
        checks["redis"] = await store.ping()
    except (RedisError, OSError):
        checks["redis"] = False
    checks.update(await clients.serving())
    ready = all(checks.values())
    breakers = clients.breaker_states()
    # An open breaker keeps the replica ready (200): every replica sees the same
    # dependency, and pulling them all would turn a clear 503 with Retry-After into
    # refused connections. It is reported, so a breaker that stays open is seen.
    if not ready:
        status = "unavailable"
    elif any(state != "closed" for state in breakers.values()):
        status = "degraded"
    else:
        status = "ok"
    return JSONResponse(
        {"ready": ready, "status": status, "checks": checks, "breakers": breakers},
        status_code=200 if ready else 503,
    )
