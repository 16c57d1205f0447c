"""The shipped QA sets ask what their knowledge bases do not already say word for word.

The demo knowledge base is docs/, and docs/generation.md once quoted a demo question
("Which port does the retreiver lisen on?") to explain spelling repair: its misspelt
words became words of the knowledge base, were never repaired, and the item measured
the docs rather than ragway. A keyword query ("enterprise uptime commitment") may be a
heading, as real pages have; a sentence-long question may not.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragway_tools.evaluation.qa import load_qa
from tests.conftest import ROOT

DEMO_KB = (ROOT / "docs", ROOT / "kb" / "demo")
QA_FILES = sorted(
    p for p in (ROOT / "eval").rglob("*.yaml") if p.name.startswith(("qa-", "demo-qa"))
)


def _plain(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def _knowledge_base_text(folders: tuple[Path, ...]) -> str:
    return " ".join(
        _plain(f.read_text(encoding="utf-8"))
        for folder in folders
        for f in sorted(folder.rglob("*"))
        if f.is_file() and f.suffix in {".md", ".html", ".txt"}
    )


def test_every_shipped_qa_set_is_checked() -> None:
    assert len(QA_FILES) == 66


@pytest.mark.parametrize("path", QA_FILES, ids=lambda p: str(p.relative_to(ROOT / "eval")))
def test_no_question_is_written_in_its_knowledge_base(path: Path) -> None:
    qa = load_qa(path)
    text = _knowledge_base_text(qa.knowledge_base or DEMO_KB)
    quoted = [
        item.id
        for item in qa.items
        if item.segment != "keyword" and _plain(item.question).rstrip("?") in text
    ]
    assert quoted == []
