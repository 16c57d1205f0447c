"""CORS on the real gateway: preflights without a key, actual requests checked per key."""

from __future__ import annotations

import httpx

from tests.integration.conftest import auth

LISTED = "https://www.ragway.example"  # the only origin key-demo-public admits
UNLISTED = "https://evil.example"


def preflight(api: httpx.Client, path: str, origin: str, method: str = "POST") -> httpx.Response:
    return api.options(
        path,
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": "authorization, content-type, last-event-id",
        },
    )


def test_a_preflight_is_answered_without_a_key(api: httpx.Client) -> None:
    for path, method in [
        ("/v1/runs", "POST"),
        ("/v1/runs/abc/events", "GET"),
        ("/v1/runs/abc/cancel", "POST"),
    ]:
        resp = preflight(api, path, LISTED, method)
        assert resp.status_code == 204, (path, resp.text)
        assert resp.headers["access-control-allow-origin"] == LISTED
        assert method in resp.headers["access-control-allow-methods"]
        allowed = resp.headers["access-control-allow-headers"].lower()
        assert {"authorization", "content-type", "last-event-id"} <= {
            h.strip() for h in allowed.split(",")
        }
        assert "origin" in resp.headers["vary"].lower()
        assert "access-control-allow-credentials" not in resp.headers


def test_a_request_from_a_listed_origin_gets_the_allow_origin_header(api: httpx.Client) -> None:
    resp = api.post(
        "/v1/runs",
        json={"question": "How do I resume a stream?"},
        headers={**auth("demo"), "Origin": LISTED},
    )
    assert resp.status_code == 202, resp.text
    assert resp.headers["access-control-allow-origin"] == LISTED
    assert "location" in resp.headers["access-control-expose-headers"].lower()
    events = api.get(resp.json()["events_url"], headers={**auth("demo"), "Origin": LISTED})
    assert events.status_code == 200
    assert events.headers["access-control-allow-origin"] == LISTED


def test_a_request_from_an_unlisted_origin_is_refused(api: httpx.Client) -> None:
    # Some key admits every origin, so the preflight passes; this key does not.
    assert preflight(api, "/v1/runs", UNLISTED).status_code == 204
    resp = api.post(
        "/v1/runs",
        json={"question": "How do I resume a stream?"},
        headers={**auth("demo"), "Origin": UNLISTED},
    )
    assert resp.status_code == 403
    error = resp.json()["error"]
    assert error["code"] == "origin_not_allowed"
    assert UNLISTED in error["message"] and "demo-public" in error["message"]
    # Readable by the page, so the widget can say why.
    assert resp.headers["access-control-allow-origin"] == UNLISTED


def test_a_wildcard_key_admits_any_origin(api: httpx.Client) -> None:
    resp = api.get("/v1/runs/none", headers={**auth("demo-sre"), "Origin": UNLISTED})
    assert resp.status_code == 404  # past the origin check
    assert resp.headers["access-control-allow-origin"] == UNLISTED


def test_the_widget_script_is_served_to_any_origin(api: httpx.Client) -> None:
    resp = api.get("/widget.js", headers={"Origin": UNLISTED})
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/javascript")
    assert resp.headers["access-control-allow-origin"] == UNLISTED
    assert resp.headers["cross-origin-resource-policy"] == "cross-origin"


WIDGET = {"Authorization": "Bearer key-demo-widget"}
SHOP = "https://shop.ragway.example"  # the widget key's other origin


def test_a_widget_key_asks_and_sends_feedback_from_its_origin_only(api: httpx.Client) -> None:
    assert preflight(api, "/v1/runs/abc/feedback", LISTED).status_code == 204
    answered = api.post(
        "/v1/ask",
        json={"question": "How do I resume a stream?"},
        headers={**WIDGET, "Origin": LISTED},
    )
    assert answered.status_code == 200, answered.text
    run_id = answered.json()["run_id"]
    run = api.get(f"/v1/runs/{run_id}", headers={**WIDGET, "Origin": LISTED}).json()
    assert run["origin"] == LISTED
    sent = api.post(
        f"/v1/runs/{run_id}/feedback",
        json={"rating": "up", "comment": "clear"},
        headers={**WIDGET, "Origin": LISTED},
    )
    assert sent.status_code == 200, sent.text
    assert sent.headers["access-control-allow-origin"] == LISTED
    # The same key on its other site: that site's pages cannot touch this run.
    for method, path in [("GET", ""), ("GET", "/events"), ("POST", "/feedback")]:
        resp = api.request(
            method,
            f"/v1/runs/{run_id}{path}",
            json={"rating": "down"} if method == "POST" else None,
            headers={**WIDGET, "Origin": SHOP},
        )
        assert (resp.status_code, resp.json()["error"]["code"]) == (404, "run_not_found"), path


def test_a_widget_key_is_refused_outside_the_widgets_routes(api: httpx.Client) -> None:
    resp = api.get("/v1/admin/paths", headers={**WIDGET, "Origin": LISTED})
    assert (resp.status_code, resp.json()["error"]["code"]) == (403, "key_kind_not_allowed")
    assert resp.headers["access-control-allow-origin"] == LISTED
    # Without an Origin (a script outside a browser): refused, whatever it asks.
    resp = api.post("/v1/runs", json={"question": "How do I resume a stream?"}, headers=WIDGET)
    assert (resp.status_code, resp.json()["error"]["code"]) == (403, "origin_required")
    resp = api.post(
        "/v1/runs",
        json={"question": "How do I resume a stream?"},
        headers={**WIDGET, "Origin": UNLISTED},
    )
    assert (resp.status_code, resp.json()["error"]["code"]) == (403, "origin_not_allowed")
