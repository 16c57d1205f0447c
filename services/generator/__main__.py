"""``python -m services.generator``: run the generator until SIGTERM."""

from __future__ import annotations

from ragway.grpc_server import main
from services.generator.server import run
from services.generator.settings import GeneratorSettings

if __name__ == "__main__":
    raise SystemExit(main("generator", GeneratorSettings, run))
