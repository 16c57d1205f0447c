"""``python -m services.retriever``: run the retriever until SIGTERM."""

from __future__ import annotations

from ragway.grpc_server import main
from services.retriever.server import run
from services.retriever.settings import RetrieverSettings

if __name__ == "__main__":
    raise SystemExit(main("retriever", RetrieverSettings, run))
