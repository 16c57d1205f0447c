"""``ragway eval congruence``: BM25 on the embedded engine and on OpenSearch, side by side."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer


def eval_congruence(
    dataset: Annotated[Path, typer.Option(help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/")],
    opensearch_url: Annotated[
        str | None, typer.Option(help="A running OpenSearch (default: start the test node)")
    ] = None,
    output: Annotated[
        Path | None, typer.Option(help="Report folder (default var/eval/<name>-<checksum>)")
    ] = None,
) -> None:
    """nDCG@10 of tantivy vs OpenSearch BM25 on every query with qrels, and top-10 agreement."""
    from opensearchpy import OpenSearch

    from ragway_tools.evaluation import congruence
    from ragway_tools.evaluation.beir import DatasetError, load
    from ragway_tools.opensearch_node import NodeUnavailableError, OpenSearchNode

    try:
        data = load(dataset)
    except DatasetError as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise typer.Exit(2) from None
    out = output or Path("var/eval") / f"{data.name}-{data.checksum[:8]}"
    query_ids = sorted(data.qrels)
    with tempfile.TemporaryDirectory(prefix="ragway-opensearch-") as home:
        node = None
        try:
            if opensearch_url is None:
                node = OpenSearchNode(Path(home))
                opensearch_url = node.start()
            client = OpenSearch(hosts=[opensearch_url], timeout=120)
            report = congruence.sparse_congruence(
                data, query_ids, client, index_name=f"ragway-congruence-{data.checksum[:8]}"
            )
            client.close()
        except NodeUnavailableError as exc:
            sys.stderr.write(f"error: {exc}\n")
            raise typer.Exit(2) from None
        finally:
            if node is not None:
                node.stop()
    sys.stdout.write(congruence.write(report, out))
    sys.stdout.write(f"report: {out}/congruence.md, congruence.json\n")
