from __future__ import annotations

from pathlib import Path

import pytest

from ragway.kb import Defaults, DocumentError, discover, parse_document
from ragway.v1 import retriever_pb2
from tests.conftest import FIXTURES, ROOT


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_front_matter_sets_metadata_and_sections_become_chunks_with_heading_paths() -> None:
    path = FIXTURES / "kb/acme/expense-policy.md"
    doc = parse_document(path, path.parent, Defaults())
    assert (doc.document_id, doc.tenant, doc.groups, doc.version) == (
        "acme/expense-policy",
        "acme",
        ["staff"],
        "2",
    )
    assert [(c.chunk_id, c.section) for c in doc.chunks] == [
        ("acme/expense-policy#hotel-limits", "Hotel limits"),
        ("acme/expense-policy#meal-allowance", "Meal allowance"),
    ]
    assert all(c.status == retriever_pb2.DOCUMENT_STATUS_CURRENT for c in doc.chunks)


def test_chunk_ids_are_stable_across_parses() -> None:
    path = FIXTURES / "kb/acme/expense-policy.md"
    first = [c.chunk_id for c in parse_document(path, path.parent, Defaults()).chunks]
    second = [c.chunk_id for c in parse_document(path, path.parent, Defaults()).chunks]
    assert first == second


def test_long_sections_split_at_paragraphs_and_nested_headings_keep_their_path(
    tmp_path: Path,
) -> None:
    para = " ".join(["word"] * 150)
    path = write(tmp_path, "long.md", f"# Doc\n\n## Setup\n\n### Linux\n\n{para}\n\n{para}\n")
    doc = parse_document(path, tmp_path, Defaults())
    assert [c.chunk_id for c in doc.chunks] == ["long#setup-linux", "long#setup-linux-2"]
    assert {c.section for c in doc.chunks} == {"Setup > Linux"}


def test_defaults_apply_when_front_matter_is_absent(tmp_path: Path) -> None:
    path = write(tmp_path, "plain.md", "# Plain doc\n\nSome text here.\n")
    doc = parse_document(path, tmp_path, Defaults(tenant="t1", groups=("g1",)))
    assert (doc.title, doc.tenant, doc.groups, doc.url) == ("Plain doc", "t1", ["g1"], "")


def test_effective_dates_become_unix_seconds() -> None:
    path = FIXTURES / "kb/acme/expense-policy-2030.md"
    doc = parse_document(path, path.parent, Defaults())
    assert doc.effective_from == 1893456000  # 2030-01-01T00:00:00Z


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty document"),
        ("---\nstatus: retired\n---\n# T\n\ntext\n", "status 'retired'"),
        ("---\ngroups: []\n---\n# T\n\ntext\n", "groups must be a non-empty list"),
        ("---\n: [\n---\n# T\n\ntext\n", "invalid front matter"),
        ("---\neffective_from: soon\n---\n# T\n\ntext\n", "effective_from must be a date"),
        ("# Only a heading\n", "no text outside headings"),
    ],
)
def test_bad_documents_are_rejected_with_the_file_and_reason(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, "bad.md", text)
    with pytest.raises(DocumentError, match=message) as err:
        parse_document(path, tmp_path, Defaults())
    assert str(path) in str(err.value)


def test_discover_finds_markdown_recursively_and_rejects_missing_paths(tmp_path: Path) -> None:
    found = discover([FIXTURES / "kb"])
    assert len(found) == 5
    with pytest.raises(DocumentError, match="no such file"):
        discover([tmp_path / "missing"])


def test_the_demo_knowledge_base_parses_without_errors() -> None:
    for path, root in discover([ROOT / "docs", ROOT / "kb/demo"]):
        doc = parse_document(path, root, Defaults())
        assert doc.chunks, path
