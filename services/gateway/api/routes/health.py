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
    checks: dict[str, bool] = {}
    try:
        checks["redis"] = await store.ping()
    except (RedisError, OSError):
        checks["redis"] = False
    checks.update(await clients.serving())
    ready = all(checks.values())
    return JSONResponse({"ready": ready, "checks": checks}, status_code=200 if ready else 503)
