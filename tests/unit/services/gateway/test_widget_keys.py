"""Widget keys: public, so bound to listed origins and limited to the widget's routes."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from services.gateway.api.scopes import refusal
from services.gateway.auth import AuthError, KeyEntry, KeyRegistry
from services.gateway.main import create_app
from services.gateway.settings import GatewaySettings
from tests.conftest import FIXTURES

REGISTRY = KeyRegistry.from_file(FIXTURES / "api-keys.yaml")
SITE = "https://www.ragway.example"
RUN = "/v1/runs/run_0123456789abcdef0123456789abcdef"


def widget_entry(**fields: object) -> KeyEntry:
    return KeyEntry.model_validate(
        {"id": "w", "sha256": "0" * 64, "tenant": "t", "groups": ["g"], "kind": "widget", **fields}
    )


def test_a_widget_key_must_list_its_origins_and_not_every_origin() -> None:
    with pytest.raises(ValidationError, match="must list its allowed_origins"):
        widget_entry()
    with pytest.raises(ValidationError, match="must list its allowed_origins"):
        widget_entry(allowed_origins=[])
    with pytest.raises(ValidationError, match="may not allow every origin"):
        widget_entry(allowed_origins=["*"])
    assert widget_entry(allowed_origins=[SITE]).allowed_origins == [SITE]


def test_a_widget_key_needs_an_origin_on_every_call_and_remembers_it() -> None:
    with pytest.raises(AuthError) as err:
        REGISTRY.authenticate("key-demo-widget", None)
    assert (err.value.status, err.value.code) == (403, "origin_required")
    with pytest.raises(AuthError) as err:
        REGISTRY.authenticate("key-demo-widget", "https://evil.example")
    assert err.value.code == "origin_not_allowed"
    caller = REGISTRY.authenticate("key-demo-widget", SITE)
    assert (caller.kind, caller.origin) == ("widget", SITE)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/runs"),
        ("POST", "/v1/ask"),
        ("GET", RUN),
        ("GET", RUN + "/events"),
        ("POST", RUN + "/cancel"),
        ("POST", RUN + "/feedback"),
        ("GET", "/v1/conversations/conv_0123"),
    ],
)
def test_a_widget_key_reaches_the_widgets_routes(method: str, path: str) -> None:
    assert refusal("widget", "w", method, path) is None


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/admin/paths"),
        ("GET", "/v1/admin/feedback"),
        ("POST", "/v1/admin/canary"),
        ("GET", "/v1/runs"),
        ("POST", RUN),
        ("GET", RUN + "/feedback"),
        ("POST", "/v1/ingest/webhook"),
        ("GET", RUN + "/events/extra"),
    ],
)
def test_a_widget_key_reaches_nothing_else(method: str, path: str) -> None:
    reason = refusal("widget", "w", method, path)
    assert reason is not None and "widget key" in reason and path in reason
    assert refusal("server", "s", method, path) is None  # other kinds: the routes decide


def test_the_guard_refuses_a_widget_key_outside_its_routes_before_routing() -> None:
    app = create_app(GatewaySettings(api_keys_file=FIXTURES / "api-keys.yaml"), with_executor=False)
    with TestClient(app) as http:
        resp = http.get(
            "/v1/admin/paths", headers={"Authorization": "Bearer key-demo-widget", "Origin": SITE}
        )
        assert resp.status_code == 403
        assert resp.json()["error"]["code"] == "key_kind_not_allowed"
        assert resp.headers["access-control-allow-origin"] == SITE  # the page can read why
        resp = http.get(RUN, headers={"Authorization": "Bearer key-demo-widget"})
        assert (resp.status_code, resp.json()["error"]["code"]) == (403, "origin_required")
