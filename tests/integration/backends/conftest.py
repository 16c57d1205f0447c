"""A real OpenSearch node for the backend suite, and clients for each server backend.

``RAGWAY_TEST_OPENSEARCH_URL`` names a running node (``.ci/run`` starts one);
otherwise the suite starts its own from the launcher that ``make opensearch-node``
builds. Without either it is skipped, unless ``RAGWAY_TEST_REQUIRE_OPENSEARCH=1``
(set by CI), which turns the skip into a failure: CI never passes without
having run these tests against a live node.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import httpx
import pytest
from opensearchpy import OpenSearch

from ragway_tools.opensearch_node import NodeUnavailableError, OpenSearchNode, classpath


def _unavailable(reason: str) -> None:
    if os.environ.get("RAGWAY_TEST_REQUIRE_OPENSEARCH") == "1":
        pytest.fail(f"OpenSearch is required (RAGWAY_TEST_REQUIRE_OPENSEARCH=1): {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def opensearch_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = os.environ.get("RAGWAY_TEST_OPENSEARCH_URL")
    if url:
        try:
            httpx.get(f"{url}/_cluster/health", timeout=10).raise_for_status()
        except httpx.HTTPError as e:
            pytest.fail(f"RAGWAY_TEST_OPENSEARCH_URL={url} does not answer: {e!r}")
        yield url
        return
    try:
        classpath()
    except NodeUnavailableError as e:
        _unavailable(str(e))
    # Built but failing to start is a failure, never a skip.
    with OpenSearchNode(tmp_path_factory.mktemp("opensearch")) as node:
        yield node.url


@pytest.fixture(scope="session")
def opensearch(opensearch_url: str) -> Iterator[OpenSearch]:
    client = OpenSearch(hosts=[opensearch_url], timeout=60)
    yield client
    client.close()


@pytest.fixture
def unique() -> str:
    """A name no other test (or earlier run against the same node) uses."""
    return "t-" + uuid.uuid4().hex[:12]
