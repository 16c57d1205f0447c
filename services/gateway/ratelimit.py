"""Rate limits per API key and per tenant, counted in Redis by the ``limits`` library.

    key-requests     every /v1/ request of one key       (key file, else the default)
    tenant-requests  every /v1/ request of one tenant    (the default)
    key-runs         runs started by one key             (key file, else the default)
    tenant-runs      runs started by one tenant          (the default)

A sliding-window counter per quota, shared by every gateway replica. A refused
request is a 429 with Retry-After; every answer carries the IETF
``RateLimit-Policy`` and ``RateLimit`` headers (draft-ietf-httpapi-ratelimit-headers),
a stream at its start. When Redis cannot count, requests pass: the run store is on
the same Redis and answers 503 itself, and a limiter must not be the outage.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

from limits import RateLimitItem, RateLimitItemPerMinute
from limits.aio.storage import RedisStorage
from limits.aio.strategies import SlidingWindowCounterRateLimiter
from limits.errors import StorageError
from redis.exceptions import RedisError

from services.gateway.auth import Principal
from services.gateway.settings import GatewaySettings

log = logging.getLogger(__name__)

WINDOW_S = 60


@dataclass(frozen=True, slots=True)
class Quota:
    policy: str  # the name in the headers
    scope: str  # whose counter: "key:<id>" or "tenant:<name>"
    item: RateLimitItem


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    headers: dict[str, str]
    refused_by: str | None = None

    @property
    def message(self) -> str:
        return f"rate limit {self.refused_by!r} exceeded; retry after the Retry-After delay"


class RateLimiter:
    def __init__(self, settings: GatewaySettings) -> None:
        self._settings = settings
        storage = RedisStorage(
            "async+" + settings.redis_url,
            implementation="redispy",
            key_prefix="ragway:ratelimit",
            socket_timeout=settings.redis_socket_timeout_s,
            socket_connect_timeout=settings.redis_connect_timeout_s,
        )
        self._limiter = SlidingWindowCounterRateLimiter(storage)

    def quotas(self, caller: Principal, *, starts_run: bool) -> list[Quota]:
        s = self._settings
        key, tenant = f"key:{caller.key_id}", f"tenant:{caller.tenant}"
        out = [
            Quota(
                "key-requests", key, _per_minute(caller.requests_per_minute, s.requests_per_minute)
            ),
            Quota("tenant-requests", tenant, RateLimitItemPerMinute(s.tenant_requests_per_minute)),
        ]
        if starts_run:
            out += [
                Quota("key-runs", key, _per_minute(caller.runs_per_minute, s.runs_per_minute)),
                Quota("tenant-runs", tenant, RateLimitItemPerMinute(s.tenant_runs_per_minute)),
            ]
        return out

    async def check(self, caller: Principal, *, starts_run: bool) -> Decision:
        """Count the request against each of its quotas, in order; stop at the first full one."""
        quotas = self.quotas(caller, starts_run=starts_run)
        policy = ", ".join(f'"{q.policy}";q={q.item.amount};w={WINDOW_S}' for q in quotas)
        states: list[str] = []
        refused: Quota | None = None
        retry_after = 0
        try:
            for q in quotas:
                allowed = await self._limiter.hit(q.item, q.scope)
                stats = await self._limiter.get_window_stats(q.item, q.scope)
                reset_s = max(1, math.ceil(stats.reset_time - time.time()))
                states.append(f'"{q.policy}";r={max(0, stats.remaining)};t={reset_s}')
                if not allowed:
                    refused, retry_after = q, reset_s
                    break
        except (RedisError, StorageError, OSError) as exc:
            log.warning("rate limits not counted", extra={"error": str(exc)})
            return Decision(allowed=True, headers={})
        headers = {"RateLimit-Policy": policy, "RateLimit": ", ".join(states)}
        if refused is None:
            return Decision(allowed=True, headers=headers)
        headers["Retry-After"] = str(retry_after)
        return Decision(allowed=False, headers=headers, refused_by=refused.policy)


def _per_minute(own: int | None, default: int) -> RateLimitItem:
    return RateLimitItemPerMinute(own if own is not None else default)
