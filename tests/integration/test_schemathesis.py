"""Schemathesis against the gateway's /openapi.json, with valid keys, on a private stack.

Every check (server errors, status codes, content types, headers, response schemas,
positive and negative data, Allow on 405, unsupported methods, auth) runs on every
operation: first the run routes with a server key, then /v1/admin with an admin key.
The few 422/400 answers that depend on state or on several fields at once are
accepted in tests/integration/schemathesis.toml, which says why for each. A bounded
number of examples and a fixed seed keep it under two minutes and repeatable.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragway_tools.demo import demo_stack
from ragway_tools.launcher import Stack
from tests.conftest import FIXTURES

CONFIG = Path(__file__).with_name("schemathesis.toml")
MAX_EXAMPLES = 10
SEED = 1
# The fuzzer sends hundreds of requests a minute from one key: limits stay out of its way
# (tests/integration/test_rate_limits.py tests them).
UNLIMITED = {
    name: "1000000"
    for name in (
        "RAGWAY_REQUESTS_PER_MINUTE",
        "RAGWAY_RUNS_PER_MINUTE",
        "RAGWAY_TENANT_REQUESTS_PER_MINUTE",
        "RAGWAY_TENANT_RUNS_PER_MINUTE",
    )
}


@pytest.fixture(scope="module")
def gateway() -> Iterator[Stack]:
    if importlib.util.find_spec("schemathesis") is None:
        if os.environ.get("RAGWAY_TEST_REQUIRE_SCHEMATHESIS"):
            pytest.fail("schemathesis is not installed: run 'make install'")
        pytest.skip("schemathesis is not installed (make install adds it)")
    with demo_stack(UNLIMITED, api_keys=FIXTURES / "api-keys.yaml") as stack:
        yield stack


def schemathesis(stack: Stack, key: str, paths: list[str], tmp: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "--config-file",
        str(CONFIG),
        "run",
        f"{stack.config.gateway_url}/openapi.json",
        "--header",
        f"Authorization: Bearer {key}",
        "--checks",
        "all",
        "--max-examples",
        str(MAX_EXAMPLES),
        "--seed",
        str(SEED),
        "--workers",
        "1",
        "--no-color",
        *paths,
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=240, cwd=tmp, check=False)
    summary = done.stdout[done.stdout.rfind("SUMMARY") :]
    assert done.returncode == 0, done.stdout[-12000:] + done.stderr[-3000:]
    assert "failures" not in summary and "error" not in summary.lower(), summary


def test_the_run_routes_with_a_server_key_have_no_server_error_and_conform(
    gateway: Stack, tmp_path: Path
) -> None:
    schemathesis(gateway, "key-demo-sre", ["--exclude-path-regex", "^/v1/admin"], tmp_path)


def test_the_admin_routes_with_an_admin_key_have_no_server_error_and_conform(
    gateway: Stack, tmp_path: Path
) -> None:
    schemathesis(gateway, "key-demo-admin", ["--include-path-regex", "^/v1/admin"], tmp_path)
