"""Paths, the canary state and the experiment's run index, in Redis.

    ragway:path:{name}:version     INCR counter: the latest version of the path
    ragway:path:{name}:v{n}        JSON PathConfig of version n (kept: run records name it)
    ragway:paths                   set of the path names
    ragway:canary:state            JSON CanaryState: what routing reads on every run
    ragway:canary:active           the running experiment id (SET NX: one at a time)
    ragway:canary:history          list of ended experiments (newest first, 50 kept)
    ragway:exp:{exp}:{path}        sorted set: finished run ids of the experiment by path
    ragway:exp:{exp}:shadow_dropped  shadows not run because the shadow queue was full
    ragway:feedback:{run_id}       read only: the feedback on a run (runs/feedback.py)

Every replica reads the same keys, so a start, a stop or a rollback reaches all
of them on their next run.
"""

from __future__ import annotations

import redis.asyncio as redis

from services.gateway.paths.models import (
    BASELINE,
    CanaryMode,
    CanaryState,
    PathConfig,
    default_path,
)
from services.gateway.runs.feedback import FeedbackRecord, feedback_key
from services.gateway.runs.models import RunRecord, now_ms
from services.gateway.runs.store import run_key

STATE = "ragway:canary:state"
ACTIVE = "ragway:canary:active"
HISTORY = "ragway:canary:history"
NAMES = "ragway:paths"

# Delete the active marker only if it still names this experiment: of two
# replicas that both see a breach, one stops the canary, the other learns it ended.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
"""

# Move a stepped canary on only if it is still running at the step this replica judged:
# of two replicas that both saw the step pass, one writes the next step, and the other's
# copy (or a state from before a stop) is never written over a newer one.
_ADVANCE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local raw = redis.call('GET', KEYS[2])
if not raw then return 0 end
if cjson.decode(raw)['step'] ~= tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[2], ARGV[3])
return 1
"""


def _version_key(name: str) -> str:
    return f"ragway:path:{name}:version"


def _config_key(name: str, version: int) -> str:
    return f"ragway:path:{name}:v{version}"


def runs_key(experiment: str, path: str) -> str:
    return f"ragway:exp:{experiment}:{path}"


def dropped_key(experiment: str) -> str:
    return f"ragway:exp:{experiment}:shadow_dropped"


def _text(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


class PathStore:
    def __init__(self, client: redis.Redis) -> None:
        self._r = client
        self._release = client.register_script(_RELEASE)
        self._advance = client.register_script(_ADVANCE)

    # Paths

    async def names(self) -> list[str]:
        members = await self._r.smembers(NAMES)
        return sorted({BASELINE} | {_text(m) or "" for m in members})

    async def latest_version(self, name: str) -> int:
        raw = _text(await self._r.get(_version_key(name)))
        return int(raw) if raw else 0

    async def get(self, name: str, version: int | None = None) -> PathConfig | None:
        """One version (default: the latest); baseline v0 is the built-in default."""
        if version is None:
            version = await self.latest_version(name)
        if version == 0:
            return default_path(name) if name == BASELINE else None
        raw = _text(await self._r.get(_config_key(name, version)))
        return None if raw is None else PathConfig.model_validate_json(raw)

    async def put(self, config: PathConfig) -> PathConfig:
        """Store the next version of the path; returns it with its version."""
        version = int(await self._r.incr(_version_key(config.name)))
        stored = config.model_copy(update={"version": version, "updated_at_ms": now_ms()})
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.set(_config_key(config.name, version), stored.model_dump_json())
            pipe.sadd(NAMES, config.name)
            await pipe.execute()
        return stored

    # Canary state

    async def state(self) -> CanaryState:
        raw = _text(await self._r.get(STATE))
        return CanaryState() if raw is None else CanaryState.model_validate_json(raw)

    async def routing_inputs(self) -> tuple[CanaryState, int]:
        """The state and the baseline's latest version, in one round trip."""
        state_raw, version_raw = await self._r.mget(STATE, _version_key(BASELINE))
        state = CanaryState() if state_raw is None else CanaryState.model_validate_json(state_raw)
        version = int(_text(version_raw) or 0)
        return state, version

    async def start(self, state: CanaryState) -> bool:
        """Begin an experiment; False when one is running already (nothing changed)."""
        assert state.experiment is not None
        if not await self._r.set(ACTIVE, state.experiment, nx=True):
            return False
        await self._r.set(STATE, state.model_dump_json())
        return True

    async def active(self) -> str | None:
        return _text(await self._r.get(ACTIVE))

    async def update(self, state: CanaryState) -> bool:
        """Rewrite the running experiment's state (a new percentage); False if it ended."""
        if state.experiment is None or await self.active() != state.experiment:
            return False
        await self._r.set(STATE, state.model_dump_json())
        return True

    async def advance(self, step: int, state: CanaryState) -> bool:
        """Compare-and-set: write ``state`` (the next step, a pause) if the running
        experiment is still at ``step``; False if it ended or moved on meanwhile."""
        assert state.experiment is not None
        return bool(
            await self._advance(
                keys=[ACTIVE, STATE], args=[state.experiment, step, state.model_dump_json()]
            )
        )

    async def stop(self, state: CanaryState, reason: str, *, rolled_back: bool) -> bool:
        """End the experiment; False when it had ended already (by another replica)."""
        if state.experiment is None or not await self._release(
            keys=[ACTIVE], args=[state.experiment]
        ):
            return False
        ended = state.model_copy(
            update={
                "mode": CanaryMode.OFF,
                "stopped_at_ms": now_ms(),
                "stopped_reason": reason,
                "rolled_back": rolled_back,
            }
        )
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.set(STATE, ended.model_dump_json())
            pipe.lpush(HISTORY, ended.model_dump_json())
            pipe.ltrim(HISTORY, 0, 49)
            await pipe.execute()
        return True

    async def history(self) -> list[CanaryState]:
        return [CanaryState.model_validate_json(r) for r in await self._r.lrange(HISTORY, 0, 49)]

    # The experiment's runs

    async def index(self, record: RunRecord, ttl_s: int) -> None:
        if record.experiment is None:
            return
        key = runs_key(record.experiment, record.path)
        async with self._r.pipeline(transaction=False) as pipe:
            pipe.zadd(key, {record.id: record.updated_at_ms})
            pipe.expire(key, ttl_s)
            await pipe.execute()

    async def runs(
        self, experiment: str, path: str, since_ms: int = 0, limit: int = 1000
    ) -> list[RunRecord]:
        """The experiment's first ``limit`` finished runs on one path, oldest first.

        The first, not the newest: each evaluation then sees every run the
        previous one saw, which the sequential tests of the report rely on.
        """
        ids = await self._r.zrangebyscore(
            runs_key(experiment, path), since_ms, "+inf", start=0, num=limit
        )
        if not ids:
            return []
        raws = await self._r.mget(
            [run_key(i.decode() if isinstance(i, bytes) else str(i)) for i in ids]
        )
        return [RunRecord.model_validate_json(r) for r in raws if r is not None]

    async def count_dropped(self, experiment: str, ttl_s: int) -> None:
        async with self._r.pipeline(transaction=False) as pipe:
            pipe.incr(dropped_key(experiment))
            pipe.expire(dropped_key(experiment), ttl_s)
            await pipe.execute()

    async def dropped(self, experiment: str) -> int:
        return int(_text(await self._r.get(dropped_key(experiment))) or 0)

    async def ratings(self, run_ids: list[str]) -> dict[str, str]:
        """run id → its current feedback rating (``up``/``down``), for the rated runs only."""
        if not run_ids:
            return {}
        raws = await self._r.mget([feedback_key(i) for i in run_ids])
        rated = (FeedbackRecord.model_validate_json(r) for r in raws if r is not None)
        return {f.run_id: f.rating for f in rated}
