"""Knowledge builds on real processes: create, gate, promote, webhook, rollback, delete.

A private stack (Redis server, retriever, ingest API, Celery worker) so that
moving `live` cannot disturb the session stack the other tests share.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
import redis
from typer.testing import CliRunner

from ragway.kb import Defaults, Document
from ragway_tools import build_client as b
from ragway_tools.channels import service_channel
from ragway_tools.cli import app
from ragway_tools.launcher import Stack, StackConfig
from services.ingest.deliveries import DeliveryStore
from tests.conftest import FIXTURES
from tests.integration.webhooks import search, send, upserted, wait_done

SOURCES = FIXTURES / "builds"
GATE = SOURCES / "gate-qa.yaml"
STAFF = Defaults(tenant="initech", groups=("staff",))
OPENS = "When does the Initrode office open?"


@pytest.fixture(scope="module")
def private(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    data = tmp_path_factory.mktemp("builds-stack")
    stack = Stack(StackConfig.on_free_ports(data, api_keys_file=FIXTURES / "api-keys.yaml"))
    try:
        stack.logs_dir.mkdir(parents=True, exist_ok=True)
        stack.start_redis()
        stack.start_service("retriever")
        stack.start_ingest()
        yield stack
    finally:
        stack.stop()
    for part in ("retriever", "ingest-api", "ingest-worker"):
        text = (data / "logs" / f"{part}.log").read_text()
        assert "Traceback" not in text, f"{part} logged a traceback:\n{text[-4000:]}"


def top_document(addr: str, question: str, build: str = "") -> tuple[str, str]:
    hit = search(addr, question, build=build)[0]
    return hit.document_id, hit.text


def embedding_cache_texts(stack: Stack) -> dict[str, float]:
    url = stack.metrics_url("retriever")
    assert url is not None
    counts = {"hit": 0.0, "miss": 0.0}
    for line in httpx.get(url, timeout=10).text.splitlines():
        if line.startswith("ragway_retriever_embedding_cache_texts_total{"):
            outcome = line.split('outcome="')[1].split('"')[0]
            counts[outcome] = float(line.rsplit(" ", 1)[1])
    return counts


def gate(addr: str, build_id: str) -> b.PromotionCheckResult:
    return b.run_promotion_check(addr, build_id, GATE, top_k=3, min_hit_rate=1.0)


def test_a_build_is_created_gated_promoted_updated_by_webhook_and_rolled_back(
    private: Stack,
) -> None:
    addr = private.config.retriever_addr
    first_live = b.live_build(addr)

    v1 = b.create_build(addr, [SOURCES / "v1"], STAFF)
    m1 = json.loads(v1.info.manifest_json)
    assert (m1["status"], m1["documents"], m1["formats"]) == (
        "ready",
        3,
        {"html": 1, "markdown": 1, "text": 1},
    )
    assert m1["chunks"] == v1.read.chunks >= 5
    assert m1["config"]["chunker"]["max_words"] == 220
    assert len(m1["checksums"]["documents_sha256"]) == 64
    assert list(v1.info.aliases) == ["candidate"]
    # Not live yet: the live build does not know the handbook.
    assert not search(addr, OPENS)

    result = gate(addr, v1.info.build_id)
    assert result.passed, result.misses
    change = b.promote(addr, v1.info.build_id, result, expected_live=first_live)
    assert (change.previous_build_id, change.build_id) == (first_live, v1.info.build_id)
    doc, text = top_document(addr, OPENS)
    assert doc == "handbook" and "8 am" in text

    # A second build from edited sources; while it fills, a webhook changes the
    # canteen page. It reaches live (v1) and the candidate (v2), and the bulk
    # load of v2 does not overwrite it with the folder's older canteen text.
    hooks = httpx.Client(base_url=private.config.ingest_url, timeout=30)
    store = DeliveryStore(redis.Redis.from_url(private.config.redis_url), ttl_s=3600)
    canteen = (
        "---\ndocument_id: canteen\n---\n"
        "The Initrode canteen now serves lunch from 11 am until 3 pm.\n"
    )
    sent: list[str] = []

    def webhook_once(_: Document) -> None:
        if not sent:
            resp = send(
                hooks,
                private.config.webhook_secret,
                upserted("canteen", canteen, content_type="text/plain"),
            )
            assert resp.status_code == 202, resp.text
            sent.append(resp.json()["delivery_id"])
            record = wait_done(store, sent[0])
            assert set(record["builds"].split(",")) == {
                v1.info.build_id,
                b.show_build(addr, "candidate").build_id,
            }

    v2 = b.create_build(addr, [SOURCES / "v2"], STAFF, on_document=webhook_once)
    assert sent
    lunch = "When does the canteen serve lunch?"
    for build in (v1.info.build_id, v2.info.build_id):
        assert "11 am" in top_document(addr, lunch, build)[1], build
    assert (
        b.show_build(addr, v2.info.build_id).sparse_count
        == json.loads(v2.info.manifest_json)["chunks"]
    )

    b.promote(addr, v2.info.build_id, gate(addr, v2.info.build_id), expected_live=v1.info.build_id)
    assert "7 am" in top_document(addr, OPENS)[1]
    assert "11 am" in top_document(addr, lunch)[1]  # the webhook's update survived promotion

    back = b.rollback(addr)
    assert (back.previous_build_id, back.build_id) == (v2.info.build_id, v1.info.build_id)
    assert "8 am" in top_document(addr, OPENS)[1]
    assert "second class" in top_document(addr, "Which class on trains?")[1]

    # v1 is live and first_live its rollback step: both stay. v2 may go.
    for keep in (v1.info.build_id, first_live):
        with pytest.raises(grpc.RpcError) as refused:
            b.delete_build(addr, keep)
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    b.delete_build(addr, v2.info.build_id)
    assert v2.info.build_id not in {i.build_id for i in b.list_builds(addr)}
    hooks.close()


def test_promotion_refuses_a_build_that_fails_its_checks(private: Stack) -> None:
    addr = private.config.retriever_addr
    live = b.live_build(addr)
    # Only the canteen: the gate's handbook and travel questions miss.
    partial = b.create_build(addr, [SOURCES / "v1" / "canteen.txt"], STAFF, candidate=False)
    result = gate(addr, partial.info.build_id)
    assert not result.passed and result.hits == 1 and len(result.misses) == 3
    # A build never sealed (still 'building') is refused by the retriever itself.
    with service_channel(addr) as channel:
        from ragway.v1 import retriever_pb2 as pb
        from ragway.v1 import retriever_pb2_grpc as pb_grpc

        empty = pb_grpc.RetrieverStub(channel).CreateBuild(pb.CreateBuildRequest(), timeout=30)
    with pytest.raises(grpc.RpcError) as refused:
        b.promote(addr, empty.build_id, None, expected_live=live)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "not sealed" in (refused.value.details() or "") and "empty" in (
        refused.value.details() or ""
    )
    # Someone else moved live since we looked: the swap is refused, not raced.
    with pytest.raises(grpc.RpcError) as raced:
        b.promote(addr, partial.info.build_id, result, expected_live="b-somebody-else")
    assert raced.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert b.live_build(addr) == live


def test_ragway_ingest_reports_each_bad_file_and_ingests_the_rest(
    private: Stack, tmp_path: Path
) -> None:
    folder = tmp_path / "bad"
    shutil.copytree(SOURCES / "bad", folder)
    (folder / "latin1.md").write_bytes(b"# Caf\xe9\n\nNot UTF-8.\n")
    runner = CliRunner()
    result = runner.invoke(
        app, ["ingest", str(folder), "--retriever", private.config.retriever_addr]
    )
    out = result.output
    assert result.exit_code == 1, out
    assert "empty.md: empty document" in out
    assert "table.csv: unknown type '.csv'" in out
    assert "no-tenant.md: missing required metadata: tenant" in out
    assert "latin1.md: not UTF-8 text" in out
    hits = search(private.config.retriever_addr, "good file of the bad folder")
    assert hits and hits[0].document_id == "good"

    listed = runner.invoke(app, ["builds", "list", "--retriever", private.config.retriever_addr])
    assert listed.exit_code == 0 and "live" in listed.output


def test_the_cli_rebuilds_from_a_manifest_with_the_same_checksums(private: Stack) -> None:
    addr = private.config.retriever_addr
    runner = CliRunner()
    v1 = str(SOURCES / "v1")
    first = runner.invoke(
        app,
        f"builds create --from {v1} --tenant initech --groups staff --no-candidate "
        f"--build-id cli-v1 --retriever {addr}".split(),
    )
    assert first.exit_code == 0, first.output
    assert "Build cli-v1" in first.output and "next: ragway builds promote cli-v1" in first.output
    manifest = private.config.data_dir / "index" / "builds" / "cli-v1" / "manifest.json"
    before = embedding_cache_texts(private)
    again = runner.invoke(
        app,
        f"builds create --from {manifest} --no-candidate --build-id cli-v1-again "
        f"--retriever {addr}".split(),
    )
    assert again.exit_code == 0, again.output
    one, two = (json.loads(b.show_build(addr, i).manifest_json) for i in ("cli-v1", "cli-v1-again"))
    assert one["checksums"] == two["checksums"] and one["config"] == two["config"]
    # The same documents again: every chunk and unit vector came from the embedding
    # cache (ragway/embedding_cache.py), none from the model.
    after = embedding_cache_texts(private)
    assert after["miss"] == before["miss"] and after["hit"] > before["hit"]
    shown = runner.invoke(app, ["builds", "show", "cli-v1-again", "--retriever", addr])
    assert shown.exit_code == 0 and '"sparse_chunks"' in shown.output
    missing = runner.invoke(app, ["builds", "show", "no-such-build", "--retriever", addr])
    assert missing.exit_code == 1 and "NOT_FOUND" in missing.output


def write_batches(stack: Stack) -> dict[str, float]:
    url = stack.metrics_url("retriever")
    assert url is not None
    counts = {"wide": 0.0, "narrow": 0.0, "interrupted": 0.0}
    for line in httpx.get(url, timeout=10).text.splitlines():
        if line.startswith("ragway_retriever_write_embedding_batches_total{"):
            outcome = line.split('session="')[1].split('"')[0]
            counts[outcome] = float(line.rsplit(" ", 1)[1])
    return counts


def test_a_live_write_embeds_on_every_core_while_no_search_runs(private: Stack) -> None:
    """RAGWAY_WRITE_WIDEN_WHEN_QUIET (on by default): a webhook's write, with no
    search for longer than RAGWAY_WRITE_QUIET_S (1 s), runs its batches wide."""
    addr = private.config.retriever_addr
    search(addr, OPENS)  # a search ends: writes stay narrow for the next second
    time.sleep(1.2)
    before = write_batches(private)
    with httpx.Client(base_url=private.config.ingest_url, timeout=30) as client:
        doc = upserted("quiet-write", "# Parking\n\nInitech visitors park on level 2.\n")
        resp = send(client, private.config.webhook_secret, doc)
    assert resp.status_code == 202, resp.text
    store = DeliveryStore(redis.Redis.from_url(private.config.redis_url), ttl_s=3600)
    assert wait_done(store, resp.json()["delivery_id"])["state"] == "done"
    after = write_batches(private)
    assert after["wide"] > before["wide"]
    assert after["narrow"] == before["narrow"] and after["interrupted"] == before["interrupted"]
