"""ragway/redaction.py against the suite's real Redis: the index, the worker's redaction of
record and event log (ids and expiries kept), and the gateway's redaction again of a run
that was still running when it came (its final write put the text back).

The run here is written straight into Redis in the gateway's format; the whole path
(webhook, worker, gateway) runs in test_ingest.py.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis

from ragway import redaction
from ragway_tools.launcher import Stack
from services.gateway.runs.models import (
    Citation,
    RunRecord,
    RunStatus,
    Source,
    new_run_id,
    now_ms,
)

TEXT = "Staff may carry over at most nine days."


@pytest.fixture
def url(stack: Stack) -> str:
    return stack.config.redis_url


def a_run(tenant: str, document_id: str) -> RunRecord:
    source = Source(
        number=1,
        source_id=f"{document_id}#carry-over",
        document_id=document_id,
        title="Vacation",
        section="Carry-over",
        url="",
        version="1",
        score=0.9,
        text=TEXT,
    )
    ms = now_ms()
    return RunRecord(
        id=new_run_id(),
        status=RunStatus.SUCCEEDED,
        tenant=tenant,
        key_id="k",
        question="How many days carry over?",
        top_k=5,
        mode="answer",
        created_at_ms=ms,
        updated_at_ms=ms,
        sources=[source],
        answer="At most nine days [1].",
        citations=[Citation.model_validate(source.model_dump())],
    )


def write(client: redis.Redis, record: RunRecord) -> list[Any]:
    """The record and a log as the executor leaves them; the log's entries."""
    client.set(redaction.run_key(record.id), record.model_dump_json(), ex=3600)
    key = redaction.events_key(record.id)
    client.delete(key)
    sources = [s.model_dump(mode="json") for s in record.sources]
    retrieval = {"build_id": "b", "sources": sources, "degraded": [], "timings_ms": {}}
    delta = {"text": "At most nine days [1].", "index": 0}
    for type_, data in (("retrieval.completed", retrieval), ("answer.delta", delta)):
        client.xadd(key, {"type": type_, "data": json.dumps(data)})
    client.expire(key, 600)
    entries: list[Any] = client.xrange(key)  # type: ignore[assignment]
    return entries


async def index(url: str, record: RunRecord) -> None:
    r = aioredis.Redis.from_url(url)
    try:
        await redaction.index_citations(
            r, record.tenant, record.id, [s.document_id for s in record.sources], 3600
        )
    finally:
        await r.aclose()


async def reapply(url: str, record: RunRecord) -> bool:
    r = aioredis.Redis.from_url(url)
    try:
        return await redaction.reapply(r, record.id, record.tenant)
    finally:
        await r.aclose()


def holds_text(client: redis.Redis, run_id: str) -> bool:
    raw: Any = client.get(redaction.run_key(run_id))
    entries: Any = client.xrange(redaction.events_key(run_id))
    blob = raw.decode() + "".join(f[b"data"].decode() for _, f in entries)
    return "nine" in blob


def test_the_worker_redacts_each_indexed_run_of_the_tenant_and_keeps_ids_and_expiries(
    url: str,
) -> None:
    client = redis.Redis.from_url(url)
    doc = f"doc-{uuid.uuid4().hex[:6]}"
    ours, theirs = a_run("redact-a", doc), a_run("redact-b", doc)
    before = {run.id: write(client, run) for run in (ours, theirs)}
    for run in (ours, theirs):
        asyncio.run(index(url, run))
    assert client.zscore(redaction.cites_key("redact-a", doc), ours.id) is not None

    assert (
        redaction.redact_document(client, "redact-a", doc, redaction.Reason.DOCUMENT_DELETED) == 1
    )
    assert not holds_text(client, ours.id) and holds_text(client, theirs.id)
    after: Any = client.xrange(redaction.events_key(ours.id))
    assert [i for i, _ in after] == [i for i, _ in before[ours.id]]
    assert 0 < int(client.ttl(redaction.events_key(ours.id))) <= 600
    assert 600 < int(client.ttl(redaction.run_key(ours.id))) <= 3600
    record = RunRecord.model_validate_json(client.get(redaction.run_key(ours.id)))  # type: ignore[arg-type]
    assert record.sources[0].redacted == "document_deleted" and record.answer == ""
    # A second delivery of the same deletion finds nothing left to change.
    assert (
        redaction.redact_document(client, "redact-a", doc, redaction.Reason.DOCUMENT_DELETED) == 0
    )
    client.close()


def test_a_run_whose_final_write_put_the_text_back_is_redacted_again_by_the_gateway(
    url: str,
) -> None:
    client = redis.Redis.from_url(url)
    doc = f"doc-{uuid.uuid4().hex[:6]}"
    run = a_run("redact-a", doc)
    asyncio.run(index(url, run))  # at retrieval, before the record has its sources
    redaction.redact_document(client, "redact-a", doc, redaction.Reason.ACCESS_CHANGED)
    write(client, run)  # the executor's final write, from what it held in memory
    assert holds_text(client, run.id)
    assert asyncio.run(reapply(url, run)) is True
    assert not holds_text(client, run.id)
    other = a_run("redact-a", f"doc-{uuid.uuid4().hex[:6]}")
    write(client, other)
    assert asyncio.run(reapply(url, other)) is False and holds_text(client, other.id)
    client.close()
