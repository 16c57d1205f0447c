"""The published OpenAPI spec (docs/openapi.json) is the one the gateway serves."""

from __future__ import annotations

import json

from services.gateway.main import create_app
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
