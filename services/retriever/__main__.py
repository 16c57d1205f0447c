"""``python -m services.retriever``: run the retriever until SIGTERM."""

from __future__ import annotations

import asyncio
import sys

from ragway import logs
from ragway.embedding import ModelNotInstalledError
from ragway.grpc_server import PortInUseError
from services.retriever.server import run
from services.retriever.settings import RetrieverSettings


def main() -> int:
    try:
        settings = RetrieverSettings()
        logs.configure("retriever", settings.log_level)
        asyncio.run(run(settings))
    except (PortInUseError, ModelNotInstalledError, FileNotFoundError, ValueError) as exc:
        # Configuration and environment problems: one clear line, no traceback.
        sys.stderr.write(f"retriever: {exc}\n")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
