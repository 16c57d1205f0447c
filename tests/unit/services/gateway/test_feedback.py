"""POST /v1/runs/{id}/feedback and GET /v1/admin/feedback, on the real app with in-memory stores."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragway.metrics import REGISTRY
from services.gateway.main import create_app
from services.gateway.runs.feedback import FeedbackRecord, format_cursor, parse_cursor
from services.gateway.runs.models import RunRecord, RunStatus, new_run_id, now_ms
from services.gateway.settings import GatewaySettings
from tests.conftest import FIXTURES
from tests.unit.services.gateway.fakes import FakeStore

SITE = "https://www.ragway.example"
WIDGET = {"Authorization": "Bearer key-demo-widget", "Origin": SITE}
SERVER = {"Authorization": "Bearer key-demo-sre"}
ADMIN = {"Authorization": "Bearer key-demo-admin"}


class FakeFeedback:
    """What FeedbackStore keeps: the latest record per run, pages by (at_ms, run_id)."""

    def __init__(self) -> None:
        self.records: dict[str, FeedbackRecord] = {}

    async def put(self, record: FeedbackRecord, ttl_s: int) -> FeedbackRecord | None:
        previous = self.records.get(record.run_id)
        self.records[record.run_id] = record
        return previous

    async def page(
        self, tenant: str, after: tuple[int, str] | None, limit: int
    ) -> tuple[list[FeedbackRecord], tuple[int, str] | None]:
        ordered = sorted(
            (r for r in self.records.values() if r.tenant == tenant),
            key=lambda r: (r.at_ms, r.run_id),
        )
        rest = [r for r in ordered if after is None or (r.at_ms, r.run_id) > after]
        page = rest[:limit]
        more = len(rest) > limit
        return page, ((page[-1].at_ms, page[-1].run_id) if more else None)


@pytest.fixture
def app() -> Iterator[tuple[TestClient, FakeStore, FakeFeedback]]:
    application = create_app(
        GatewaySettings(api_keys_file=FIXTURES / "api-keys.yaml"), with_executor=False
    )
    with TestClient(application) as http:
        store, feedback = FakeStore(), FakeFeedback()
        application.state.store, application.state.feedback = store, feedback
        yield http, store, feedback


def run(
    store: FakeStore,
    key_id: str = "demo-widget",
    origin: str | None = SITE,
    status: RunStatus = RunStatus.SUCCEEDED,
) -> str:
    at = now_ms()
    record = RunRecord(
        id=new_run_id(),
        status=status,
        tenant="demo",
        key_id=key_id,
        question="How do I resume a stream?",
        top_k=3,
        mode="hybrid",
        origin=origin,
        created_at_ms=at,
        updated_at_ms=at,
        path="candidate",
        path_version=2,
    )
    store.records[record.id] = record
    return record.id


def counted(path: str, rating: str) -> float:
    value = REGISTRY.get_sample_value("ragway_feedback_total", {"path": path, "rating": rating})
    return value or 0.0


def test_feedback_on_an_ended_run_is_stored_with_the_runs_path(app: Any) -> None:
    http, store, feedback = app
    run_id = run(store)
    before = counted("candidate", "down")
    resp = http.post(
        f"/v1/runs/{run_id}/feedback",
        json={"rating": "down", "comment": "  it cited the old policy  "},
        headers=WIDGET,
    )
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert (body["rating"], body["comment"], body["replaced"]) == (
        "down",
        "it cited the old policy",
        False,
    )
    stored = feedback.records[run_id]
    assert (stored.tenant, stored.key_id, stored.path, stored.path_version, stored.origin) == (
        "demo",
        "demo-widget",
        "candidate",
        2,
        SITE,
    )
    assert counted("candidate", "down") == before + 1


def test_sending_again_replaces_the_feedback_and_counts_only_a_changed_rating(app: Any) -> None:
    http, store, feedback = app
    run_id = run(store, key_id="demo-sre", origin=None)
    up, down = counted("candidate", "up"), counted("candidate", "down")
    for rating in ("up", "up", "down"):
        resp = http.post(f"/v1/runs/{run_id}/feedback", json={"rating": rating}, headers=SERVER)
        assert resp.status_code == 200, resp.text
    assert resp.json()["replaced"] is True
    assert feedback.records[run_id].rating == "down"
    assert feedback.records[run_id].comment is None
    assert (counted("candidate", "up"), counted("candidate", "down")) == (up + 1, down + 1)


def test_the_run_record_shows_the_latest_feedback(app: Any) -> None:
    http, store, _ = app
    run_id = run(store)
    assert http.get(f"/v1/runs/{run_id}", headers=WIDGET).json()["feedback"] is None
    sent = []
    for body in ({"rating": "down", "comment": "outdated"}, {"rating": "up"}):
        resp = http.post(f"/v1/runs/{run_id}/feedback", json=body, headers=WIDGET)
        assert resp.status_code == 200, resp.text
        sent.append(resp.json())
        shown = http.get(f"/v1/runs/{run_id}", headers=WIDGET).json()["feedback"]
        assert shown == {k: sent[-1][k] for k in ("rating", "comment", "at_ms")}
    assert sent[-1]["comment"] is None  # the new feedback replaced the comment too


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"rating": "meh"}, 422, "invalid_request"),
        ({"rating": "up", "comment": "x" * 1001}, 422, "invalid_request"),
        ({"rating": "up", "extra": 1}, 422, "invalid_request"),
        ({}, 422, "invalid_request"),
    ],
)
def test_a_bad_body_is_a_422(app: Any, body: dict[str, object], status: int, code: str) -> None:
    http, store, feedback = app
    resp = http.post(f"/v1/runs/{run(store)}/feedback", json=body, headers=WIDGET)
    assert (resp.status_code, resp.json()["error"]["code"]) == (status, code)
    assert feedback.records == {}


def test_a_comment_of_exactly_the_limit_is_accepted(app: Any) -> None:
    http, store, _ = app
    body = {"rating": "up", "comment": "y" * 1000}
    resp = http.post(f"/v1/runs/{run(store)}/feedback", json=body, headers=WIDGET)
    assert resp.status_code == 200, resp.text


def test_a_run_still_running_is_a_409(app: Any) -> None:
    http, store, feedback = app
    run_id = run(store, status=RunStatus.RUNNING)
    resp = http.post(f"/v1/runs/{run_id}/feedback", json={"rating": "up"}, headers=WIDGET)
    assert (resp.status_code, resp.json()["error"]["code"]) == (409, "run_not_finished")
    assert feedback.records == {}


def test_only_the_runs_own_key_and_origin_may_send_it(app: Any) -> None:
    http, store, feedback = app
    mine = run(store)
    # Another key of the same tenant, another tenant, the same widget key on another
    # allowed origin: each is told the run does not exist.
    for headers in (
        SERVER,
        {"Authorization": "Bearer key-globex-staff"},
        {**WIDGET, "Origin": "https://shop.ragway.example"},
    ):
        resp = http.post(f"/v1/runs/{mine}/feedback", json={"rating": "up"}, headers=headers)
        assert (resp.status_code, resp.json()["error"]["code"]) == (404, "run_not_found")
    assert feedback.records == {}


def test_operators_page_through_a_tenants_feedback(app: Any) -> None:
    http, store, _ = app
    ids = [run(store) for _ in range(5)]
    for run_id in ids:
        http.post(f"/v1/runs/{run_id}/feedback", json={"rating": "up"}, headers=WIDGET)
    seen: list[str] = []
    after: str | None = None
    while True:
        params: dict[str, object] = {"tenant": "demo", "limit": 2}
        if after is not None:
            params["after"] = after
        page = http.get("/v1/admin/feedback", params=params, headers=ADMIN).json()
        seen += [item["run_id"] for item in page["items"]]
        after = page["next_cursor"]
        if after is None:
            break
    assert sorted(seen) == sorted(ids) and len(seen) == 5
    assert http.get("/v1/admin/feedback", params={"tenant": "acme"}, headers=ADMIN).json() == {
        "items": [],
        "next_cursor": None,
    }


def test_feedback_export_is_for_admin_keys_with_a_valid_cursor(app: Any) -> None:
    http, _, _ = app
    resp = http.get("/v1/admin/feedback", params={"tenant": "demo"}, headers=SERVER)
    assert (resp.status_code, resp.json()["error"]["code"]) == (403, "admin_key_required")
    resp = http.get("/v1/admin/feedback", params={"tenant": "demo", "after": "nope"}, headers=ADMIN)
    assert (resp.status_code, resp.json()["error"]["code"]) == (400, "invalid_cursor")


def test_cursors_round_trip() -> None:
    assert parse_cursor(format_cursor((1700000000000, "run_x"))) == (1700000000000, "run_x")
    assert parse_cursor("12") is None and parse_cursor("a:b") is None
