"""What schemathesis found against the gateway (issue 16), each held by a test."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import ValidationError

from services.gateway.api import errors
from services.gateway.paths.models import PathOptions
from services.gateway.runs.feedback import parse_cursor


def test_a_405_names_every_method_of_the_path_not_only_the_first_routes() -> None:
    app = FastAPI()
    errors.install(app)

    @app.get("/things/{name}")
    async def read(name: str) -> str:
        return name

    @app.put("/things/{name}")
    async def write(name: str) -> str:
        return name

    resp = TestClient(app).delete("/things/a")
    assert resp.status_code == 405
    assert resp.json()["error"]["code"] == "method_not_allowed"
    assert resp.headers["allow"] == "GET, PUT"


@pytest.mark.parametrize(
    ("field", "value"),
    [("min_support", False), ("min_support", "0.5"), ("top_k", True), ("max_output_tokens", "64")],
)
def test_a_path_refuses_numbers_the_spec_calls_invalid(field: str, value: object) -> None:
    with pytest.raises(ValidationError):
        PathOptions.model_validate({field: value})
    assert PathOptions.model_validate({"min_support": 1, "top_k": 4}).min_support == 1.0


def test_a_feedback_cursor_with_non_ascii_digits_is_malformed_not_a_crash() -> None:
    # '²'.isdigit() is true and int('²') raises: it must be a 400, not a 500.
    assert parse_cursor("\u00b2:run_x") is None
    assert parse_cursor("12:run_x") == (12, "run_x")


def test_the_gateways_405s_name_the_methods_of_each_path() -> None:
    from starlette.requests import Request

    from services.gateway.main import create_app
    from services.gateway.settings import GatewaySettings
    from tests.conftest import FIXTURES

    app = create_app(GatewaySettings(api_keys_file=FIXTURES / "api-keys.yaml"), with_executor=False)

    def allow(path: str) -> str:
        scope = {"type": "http", "path": path, "method": "DELETE", "app": app, "headers": []}
        return errors.allowed_methods(Request(scope))

    assert allow("/v1/admin/paths/baseline") == "GET, PUT"
    assert allow("/v1/admin/canary") == "GET, POST"
    assert allow("/v1/runs") == "POST"
