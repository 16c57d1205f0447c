"""``python -m services.generator``: run the generator until SIGTERM."""

from __future__ import annotations

import asyncio
import sys

from ragway import logs
from ragway.embedding import ModelNotInstalledError
from ragway.grpc_server import PortInUseError
from services.generator.server import run
from services.generator.settings import GeneratorSettings


def main() -> int:
    try:
        settings = GeneratorSettings()
        logs.configure("generator", settings.log_level)
        asyncio.run(run(settings))
    except (PortInUseError, ModelNotInstalledError, FileNotFoundError, ValueError) as exc:
        # Configuration and environment problems: one clear line, no traceback.
        sys.stderr.write(f"generator: {exc}\n")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
