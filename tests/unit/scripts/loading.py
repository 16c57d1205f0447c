"""The scripts under scripts/ are files, not a package: their tests import them by path."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from tests.conftest import ROOT


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
