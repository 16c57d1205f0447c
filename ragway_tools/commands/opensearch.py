"""``ragway opensearch-node``: the test node of deploy/opensearch-test-node, in the foreground."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer


def opensearch_node(
    home: Annotated[Path, typer.Option(help="Data, logs and the port file")] = Path(
        "var/opensearch"
    ),
    port: Annotated[int, typer.Option(help="HTTP port on 127.0.0.1 (0: any free port)")] = 9200,
    heap: Annotated[str, typer.Option(help="JVM heap, e.g. 512m or 1g")] = "512m",
    url_file: Annotated[
        Path | None, typer.Option(help="Write the node's URL here once it is healthy")
    ] = None,
) -> None:
    """Run a single-node OpenSearch 2.19 on loopback (security off) until Ctrl-C."""
    from ragway_tools.opensearch_node import NodeUnavailableError, OpenSearchNode

    # SIGTERM (CI, a supervisor) stops the node as Ctrl-C does: never an orphaned JVM.
    signal.signal(signal.SIGTERM, _interrupt)
    node = OpenSearchNode(home, port=port, heap=heap)
    try:
        url = node.start()
    except KeyboardInterrupt:
        node.stop()
        return
    except NodeUnavailableError as e:
        sys.stderr.write(f"error: {e}\n")
        raise typer.Exit(1) from e
    if url_file is not None:
        url_file.write_text(url + "\n")
    sys.stdout.write(f"OpenSearch is ready at {url} (data in {home}); Ctrl-C stops it\n")
    sys.stdout.flush()
    try:
        code = node.wait()
    except KeyboardInterrupt:
        node.stop()
        return
    if code != 0:
        sys.stderr.write(f"error: the node exited with status {code}; see {node.log_path}\n")
        raise typer.Exit(code)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt
