"""The published OpenAPI spec (docs/openapi.json) is the one the gateway serves."""

from __future__ import annotations

import json

from services.gateway.main import create_app
from services.gateway.runs.feedback import CURSOR_PATTERN
from services.gateway.runs.models import EVENT_ID_PATTERN
from services.gateway.runs.submit import MAX_IDEMPOTENCY_KEY
from services.gateway.settings import GatewaySettings
from tests.conftest import FIXTURES, ROOT


def generated() -> dict[str, object]:
    app = create_app(GatewaySettings(api_keys_file=FIXTURES / "api-keys.yaml"), with_executor=False)
    spec: dict[str, object] = app.openapi()
    return spec


def test_the_committed_spec_matches_the_code() -> None:
    committed = json.loads((ROOT / "docs/openapi.json").read_text())
    assert committed == json.loads(json.dumps(generated())), "run 'make openapi' and commit"


def test_every_v1_operation_documents_its_error_statuses() -> None:
    paths = generated()["paths"]
    assert isinstance(paths, dict)
    for path, operations in paths.items():
        if not path.startswith("/v1/"):
            continue
        for method, op in operations.items():
            statuses = set(op["responses"])
            assert {"401", "403", "422"} <= statuses, (method, path, statuses)


def _parameters(path: str, method: str) -> dict[str, dict[str, object]]:
    paths = generated()["paths"]
    assert isinstance(paths, dict)
    return {p["name"]: p["schema"] for p in paths[path][method]["parameters"]}


def test_the_spec_declares_the_cursor_and_idempotency_key_constraints() -> None:
    # What the server enforces is what a client (or schemathesis) can read in the spec.
    events = _parameters("/v1/runs/{run_id}/events", "get")
    for name in ("Last-Event-ID", "after"):
        assert events[name]["pattern"] == f"^$|{EVENT_ID_PATTERN}", name
        assert events[name]["type"] == "string", name  # a header or query is never null
    for path in ("/v1/runs", "/v1/ask"):
        key = _parameters(path, "post")["Idempotency-Key"]
        assert (key["minLength"], key["maxLength"]) == (1, MAX_IDEMPOTENCY_KEY), path
    assert _parameters("/v1/admin/feedback", "get")["after"]["pattern"] == CURSOR_PATTERN


def test_no_optional_parameter_is_declared_nullable() -> None:
    # Sent or left out, never null: "anyOf [string, null]" let a fuzzer send "null".
    paths = generated()["paths"]
    assert isinstance(paths, dict)
    for path, operations in paths.items():
        for method, op in operations.items():
            for parameter in op.get("parameters", []):
                assert "anyOf" not in parameter["schema"], (method, path, parameter["name"])
