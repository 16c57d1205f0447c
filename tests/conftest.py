"""Markers follow the folder: tests/unit → unit, tests/integration → integration."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"

# Deliberate thread pools on a small machine (INFRA.md); models load offline only.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
# Service authentication on everywhere (ragway/service_auth.py): every stack the tests
# launch takes this token, and the tools the tests call in-process send it.
os.environ["RAGWAY_SERVICE_TOKEN"] = secrets.token_urlsafe(32)
os.environ.pop("RAGWAY_SERVICE_TOKEN_FILE", None)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(str(item.fspath)).parts
        if "unit" in parts:
            item.add_marker(pytest.mark.unit)
        elif "integration" in parts:
            item.add_marker(pytest.mark.integration)
