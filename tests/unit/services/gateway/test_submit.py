"""Accepting, finding and cancelling runs, and the HTTP answer to each refusal."""

from __future__ import annotations

import asyncio

import pytest

from services.gateway.api.errors import http_error
from services.gateway.auth import Principal
from services.gateway.resilience import CircuitOpenError
from services.gateway.runs.errors import (
    DependencyUnavailable,
    IdempotencyConflict,
    InvalidIdempotencyKey,
    QuestionTooLong,
    RunAlreadyFinished,
    RunError,
    RunNotFound,
)
from services.gateway.runs.models import RunStatus
from services.gateway.runs.submit import Ask, cancel, owned_run, submit
from services.gateway.settings import GatewaySettings
from tests.unit.services.gateway.fakes import FakeStore, queued_run

SETTINGS = GatewaySettings(max_question_chars=40)
CALLER = Principal(key_id="k1", tenant="acme", groups=frozenset({"eng"}))
ASK = Ask(question="How do I resume a stream?", top_k=None, mode="hybrid")


class Breakers:
    def __init__(self, down: CircuitOpenError | None = None) -> None:
        self.down = down

    def unavailable(self) -> CircuitOpenError | None:
        return self.down


def run_submit(store: FakeStore, ask: Ask = ASK, key: str | None = "k-1", **kw: object) -> str:
    breakers = Breakers(**kw)  # type: ignore[arg-type]
    return asyncio.run(submit(store, SETTINGS, breakers, CALLER, ask, key)).run_id


def answer(exc: RunError) -> tuple[int, dict[str, object], dict[str, str] | None]:
    error = http_error(exc)
    return error.status, {"error": {"code": error.code, "message": error.message}}, error.headers


def test_a_run_is_stored_queued_with_the_callers_tenant_and_the_default_top_k() -> None:
    store = FakeStore()
    run_id = run_submit(store)
    record = store.records[run_id]
    assert (record.status, record.tenant, record.key_id) == (RunStatus.QUEUED, "acme", "k1")
    assert (record.top_k, record.access_groups) == (SETTINGS.top_k, ["eng"])
    assert store.types(run_id) == ["run.accepted"]


def test_the_same_idempotency_key_and_request_returns_the_first_run() -> None:
    store = FakeStore()
    assert run_submit(store) == run_submit(store)
    assert len(store.records) == 1


def test_the_same_idempotency_key_with_another_request_is_a_422_naming_the_first_run() -> None:
    store = FakeStore()
    first = run_submit(store)
    with pytest.raises(IdempotencyConflict) as caught:
        run_submit(store, Ask(question="Another question?", top_k=None, mode="hybrid"))
    assert answer(caught.value) == (
        422,
        {
            "error": {
                "code": "idempotency_key_reused",
                "message": "Idempotency-Key was already used for a different request "
                f"(run {first})",
            }
        },
        None,
    )


def test_refusals_before_storing_map_to_the_statuses_and_bodies_of_the_api() -> None:
    store = FakeStore()
    with pytest.raises(QuestionTooLong) as too_long:
        run_submit(store, Ask(question="x" * 41, top_k=None, mode="hybrid"))
    assert answer(too_long.value)[:2] == (
        422,
        {
            "error": {
                "code": "question_too_long",
                "message": "question: 41 characters; the limit is 40",
            }
        },
    )
    with pytest.raises(InvalidIdempotencyKey) as bad_key:
        run_submit(store, key="k" * 256)
    assert answer(bad_key.value)[:2] == (
        400,
        {
            "error": {
                "code": "invalid_idempotency_key",
                "message": "Idempotency-Key must be 1-255 characters",
            }
        },
    )
    with pytest.raises(DependencyUnavailable) as down:
        run_submit(store, down=CircuitOpenError("generator", 2.2))
    assert answer(down.value) == (
        503,
        {
            "error": {
                "code": "dependency_unavailable",
                "message": "the generator is unavailable; retry in 2 s",
            }
        },
        {"Retry-After": "3"},
    )
    assert store.records == {}  # nothing was accepted


def test_another_tenants_run_is_not_found_like_a_missing_one() -> None:
    store = FakeStore()
    run = queued_run(store)
    stranger = Principal(key_id="k2", tenant="other", groups=frozenset())
    for caller, run_id in ((stranger, run.id), (CALLER, "run_" + "0" * 32), (CALLER, "nope")):
        with pytest.raises(RunNotFound) as caught:
            asyncio.run(owned_run(store, caller, run_id))
        assert answer(caught.value)[:2] == (
            404,
            {"error": {"code": "run_not_found", "message": f"no run with id {run_id!r}"}},
        )


def test_cancelling_flags_an_unfinished_run_and_refuses_a_finished_one() -> None:
    store = FakeStore()
    run = queued_run(store)
    assert asyncio.run(cancel(store, SETTINGS, CALLER, run.id)).status is RunStatus.QUEUED
    assert run.id in store.cancelled
    run.status = RunStatus.SUCCEEDED
    with pytest.raises(RunAlreadyFinished) as caught:
        asyncio.run(cancel(store, SETTINGS, CALLER, run.id))
    assert answer(caught.value)[:2] == (
        409,
        {"error": {"code": "run_finished", "message": f"run {run.id} has already succeeded"}},
    )
