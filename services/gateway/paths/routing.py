"""Which path serves a run: sticky, deterministic, the same on every replica.

A user's bucket is a hash of tenant, key and user id (the key alone when the
caller names no user), so a user stays on one side across requests, resumes,
replicas and a widened percentage: raising 5 % to 25 % keeps the first 5 % in.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from services.gateway.paths.models import BASELINE, CanaryMode, CanaryState

BUCKETS = 10_000


def bucket(tenant: str, key_id: str, user_id: str | None) -> int:
    """0..9999, stable for one (tenant, key, user)."""
    who = f"user:{user_id}" if user_id else "key"
    digest = hashlib.sha256(f"{tenant}\0{key_id}\0{who}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % BUCKETS


@dataclass(frozen=True, slots=True)
class Route:
    path: str
    version: int
    experiment: str | None  # set while a canary or shadow runs: the run counts towards it
    shadow: bool  # run the candidate beside this one, unseen


def route(
    state: CanaryState, baseline_version: int, tenant: str, key_id: str, user_id: str | None
) -> Route:
    if state.mode is CanaryMode.OFF or state.experiment is None:
        return Route(BASELINE, baseline_version, None, shadow=False)
    if state.paused:
        return Route(BASELINE, state.baseline_version, None, shadow=False)
    if state.mode is CanaryMode.SHADOW:
        shadowed = bucket(tenant, key_id, user_id) < state.percent * BUCKETS / 100
        return Route(BASELINE, state.baseline_version, state.experiment, shadow=shadowed)
    if bucket(tenant, key_id, user_id) < state.percent * BUCKETS / 100:
        return Route(state.candidate, state.candidate_version, state.experiment, shadow=False)
    return Route(BASELINE, state.baseline_version, state.experiment, shadow=False)
