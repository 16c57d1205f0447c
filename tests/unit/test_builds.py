from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.retriever.builds import LIVE, BuildCatalog, UnknownBuildError


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
    with pytest.raises(ValueError, match=r"sparse index schema v1; this retriever needs v2"):
        c.open(build_id)


def test_a_build_embedded_with_another_dimension_is_refused(tmp_path: Path) -> None:
    build_id = catalog(tmp_path).ensure_live()
    with pytest.raises(ValueError, match="dim 384"):
        BuildCatalog(tmp_path, embedding_model="m", dim=768).open(build_id)
