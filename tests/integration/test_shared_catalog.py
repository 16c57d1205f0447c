"""Two retriever replicas sharing one build catalog in Redis (RAGWAY_CATALOG_STORE=redis).

A build created, sealed and promoted through one replica is what the other serves
on its next search; a restarted replica comes back on the same ``live``; a
promotion or a rollback through either replica reaches both.

Each replica has a data root of its own, as the embedded engines need (one process
per index: qdrant-edge locks its write-ahead log). In a deployment the replicas
share their indexes through the server engines (OpenSearch, Qdrant); neither server
runs on the test machines, so the test copies a sealed build's index files to the
second replica's data root, standing in for that shared index. Before the copy the
second replica refuses the build, rather than serving an empty index.
"""

from __future__ import annotations

import shutil
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from ragway.kb import Defaults
from ragway.v1 import retriever_pb2 as pb
from ragway.v1 import retriever_pb2_grpc as pb_grpc
from ragway_tools import build_client as b
from ragway_tools.channels import service_channel
from ragway_tools.launcher import Stack, StackConfig, free_port
from tests.conftest import FIXTURES

SOURCES = FIXTURES / "builds"
GATE = SOURCES / "gate-qa.yaml"
STAFF = Defaults(tenant="initech", groups=("staff",))
OPENS = "When does the Initrode office open?"
NAMES = ("retriever-a", "retriever-b")


@dataclass
class Replicas:
    stack: Stack
    addr: dict[str, str]
    root: dict[str, Path]
    port: dict[str, int]

    def env(self, name: str) -> dict[str, str]:
        return {
            "RAGWAY_INDEX_DIR": str(self.root[name]),
            "RAGWAY_CATALOG_STORE": "redis",
            "RAGWAY_INITIAL_BUILD_ID": "b-initial",
        }

    def start(self, name: str) -> None:
        self.stack.start_retriever(name, self.port[name], self.env(name))

    def share(self, build_id: str) -> None:
        """Give retriever-b the sealed build's index files (the shared index in a deployment)."""
        shutil.copytree(
            self.root["retriever-a"] / "builds" / build_id,
            self.root["retriever-b"] / "builds" / build_id,
        )


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[Replicas]:
    stack = Stack(StackConfig.on_free_ports(tmp_path, api_keys_file=FIXTURES / "api-keys.yaml"))
    port = {NAMES[0]: stack.config.retriever_port, NAMES[1]: free_port()}
    r = Replicas(
        stack,
        addr={n: f"{stack.config.host}:{p}" for n, p in port.items()},
        root={n: tmp_path / f"index-{n}" for n in NAMES},
        port=port,
    )
    try:
        stack.logs_dir.mkdir(parents=True)
        stack.start_redis()
        for name in NAMES:
            r.start(name)
        yield r
    finally:
        stack.stop()
    for name in NAMES:
        text = (tmp_path / "logs" / f"{name}.log").read_text()
        assert "Traceback" not in text, f"{name} logged a traceback:\n{text[-4000:]}"


def served(addr: str, build: str = "") -> tuple[str, str]:
    """(the build that served, the top passage) for the office-hours question."""
    with service_channel(addr) as channel:
        reply = pb_grpc.RetrieverStub(channel).Search(
            pb.SearchRequest(
                query=OPENS,
                tenant="initech",
                access_groups=STAFF.groups,
                top_k=3,
                build=build,
                budget_ms=10_000,
            ),
            timeout=30,
        )
    return reply.build_id, reply.hits[0].text if reply.hits else ""


def gate(addr: str, build_id: str) -> b.PromotionCheckResult:
    result = b.run_promotion_check(addr, build_id, GATE, top_k=3, min_hit_rate=1.0)
    assert result.passed, result.misses
    return result


def test_a_promotion_through_either_replica_reaches_both_and_survives_a_restart(
    replicas: Replicas,
) -> None:
    a, other = (replicas.addr[n] for n in NAMES)
    assert b.live_build(a) == b.live_build(other) == "b-initial"  # the first start's, shared

    v1 = b.create_build(a, [SOURCES / "v1"], STAFF).info.build_id
    listed = {i.build_id: list(i.aliases) for i in b.list_builds(other)}
    assert listed[v1] == ["candidate"]  # the other replica sees the build and its alias
    with pytest.raises(grpc.RpcError) as refused:
        served(other, v1)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "not in this retriever's data root" in (refused.value.details() or "")
    replicas.share(v1)

    change = b.promote(a, v1, gate(a, v1), expected_live="b-initial")
    assert (change.previous_build_id, change.build_id) == ("b-initial", v1)
    for addr in (a, other):
        build, top = served(addr)
        assert build == v1 and "8 am" in top, addr
    # The other replica never wrote an alias of its own: its live is the shared one.
    assert not (replicas.root[NAMES[1]] / "aliases.json").exists()

    replicas.stack.kill(NAMES[1], signal.SIGTERM)
    replicas.start(NAMES[1])
    assert served(other)[0] == v1  # a restarted replica keeps live

    v2 = b.create_build(a, [SOURCES / "v2"], STAFF).info.build_id
    replicas.share(v2)
    b.promote(other, v2, gate(other, v2), expected_live=v1)  # through the other one now
    for addr in (a, other):
        build, top = served(addr)
        assert build == v2 and "7 am" in top, addr
    # A promotion that raced another (live is v2 now, not v1) is refused on either.
    with pytest.raises(grpc.RpcError) as raced:
        b.promote(a, v1, None, expected_live=v1)
    assert raced.value.code() == grpc.StatusCode.FAILED_PRECONDITION

    back = b.rollback(a)
    assert (back.previous_build_id, back.build_id) == (v2, v1)
    for addr in (a, other):
        build, top = served(addr)
        assert build == v1 and "8 am" in top, addr
    back = b.rollback(other)  # the history is shared too: one step further back
    assert (back.previous_build_id, back.build_id) == (v1, "b-initial")
    assert served(a)[0] == served(other)[0] == "b-initial"
