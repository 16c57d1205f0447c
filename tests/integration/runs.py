"""Runs written straight into Redis, for states the public API cannot pause in."""

from __future__ import annotations

from services.gateway.runs.models import RunRecord, RunStatus, new_run_id, now_ms

QUESTION = "How do I resume a stream after a disconnect?"


def demo_record(question: str = QUESTION) -> RunRecord:
    """A queued run of the demo tenant, owned by the 'demo-public' test key."""
    return RunRecord(
        id=new_run_id(),
        status=RunStatus.QUEUED,
        tenant="demo",
        key_id="demo-public",
        access_groups=["public"],
        question=question,
        top_k=6,
        mode="hybrid",
        created_at_ms=now_ms(),
        updated_at_ms=now_ms(),
    )
