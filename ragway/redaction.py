"""Passage text taken back out of run records and event logs when a document goes.

A run keeps the passages it read (``sources[].text``) and its answer, which quotes
them, in its record (``RAGWAY_RECORD_RETENTION_S``) and its event log
(``RAGWAY_EVENT_RETENTION_S``). When the ingest worker applies ``document.deleted``
or ``document.access_changed``, every run of that tenant that read the document
loses that text. The gateway writes the index, the ingest worker redacts, and the
gateway redacts again after a run's final write; all three use these keys:

    ragway:cites:<len(tenant)>:<tenant>:<document_id>
        sorted set: the ids of the runs that read the document, scored by the
        expiry (epoch ms) of their record; expired members are trimmed on write
    ragway:run:{id}:redactions
        hash: '["<tenant>","<document_id>"]' -> reason, every redaction of the run,
        so that a run still executing when one came is redacted again by its end
    ragway:conv:{id}:turns
        the run's conversation: its turn loses the answer too (the gateway's key)

A redaction of one run rewrites its record and its event log in one WATCH/MULTI
transaction: a concurrent append by the run's executor makes it start over, so
nothing appended meanwhile is lost. A Redis stream entry cannot be changed in
place, so the log is rebuilt under the same entry ids: a client resuming with
``Last-Event-ID`` finds every id it knew, in order, with the text taken out.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import redis
import redis.asyncio as aioredis
from redis.exceptions import WatchError

# A run of the gateway that keeps appending (an answer streaming) can make a
# transaction start over; after this many tries WatchError (a RedisError) is raised,
# and the ingest worker leaves the delivery to the broker, which hands it out again.
MAX_TRIES = 50


class Reason(StrEnum):
    DOCUMENT_DELETED = "document_deleted"
    ACCESS_CHANGED = "access_changed"


def run_key(run_id: str) -> str:
    return f"ragway:run:{run_id}"


def events_key(run_id: str) -> str:
    return f"ragway:run:{run_id}:events"


def redactions_key(run_id: str) -> str:
    return f"ragway:run:{run_id}:redactions"


def turns_key(conversation_id: str) -> str:
    return f"ragway:conv:{conversation_id}:turns"


def cites_key(tenant: str, document_id: str) -> str:
    # The tenant's length first: no tenant and document id pair names another's key.
    return f"ragway:cites:{len(tenant)}:{tenant}:{document_id}"


def _field(tenant: str, document_id: str) -> str:
    return json.dumps([tenant, document_id])


def now_ms() -> int:
    return int(time.time() * 1000)


Entry = tuple[str, dict[str, str]]  # a stream entry: its id and its fields


@dataclass(frozen=True, slots=True)
class Rewrite:
    """What a redaction changes of one run; None where that part stays as it is."""

    record: str | None
    events: list[Entry] | None
    # The run's turn in its conversation (whose answer it is): its index and new JSON.
    turn: tuple[int, str] | None = None


def redact_record(record: dict[str, Any], redactions: dict[str, str]) -> bool:
    """Take the passages of the redacted documents (``document_id -> reason``) out of a
    run record, and its answer when it cited one of them. True when anything changed."""
    changed = False
    for source in record.get("sources") or []:
        reason = redactions.get(source.get("document_id"))
        if reason is not None and (source.get("text") or source.get("redacted") != reason):
            source["text"], source["redacted"] = "", reason
            changed = True
    cited = _cited(record.get("citations"), redactions)
    if cited is not None and record.get("answer"):
        record["answer"] = ""
        changed = True
    marks = record.setdefault("redactions", [])
    for document_id, reason in sorted(redactions.items()):
        touched = any(s.get("document_id") == document_id for s in record.get("sources") or [])
        mark = {"document_id": document_id, "reason": reason}
        if touched and mark not in marks:
            marks.append(mark)
            changed = True
    return changed


def redact_event(
    type_: str, data: dict[str, Any], redactions: dict[str, str], cited: str | None
) -> bool:
    """Take the redacted text out of one event's data; ``cited``: the reason when the
    run's answer cited a redacted document (its answer text goes too)."""
    changed = False
    if type_ == "retrieval.completed":
        for source in data.get("sources") or []:
            reason = redactions.get(source.get("document_id"))
            if reason is not None and (source.get("text") or source.get("redacted") != reason):
                source["text"], source["redacted"] = "", reason
                changed = True
    elif cited is not None and type_ == "answer.delta" and data.get("text"):
        data["text"], data["redacted"] = "", cited
        changed = True
    elif cited is not None and type_ == "answer.completed" and data.get("answer"):
        data["answer"], data["redacted"] = "", cited
        changed = True
    return changed


def rewrite(
    raw_record: bytes | None,
    entries: Iterable[Entry],
    tenant: str,
    redactions: dict[str, str],
    turns: Iterable[bytes | str] = (),
) -> Rewrite:
    """The new record and event log of a run, under ``redactions`` of ``tenant``'s
    documents. A run of another tenant is never changed (document ids are per tenant)."""
    if raw_record is None:
        return Rewrite(None, None)
    record = json.loads(raw_record)
    if record.get("tenant") != tenant:
        return Rewrite(None, None)
    new_record = _dumps(record) if redact_record(record, redactions) else None
    cited = _cited(record.get("citations"), redactions)
    events: list[Entry] = []
    changed = False
    for entry_id, fields in entries:
        data = json.loads(fields["data"])
        if redact_event(fields["type"], data, redactions, cited):
            fields = {**fields, "data": _dumps(data)}
            changed = True
        events.append((entry_id, fields))
    return Rewrite(new_record, events if changed else None, _turn(turns, record["id"], cited))


def _turn(turns: Iterable[bytes | str], run_id: str, cited: str | None) -> tuple[int, str] | None:
    """The run's conversation turn without its answer, when the answer cited a redacted
    document: a later GET of the conversation shows the answer otherwise."""
    if cited is None:
        return None
    for i, raw in enumerate(turns):
        turn = json.loads(raw)
        if turn.get("run_id") == run_id and turn.get("answer"):
            turn["answer"], turn["redacted"] = "", cited
            return i, _dumps(turn)
    return None


def conversation_of(raw_record: bytes | None) -> str | None:
    if raw_record is None:
        return None
    conversation_id = json.loads(raw_record).get("conversation_id")
    return conversation_id if isinstance(conversation_id, str) else None


def _cited(citations: Any, redactions: dict[str, str]) -> str | None:
    for citation in citations or []:
        reason = redactions.get(citation.get("document_id"))
        if reason is not None:
            return reason
    return None


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _entries(reply: Any) -> list[Entry]:
    return [
        (_text(entry_id), {_text(k): _text(v) for k, v in fields.items()})
        for entry_id, fields in reply
    ]


def _of_tenant(pending: dict[Any, Any], tenant: str) -> dict[str, str]:
    redactions: dict[str, str] = {}
    for field, reason in pending.items():
        owner, document_id = json.loads(_text(field))
        if owner == tenant:
            redactions[document_id] = _text(reason)
    return redactions


# The gateway's side (redis.asyncio).


async def index_citations(
    client: aioredis.Redis, tenant: str, run_id: str, document_ids: Iterable[str], ttl_s: int
) -> None:
    """Add the run to the index of every document it read, for as long as its record lives."""
    now = now_ms()
    expires = now + ttl_s * 1000
    pipe = client.pipeline(transaction=False)
    for document_id in sorted(set(document_ids)):
        key = cites_key(tenant, document_id)
        pipe.zremrangebyscore(key, "-inf", now)
        pipe.zadd(key, {run_id: expires})
        pipe.pexpireat(key, expires, gt=True)
        pipe.pexpireat(key, expires, nx=True)
    await pipe.execute()


async def reapply(client: aioredis.Redis, run_id: str, tenant: str) -> bool:
    """Redact the run again under every redaction it received (after its final write,
    which put back what the executor held in memory). True when it had any."""
    pending: Any = await client.hgetall(redactions_key(run_id))
    redactions = _of_tenant(pending, tenant)
    if not redactions:
        return False
    rkey, ekey = run_key(run_id), events_key(run_id)
    for _ in range(MAX_TRIES):
        async with client.pipeline(transaction=True) as async_pipe:
            pipe: Any = async_pipe  # redis-py's pipeline methods are partly untyped
            try:
                await pipe.watch(rkey, ekey)
                raw = await pipe.get(rkey)
                tkey = _turns_of(raw)
                turns: list[bytes] = []
                if tkey is not None:
                    await pipe.watch(tkey)
                    turns = await pipe.lrange(tkey, 0, -1)
                entries = _entries(await pipe.xrange(ekey))
                ttl_ms = int(await pipe.pttl(ekey))
                change = rewrite(raw, entries, tenant, redactions, turns)
                pipe.multi()
                _queue(pipe, rkey, ekey, ttl_ms, change, tkey)
                await pipe.execute()
                return True
            except WatchError:
                continue
    raise WatchError(f"run {run_id}: the redaction kept being interrupted by writes")


# The ingest worker's side (redis, synchronous).


def redact_document(client: redis.Redis, tenant: str, document_id: str, reason: Reason) -> int:
    """Redact every live run of ``tenant`` that read the document; the number redacted."""
    key = cites_key(tenant, document_id)
    now = now_ms()
    client.zremrangebyscore(key, "-inf", now)
    members: Any = client.zrange(key, 0, -1, withscores=True)
    field = _field(tenant, document_id)
    done = 0
    for member, expires in members:
        run_id = _text(member)
        pkey = redactions_key(run_id)
        # First the mark, so that the run's own final write (if it is still running)
        # finds it and redacts again what it wrote back.
        pipe = client.pipeline(transaction=False)
        pipe.hset(pkey, field, reason.value)
        pipe.pexpireat(pkey, int(expires), gt=True)
        pipe.pexpireat(pkey, int(expires), nx=True)
        pipe.execute()
        pending: Any = client.hgetall(pkey)
        if _redact_run(client, run_id, tenant, _of_tenant(pending, tenant)):
            done += 1
    return done


def _redact_run(client: redis.Redis, run_id: str, tenant: str, redactions: dict[str, str]) -> bool:
    rkey, ekey = run_key(run_id), events_key(run_id)
    for _ in range(MAX_TRIES):
        with client.pipeline(transaction=True) as sync_pipe:
            pipe: Any = sync_pipe  # redis-py's pipeline methods are partly untyped
            try:
                pipe.watch(rkey, ekey)
                raw: Any = pipe.get(rkey)
                tkey = _turns_of(raw)
                turns: list[bytes] = []
                if tkey is not None:
                    pipe.watch(tkey)
                    turns = pipe.lrange(tkey, 0, -1)
                entries = _entries(pipe.xrange(ekey))
                ttl_ms = int(pipe.pttl(ekey))
                change = rewrite(raw, entries, tenant, redactions, turns)
                pipe.multi()
                _queue(pipe, rkey, ekey, ttl_ms, change, tkey)
                pipe.execute()
                return change != Rewrite(None, None)
            except WatchError:
                continue
    raise WatchError(f"run {run_id}: the redaction kept being interrupted by writes")


def _turns_of(raw_record: bytes | None) -> str | None:
    conversation_id = conversation_of(raw_record)
    return None if conversation_id is None else turns_key(conversation_id)


def _queue(pipe: Any, rkey: str, ekey: str, ttl_ms: int, change: Rewrite, tkey: str | None) -> None:
    """The writes of one redaction, queued in a MULTI: the record (its expiry kept), the
    event log rebuilt entry by entry under its own ids (its expiry kept), the turn."""
    if change.turn is not None and tkey is not None:
        pipe.lset(tkey, change.turn[0], change.turn[1])
    if change.record is not None:
        pipe.set(rkey, change.record, keepttl=True)
    if change.events is not None:
        pipe.delete(ekey)
        for entry_id, fields in change.events:
            pipe.xadd(ekey, fields, id=entry_id)
        if ttl_ms > 0:
            pipe.pexpire(ekey, ttl_ms)
