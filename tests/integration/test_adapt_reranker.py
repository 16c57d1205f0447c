"""Self-supervised adaptation as a user runs it: train on a folder, serve it per tenant.

``ragway train reranker --from-folder`` on the help-centre fixture (one tenant,
a few steps of a one-layer model: the mechanics, not the quality), then a real
retriever loads the artifact as that tenant's own reranker and reports it in
the search response and in its metrics.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragway.embedding import cpu_flags, int8_pays
from ragway.kb import Defaults, discover, parse_document
from ragway.v1 import retriever_pb2 as pb
from ragway.v1 import retriever_pb2_grpc as pb_grpc
from ragway_tools.channels import service_channel
from ragway_tools.launcher import Stack, StackConfig
from ragway_tools.loading import load_documents

pytestmark = [pytest.mark.models, pytest.mark.timeout(900)]
RAGWAY = str(Path(sys.executable).parent / "ragway")
KB = Path(__file__).resolve().parents[2] / "eval/helpcentre/kb"


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("adapt")
    env = os.environ | {"COLUMNS": "200"}
    done = subprocess.run(
        [RAGWAY, "train", "reranker", "--from-folder", str(KB), "--tenant", "lumen",
         "--max-steps", "3", "--layers", "1", "--max-length", "64", "--output", "models"],
        cwd=work, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (folder,) = (work / "models").iterdir()
    assert folder.name.startswith("reranker-lumen-")
    return folder


def test_the_artifact_records_its_tenant_and_training_data(artifact: Path) -> None:
    meta = json.loads((artifact / "artifact.json").read_text())
    data = meta["data"]
    assert meta["tenant"] == data["tenant"] == "lumen"
    assert data["kind"] == "self-supervised"
    assert data["source"] == {"kind": "folder", "paths": [str(KB)]}
    assert data["negatives"]["foreign_hits_dropped"] == 0
    assert len(data["documents_sha256"]) == 64 and len(data["checksum"]) == 64
    assert data["documents"] == 14  # lumen's current pages; the deprecated one is left out
    assert set(data["pseudo_queries"]["by_kind"]) <= {
        "heading", "first-sentence", "keyphrase", "table-row"
    }  # fmt: skip
    assert meta["training"]["steps"] == 3
    assert meta["training"]["heldout_evaluations"]  # early stopping measured the slice
    assert (artifact / "onnx" / "model_int8.onnx").is_file()


def serving(tmp: Path, settings: dict[str, str]) -> Iterator[Stack]:
    """A real retriever with these reranker settings, holding the help-centre pages."""
    env = {"RAGWAY_INDEX_DIR": str(tmp / "index"), "RAGWAY_RERANK_THREADS": "1", **settings}
    stack = Stack(StackConfig.on_free_ports(tmp, extra_env=env))
    try:
        stack.start_service("retriever")
        docs = [parse_document(p, r, Defaults()) for p, r in discover([KB])]
        load_documents(stack.config.retriever_addr, docs, token=stack.config.service_token)
        yield stack
    finally:
        stack.stop()


@pytest.fixture(scope="module")
def retriever(artifact: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    yield from serving(
        tmp_path_factory.mktemp("serve"),
        {
            "RAGWAY_RERANKER_TENANT_PATHS": json.dumps({"lumen": str(artifact)}),
            "RAGWAY_RERANK_BATCH_SIZE": "4",
        },
    )


def search(
    stack: Stack,
    tenant: str,
    reranker: str = "",
    rerank: pb.RerankMode.ValueType = pb.RERANK_MODE_UNSPECIFIED,
    **fields: Any,
) -> pb.SearchResponse:
    with service_channel(stack.config.retriever_addr, stack.config.service_token) as channel:
        reply: pb.SearchResponse = pb_grpc.RetrieverStub(channel).Search(
            pb.SearchRequest(
                query="How long are cloud recordings kept?", tenant=tenant,
                access_groups=["public"], top_k=5, reranker=reranker, rerank=rerank, **fields,
            ),
            timeout=60,
        )  # fmt: skip
        return reply


def test_the_retriever_serves_the_tenants_own_reranker(artifact: Path, retriever: Stack) -> None:
    lumen = search(retriever, "lumen")
    # RAGWAY_RERANK_PRECISION=auto: the int8 network only on a CPU where it pays.
    served = artifact.name + ("" if int8_pays(cpu_flags()) else "-fp32")
    assert lumen.reranker_model == served
    assert any(h.scores.reranked for h in lumen.hits) and not lumen.degraded
    assert all(h.document_id.startswith("lumen/") for h in lumen.hits)
    # The other tenant has no reranker of its own and no shared one is set.
    northwind = search(retriever, "northwind")
    assert northwind.reranker_model == ""
    assert not any(h.scores.reranked for h in northwind.hits)
    url = retriever.metrics_url("retriever")
    assert url is not None
    metrics = httpx.get(url, timeout=10).text
    info = f'ragway_retriever_reranker_info{{reranker="{served}",role="tenant",tenant="lumen"}} 1.0'
    assert info in metrics
    assert f'ragway_retriever_reranks_total{{outcome="reranked",reranker="{served}"}}' in (metrics)


def test_a_build_is_adapted_from_the_sources_its_manifest_records(
    retriever: Stack, tmp_path: Path
) -> None:
    from ragway_tools.build_client import create_build

    addr = retriever.config.retriever_addr
    created = create_build(addr, [KB], Defaults(), candidate=False)
    build_id = created.info.build_id
    done = subprocess.run(
        [RAGWAY, "train", "reranker", "--from-build", build_id, "--retriever", addr,
         "--tenant", "lumen", "--max-steps", "2", "--layers", "1", "--max-length", "64",
         "--output", "models"],
        cwd=tmp_path, env=os.environ | {"COLUMNS": "200"}, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (folder,) = (tmp_path / "models").iterdir()
    source = json.loads((folder / "artifact.json").read_text())["data"]["source"]
    assert source["kind"] == "build" and source["build_id"] == build_id
    assert source["paths"] == [str(KB.resolve())]
    # The files are unchanged since the build: the re-read chunks are the build's.
    assert source["build_chunks_sha256"] == source["read_chunks_sha256"]


@pytest.fixture(scope="module")
def offering(artifact: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A retriever with no default reranker that offers the lumen artifact to paths."""
    offered = {"RAGWAY_RERANKER_OFFERED_PATHS": json.dumps([str(artifact)])}
    yield from serving(tmp_path_factory.mktemp("offer"), offered)


def test_an_offered_reranker_serves_only_the_searches_that_name_it(
    artifact: Path, offering: Stack
) -> None:
    served = artifact.name + ("" if int8_pays(cpu_flags()) else "-fp32")
    with service_channel(offering.config.retriever_addr, offering.config.service_token) as ch:
        listed = pb_grpc.RetrieverStub(ch).ListRerankers(pb.ListRerankersRequest(), timeout=10)
    [info] = listed.rerankers
    assert (info.version, info.model_id, info.tenant, info.role) == (
        artifact.name, served, "lumen", "offered"
    )  # fmt: skip
    assert info.max_length == 64 and info.created
    # Announced in the metrics from start-up, before any search names it.
    url = offering.metrics_url("retriever")
    assert url is not None
    info_line = (
        f'ragway_retriever_reranker_info{{reranker="{served}",role="offered",tenant="lumen"}}'
    )
    assert f"{info_line} 1.0" in httpx.get(url, timeout=10).text
    # Not named: no default is configured, so the fused order stands.
    plain = search(offering, "lumen", "")
    assert plain.reranker_model == "" and not any(h.scores.reranked for h in plain.hits)
    # Named by its version (what a canary path sends): it reranks lumen's search.
    named = search(offering, "lumen", artifact.name)
    assert named.reranker_model == served and not named.degraded
    assert any(h.scores.reranked for h in named.hits)
    # The same passages as the fused order, reordered within the head.
    assert {h.chunk_id for h in named.hits} == {h.chunk_id for h in plain.hits}
    # Adapted on lumen's documents: another tenant's search keeps its own default (none).
    other = search(offering, "northwind", artifact.name)
    assert other.reranker_model == "" and not any(h.scores.reranked for h in other.hits)
    assert all(h.document_id.startswith("northwind/") for h in other.hits)


def test_a_named_artifact_at_weight_zero_reranks_and_keeps_the_fused_order(
    artifact: Path, offering: Stack
) -> None:
    # What a canary path sends with the weight it sets (PathOptions.rerank_weight).
    plain = search(offering, "lumen", "")  # no default reranker here: the fused order
    kept = search(offering, "lumen", artifact.name, rerank_weight=0.0)
    served = artifact.name + ("" if int8_pays(cpu_flags()) else "-fp32")
    assert kept.reranker_model == served and not kept.degraded and not kept.rerank_skipped
    assert any(h.scores.reranked for h in kept.hits)  # the artifact scored the head
    assert [h.chunk_id for h in kept.hits] == [h.chunk_id for h in plain.hits]
    # A margin no fused lead reaches reranks; one every lead reaches skips.
    assert not search(offering, "lumen", artifact.name, rerank_skip_margin=1.0).rerank_skipped
    skipped = search(offering, "lumen", artifact.name, rerank_skip_margin=-1.0)
    assert skipped.rerank_skipped and not any(h.scores.reranked for h in skipped.hits)


def test_naming_a_reranker_the_retriever_lacks_or_with_rerank_off_is_refused(
    artifact: Path, offering: Stack
) -> None:
    import grpc

    with pytest.raises(grpc.RpcError) as missing:
        search(offering, "lumen", "reranker-nope")
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    assert "offers no reranker 'reranker-nope'" in str(missing.value.details())
    assert artifact.name in str(missing.value.details())  # what it does offer
    with pytest.raises(grpc.RpcError) as off:
        search(offering, "lumen", artifact.name, rerank=pb.RERANK_MODE_OFF)
    assert off.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as blend_off:
        search(offering, "lumen", "", rerank=pb.RERANK_MODE_OFF, rerank_weight=0.5)
    assert blend_off.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as out_of_range:
        search(offering, "lumen", artifact.name, rerank_skip_margin=2.0)
    assert out_of_range.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_a_tenant_cannot_get_another_tenants_adapted_reranker_as_its_default(
    artifact: Path, tmp_path: Path
) -> None:
    from ragway_tools.launcher import LaunchError

    env = {"RAGWAY_RERANKER_TENANT_PATHS": json.dumps({"northwind": str(artifact)})}
    stack = Stack(StackConfig.on_free_ports(tmp_path, extra_env=env))
    try:
        with pytest.raises(LaunchError, match=r"(?s)retriever exited .*adapted on tenant 'lumen'"):
            stack.start_service("retriever")
    finally:
        stack.stop()
