"""Feedback on a run's answer: thumbs up or down and an optional comment, in Redis.

    ragway:feedback:{run_id}          JSON FeedbackRecord: the latest feedback on the run
    ragway:feedback:tenant:{tenant}   sorted set: run ids by the time of their feedback

Both expire ``feedback_retention_s`` after the last feedback (the index is pruned of
older members on every write), so feedback outlives the run record it is about if
the operator wants it to. One feedback per run: sending again replaces it (last
write wins), so a user who changes their mind is counted once, with the new rating.
The run's own record carries the latest rating, comment and time too (``feedback``
in GET /v1/runs/{id}); it is written after the feedback store, so a failure between
the two answers 5xx and the client's retry writes both.
Only the key that started the run may send it (runs/submit.py ``owned_run``), and
only once the run has ended.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import redis.asyncio as redis
from pydantic import BaseModel, Field

from services.gateway.runs.errors import RunNotFinished
from services.gateway.runs.models import Rating, RunFeedback, RunRecord, now_ms

MAX_COMMENT_CHARS = 1000

# Store the record, index it by time, forget index entries past retention; one script,
# so the record and its index entry are written together or not at all.
_PUT = """
local previous = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[2], 'EX', tonumber(ARGV[4]))
redis.call('ZADD', KEYS[2], tonumber(ARGV[3]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[5])
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[4]))
if previous then return previous end
return false
"""


class FeedbackRecord(BaseModel):
    """One run's feedback, as stored and as `ragway feedback export` writes it."""

    run_id: str
    tenant: str
    key_id: str
    rating: Rating
    comment: str | None = None
    at_ms: int = Field(description="When this feedback was sent (it replaced any earlier).")
    path: str = Field(description="The path that served the run.")
    path_version: int
    experiment: str | None = None
    channel: str | None = None
    origin: str | None = Field(default=None, description="The page's origin, for a browser.")


@dataclass(frozen=True, slots=True)
class Stored:
    record: FeedbackRecord
    previous: FeedbackRecord | None  # the feedback it replaced, if any


class FeedbackWriter(Protocol):
    async def put(self, record: FeedbackRecord, ttl_s: int) -> FeedbackRecord | None: ...


class RunAnnotator(Protocol):
    """Where the run records live (RunStore): the feedback is shown on the run too."""

    async def attach_feedback(self, run_id: str, feedback: RunFeedback) -> RunRecord | None: ...


def feedback_key(run_id: str) -> str:
    return f"ragway:feedback:{run_id}"


def tenant_key(tenant: str) -> str:
    return f"ragway:feedback:tenant:{tenant}"


class FeedbackStore:
    def __init__(self, client: redis.Redis) -> None:
        self._r = client
        self._put = client.register_script(_PUT)

    async def put(self, record: FeedbackRecord, ttl_s: int) -> FeedbackRecord | None:
        """Store the run's feedback; the one it replaced, if there was one."""
        previous = await self._put(
            keys=[feedback_key(record.run_id), tenant_key(record.tenant)],
            args=[
                record.run_id,
                record.model_dump_json(),
                record.at_ms,
                ttl_s,
                record.at_ms - ttl_s * 1000,
            ],
        )
        return None if previous is None else FeedbackRecord.model_validate_json(previous)

    async def get(self, run_id: str) -> FeedbackRecord | None:
        raw = await self._r.get(feedback_key(run_id))
        return None if raw is None else FeedbackRecord.model_validate_json(raw)

    async def page(
        self, tenant: str, after: tuple[int, str] | None, limit: int
    ) -> tuple[list[FeedbackRecord], tuple[int, str] | None]:
        """Up to ``limit`` of the tenant's feedback, oldest first, strictly after the
        cursor ``(at_ms, run_id)``; and the cursor of the next page (None: no more)."""
        index = tenant_key(tenant)
        low = "-inf" if after is None else after[0]
        scanned: list[tuple[int, str]] = []
        offset = 0
        while len(scanned) <= limit:  # one more than a page tells whether another follows
            batch: Sequence[Any] = await self._r.zrangebyscore(
                index, low, "+inf", start=offset, num=limit + 1, withscores=True
            )
            if not batch:
                break
            offset += len(batch)
            for member, score in batch:
                entry = (int(score), _text(member))
                if after is None or entry > after:  # ties at after's ms: by run id
                    scanned.append(entry)
        more = len(scanned) > limit
        scanned = scanned[:limit]
        keys = [feedback_key(run_id) for _, run_id in scanned]
        found: list[Any] = await self._r.mget(keys) if keys else []
        # A record expired after its last feedback; its index entry goes on the next write.
        records = [FeedbackRecord.model_validate_json(raw) for raw in found if raw is not None]
        return records, (scanned[-1] if more else None)


async def give_feedback(
    writer: FeedbackWriter,
    runs: RunAnnotator,
    run: RunRecord,
    rating: Rating,
    comment: str | None,
    ttl_s: int,
) -> Stored:
    """Store feedback on the caller's run (``owned_run`` found it); RunNotFinished before
    its end. Sending again replaces the earlier feedback."""
    if not run.status.finished:
        raise RunNotFinished(run.id, run.status.value)
    record = FeedbackRecord(
        run_id=run.id,
        tenant=run.tenant,
        key_id=run.key_id,
        rating=rating,
        comment=comment or None,
        at_ms=now_ms(),
        path=run.path,
        path_version=run.path_version,
        experiment=run.experiment,
        channel=run.channel,
        origin=run.origin,
    )
    previous = await writer.put(record, ttl_s)
    await runs.attach_feedback(
        run.id, RunFeedback(rating=rating, comment=record.comment, at_ms=record.at_ms)
    )
    return Stored(record, previous)


# What parse_cursor accepts, for the spec (GET /v1/admin/feedback?after=).
CURSOR_PATTERN = "^[0-9]+:.+$"


def parse_cursor(cursor: str) -> tuple[int, str] | None:
    """``<at_ms>:<run_id>`` as the export pages hand it out; None when malformed."""
    at, sep, run_id = cursor.partition(":")
    # ASCII digits only: str.isdigit() is true of '²', which int() refuses.
    if not sep or not (at.isascii() and at.isdigit()) or not run_id:
        return None
    return int(at), run_id


def format_cursor(cursor: tuple[int, str]) -> str:
    return f"{cursor[0]}:{cursor[1]}"


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
