"""Rate limits per API key and per tenant, counted in Redis (ragway/ratelimit.py).

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

from ragway.ratelimit import Decision, Quota, QuotaChecker, per_minute
from services.gateway.auth import Principal
from services.gateway.settings import GatewaySettings

__all__ = ["Decision", "Quota", "RateLimiter"]


class RateLimiter:
    def __init__(self, settings: GatewaySettings) -> None:
        self._settings = settings
        self._checker = QuotaChecker(
            settings.redis_url,
            key_prefix="ragway:ratelimit",
            socket_timeout_s=settings.redis_socket_timeout_s,
            connect_timeout_s=settings.redis_connect_timeout_s,
            max_connections=settings.redis_max_connections,
            pool_wait_s=settings.redis_pool_wait_s,
        )

    def quotas(self, caller: Principal, *, starts_run: bool) -> list[Quota]:
        s = self._settings
        key, tenant = f"key:{caller.key_id}", f"tenant:{caller.tenant}"
        out = [
            Quota(
                "key-requests", key, per_minute(caller.requests_per_minute or s.requests_per_minute)
            ),
            Quota("tenant-requests", tenant, per_minute(s.tenant_requests_per_minute)),
        ]
        if starts_run:
            out += [
                Quota("key-runs", key, per_minute(caller.runs_per_minute or s.runs_per_minute)),
                Quota("tenant-runs", tenant, per_minute(s.tenant_runs_per_minute)),
            ]
        return out

    async def check(self, caller: Principal, *, starts_run: bool) -> Decision:
        """Count the request against each of its quotas, in order; stop at the first full one."""
        return await self._checker.check(self.quotas(caller, starts_run=starts_run))
