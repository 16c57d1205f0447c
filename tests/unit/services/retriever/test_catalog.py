from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from services.retriever.catalog import (
    BUILDING,
    CANDIDATE,
    LIVE,
    BuildCatalog,
    BuildStateError,
    UnknownBuildError,
)
from services.retriever.engines.tantivy_sparse import SCHEMA_VERSION
from services.retriever.model import OPEN_END, ChunkRecord, Status


def catalog(root: Path) -> BuildCatalog:
    return BuildCatalog(root, embedding_model="m", dim=384)


def test_the_first_start_creates_a_build_and_points_live_at_it(tmp_path: Path) -> None:
    c = catalog(tmp_path)
    build_id = c.ensure_live()
    assert c.aliases() == {LIVE: build_id}
    assert c.resolve("") == c.resolve(LIVE) == c.resolve(build_id) == build_id
    assert c.ensure_live() == build_id  # idempotent
    c.close()


def test_unknown_names_and_bad_ids_are_refused(tmp_path: Path) -> None:
    c = catalog(tmp_path)
    with pytest.raises(UnknownBuildError, match="no build or alias named 'nope'"):
        c.resolve("nope")
    with pytest.raises(ValueError, match="invalid build id"):
        c.create("Bad/Id")


def test_a_build_from_an_older_sparse_schema_is_refused_with_the_fix(tmp_path: Path) -> None:
    c = catalog(tmp_path)
    build_id = c.ensure_live()
    manifest = tmp_path / "builds" / build_id / "manifest.json"
    data = json.loads(manifest.read_text())
    del data["sparse_schema"]  # as written before the schema was versioned
    manifest.write_text(json.dumps(data))
    with pytest.raises(
        ValueError, match=rf"sparse index schema v1; this retriever needs v{SCHEMA_VERSION}"
    ):
        c.open(build_id)


def test_a_build_embedded_with_another_dimension_is_refused(tmp_path: Path) -> None:
    build_id = catalog(tmp_path).ensure_live()
    with pytest.raises(ValueError, match="dim 384"):
        BuildCatalog(tmp_path, embedding_model="m", dim=768).open(build_id)


def test_a_build_embedded_with_another_model_is_served_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An upgrade that changes the embedding model keeps the live build serving
    (refusing it would stop the retriever) and says it should be rebuilt."""
    first = catalog(tmp_path)
    build_id = first.ensure_live()
    first.close()
    upgraded = BuildCatalog(tmp_path, embedding_model="m2", dim=384)
    with caplog.at_level("WARNING", logger="services.retriever.catalog"):
        assert upgraded.open(build_id).build_id == build_id
    upgraded.close()
    assert f"build {build_id} was embedded with m; this retriever embeds with m2" in caplog.text
    caplog.clear()
    same = catalog(tmp_path)
    with caplog.at_level("WARNING", logger="services.retriever.catalog"):
        same.open(build_id)
    same.close()
    assert "was embedded with" not in caplog.text


def fill(c: BuildCatalog, build_id: str, n: int) -> None:
    """n chunks of one document, with unit vectors (the engines, not the model, are tested)."""
    build = c.open(build_id)
    records = [
        ChunkRecord(
            chunk_id=f"doc#{i}",
            document_id="doc",
            tenant="t",
            access_groups=("g",),
            status=Status.CURRENT,
            effective_from=0,
            effective_to=OPEN_END,
            version="1",
            url="",
            title="Doc",
            section=str(i),
            text=f"chunk number {i}",
        )
        for i in range(n)
    ]
    vectors = [[1.0] + [0.0] * 383 for _ in records]
    with build.write_lock:
        build.sparse.upsert(records)
        build.dense.upsert(records, vectors)


def sealed(c: BuildCatalog, n: int = 2) -> str:
    build_id = c.create(status=BUILDING)
    fill(c, build_id, n)
    c.seal(build_id, {"documents": 1, "chunks": n})
    return build_id


def test_promote_swaps_live_and_rollback_walks_back_one_promotion_at_a_time(
    tmp_path: Path,
) -> None:
    c = catalog(tmp_path)
    first = c.ensure_live()
    a, b = sealed(c), sealed(c, 3)
    c.set_alias(CANDIDATE, b)
    assert c.promote(a, expected_live=first) == (first, a)
    assert c.promote(b, gate={"passed": True}) == (a, b)
    assert c.aliases() == {LIVE: b}  # the candidate alias went with the promotion
    assert c.manifest(b)["gate"] == {"passed": True} and c.manifest(b)["promoted_at"]
    assert c.live_history() == [first, a, b]
    assert c.rollback() == (b, a)
    assert c.rollback() == (a, first)
    with pytest.raises(BuildStateError, match="no earlier build"):
        c.rollback()
    assert c.resolve(LIVE) == first
    # Survives a restart: the history is on disk.
    c.close()
    assert catalog(tmp_path).live_history() == [first]


def test_promotion_checks_the_build_and_refuses_a_moved_live(tmp_path: Path) -> None:
    c = catalog(tmp_path)
    live = c.ensure_live()
    building = c.create(status=BUILDING)
    with pytest.raises(BuildStateError, match=r"not sealed ready.*is empty"):
        c.promote(building)
    fill(c, building, 2)
    with pytest.raises(BuildStateError, match="the load reported 5"):
        c.seal(building, {"chunks": 5})
    ready = sealed(c)
    with pytest.raises(BuildStateError, match="live moved"):
        c.promote(ready, expected_live="someone-else")
    c.update_manifest(ready, chunks=7)  # the manifest disagrees with the index
    with pytest.raises(BuildStateError, match="no incremental update explains"):
        c.promote(ready)
    c.open(ready).mark_touched([("t", "doc")])  # ...unless webhooks changed it since
    assert c.promote(ready) == (live, ready)
    with pytest.raises(BuildStateError, match="already live"):
        c.promote(ready)


def test_delete_refuses_aliased_builds_and_rollback_steps(tmp_path: Path) -> None:
    c = catalog(tmp_path)
    first = c.ensure_live()
    a = sealed(c)
    spare = sealed(c)
    c.promote(a)
    for kept in (a, first):
        with pytest.raises(BuildStateError):
            c.delete(kept)
    c.open(spare)  # an open build is closed before its folder goes
    c.delete(spare)
    assert spare not in c.build_ids()
    with pytest.raises(UnknownBuildError):
        c.delete(spare)


def test_touched_documents_persist_with_the_build(tmp_path: Path) -> None:
    c = catalog(tmp_path)
    build_id = c.create()
    build = c.open(build_id)
    with build.write_lock:
        build.mark_touched([("t", "a"), ("t", "b")])
    c.close()
    assert catalog(tmp_path).open(build_id).touched == {("t", "a"), ("t", "b")}


def test_a_sealed_build_whose_index_files_are_missing_is_refused_not_served_empty(
    tmp_path: Path,
) -> None:
    # As a replica of a shared catalog finds a build written on another's data root.
    c = catalog(tmp_path)
    c.ensure_live()
    build_id = sealed(c)
    c.close()
    shutil.rmtree(tmp_path / "builds" / build_id / "dense")
    with pytest.raises(BuildStateError, match="dense index is not in this retriever's data root"):
        catalog(tmp_path).open(build_id)
    # An unsealed build has nothing to lose: it opens (empty), as a new one does.
    unsealed = catalog(tmp_path).create(status=BUILDING)
    assert catalog(tmp_path).counts(unsealed) == (0, 0)


def test_a_replica_starting_after_another_serves_the_initial_build_it_made(
    tmp_path: Path,
) -> None:
    first = catalog(tmp_path)
    first.create("b-initial")  # made by a replica that has not set live yet
    assert catalog(tmp_path).ensure_live("b-initial") == "b-initial"
    assert first.resolve(LIVE) == "b-initial" and first.build_ids() == ["b-initial"]
