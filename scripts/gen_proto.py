"""Regenerate the gRPC stubs in ``ragway/v1`` from ``proto/ragway/v1``.

The only way stubs are produced: ``make proto`` runs this, CI runs it again
and fails when the result differs from what is committed.
"""

from __future__ import annotations

import sys
from pathlib import Path

from grpc_tools import protoc  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
OUT = ROOT


def main() -> int:
    protos = sorted(
        str(p.relative_to(PROTO_ROOT)) for p in (PROTO_ROOT / "ragway/v1").glob("*.proto")
    )
    include = Path(protoc.__file__).parent / "_proto"
    for stale in (ROOT / "ragway/v1").glob("*_pb2*.py*"):
        stale.unlink()
    # The mypy plugins live beside this interpreter; name them, since the venv's
    # bin folder need not be on PATH (make calls .venv/bin/python directly).
    bindir = Path(sys.executable).parent
    args = [
        "protoc",
        f"--plugin=protoc-gen-mypy={bindir / 'protoc-gen-mypy'}",
        f"--plugin=protoc-gen-mypy_grpc={bindir / 'protoc-gen-mypy_grpc'}",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--python_out={OUT}",
        f"--grpc_python_out={OUT}",
        f"--mypy_out={OUT}",
        f"--mypy_grpc_out={OUT}",
        *protos,
    ]
    rc = int(protoc.main(args))
    if rc != 0:
        sys.stderr.write("protoc failed\n")
        return rc
    init = ROOT / "ragway/v1/__init__.py"
    init.write_text('"""Generated gRPC stubs (make proto). Never edit by hand."""\n')
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
