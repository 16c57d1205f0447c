"""A private demo stack: every part on free loopback ports, the demo knowledge base loaded.

Benchmarks and evaluations run against this, beside a ``make up`` that may be
using the default ports, and leave nothing behind.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from ragway.kb import SUFFIXES, Defaults, discover, parse_document
from ragway_tools.launcher import Stack, StackConfig
from ragway_tools.loading import load_documents

ROOT = Path(__file__).resolve().parent.parent
DEMO_KB = (ROOT / "docs", ROOT / "kb/demo")


@contextlib.contextmanager
def demo_stack(
    extra_env: dict[str, str] | None = None,
    *,
    kb: Sequence[Path] = (),
    api_keys: Path | None = None,
) -> Iterator[Stack]:
    """Start Redis, retriever, generator, load a KB (the demo's by default), start the gateway.

    Everything stops on exit. ``kb`` and ``api_keys`` run the same stack on another
    knowledge base and key file (an evaluation set's own).
    """
    with tempfile.TemporaryDirectory(prefix="ragway-demo-") as tmp:
        keys = {"api_keys_file": api_keys} if api_keys is not None else {}
        config = StackConfig.on_free_ports(Path(tmp), extra_env=dict(extra_env or {}), **keys)
        stack = Stack(config)
        try:
            stack.start_backends()
            # An evaluation set's knowledge base is read as an ingestion reads it, in
            # every format ragway parses (a help centre's HTML export too); the demo
            # knowledge base is docs/, whose other files (openapi.json) are no pages.
            found = discover(list(kb), suffixes=tuple(SUFFIXES)) if kb else discover(list(DEMO_KB))
            docs = [parse_document(p, r, Defaults()) for p, r in found]
            load_documents(stack.config.retriever_addr, docs, token=stack.config.service_token)
            stack.start_gateway()
            yield stack
        finally:
            stack.stop()
