"""/readyz tells an open breaker apart from a healthy gateway (it stayed green before)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from services.gateway.main import create_app
from services.gateway.settings import GatewaySettings
from tests.conftest import FIXTURES


class Store:
    async def ping(self) -> bool:
        return True


class Clients:
    def __init__(self, breakers: dict[str, str], serving: bool = True) -> None:
        self._breakers = breakers
        self._serving = serving

    def breaker_states(self) -> dict[str, str]:
        return self._breakers

    async def serving(self) -> dict[str, bool]:
        return {"retriever": self._serving, "generator": self._serving}

    async def close(self) -> None:
        return None


def ready(clients: Clients) -> tuple[int, dict[str, object]]:
    app = create_app(GatewaySettings(api_keys_file=FIXTURES / "api-keys.yaml"), with_executor=False)
    with TestClient(app) as http:
        app.state.store, app.state.clients = Store(), clients
        resp = http.get("/readyz")
    body: dict[str, object] = resp.json()
    return resp.status_code, body


def test_an_open_breaker_reports_degraded() -> None:
    status, body = ready(Clients({"retriever": "closed", "generator": "open"}))
    assert status == 200
    assert body["status"] == "degraded"
    assert body["breakers"] == {"retriever": "closed", "generator": "open"}


def test_all_closed_and_serving_is_ok() -> None:
    status, body = ready(Clients({"retriever": "closed", "generator": "closed"}))
    assert (status, body["status"], body["ready"]) == (200, "ok", True)


def test_a_dependency_not_serving_is_unavailable() -> None:
    status, body = ready(Clients({"retriever": "open", "generator": "closed"}, serving=False))
    assert (status, body["status"], body["ready"]) == (503, "unavailable", False)
