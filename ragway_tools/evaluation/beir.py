"""BEIR-format data sets: corpus.jsonl, queries.jsonl, qrels/<split>.tsv."""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path


class DatasetError(ValueError):
    """A data set file that is missing or malformed, with the file and line."""


@dataclass(frozen=True)
class Document:
    doc_id: str
    title: str
    text: str


@dataclass
class Dataset:
    name: str
    corpus: dict[str, Document]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    segments: dict[str, str] = field(default_factory=dict)  # query id -> segment
    checksum: str = ""


def _jsonl(path: Path) -> list[dict[str, object]]:
    if not path.is_file():
        raise DatasetError(f"{path}: not found")
    rows = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{n}: invalid JSON: {exc.msg}") from exc
            if not isinstance(row, dict) or "_id" not in row:
                raise DatasetError(f"{path}:{n}: each line needs an object with an '_id'")
            rows.append(row)
    return rows


def load(folder: Path, split: str | None = None) -> Dataset:
    """Read a BEIR folder; qrels from ``qrels/<split>.tsv`` or every file in qrels/."""
    digest = hashlib.sha256()
    corpus_path = folder / "corpus.jsonl"
    for path in (corpus_path, folder / "queries.jsonl"):
        if path.is_file():
            digest.update(path.read_bytes())
    corpus = {
        str(r["_id"]): Document(str(r["_id"]), str(r.get("title") or ""), str(r.get("text") or ""))
        for r in _jsonl(corpus_path)
    }
    query_rows = _jsonl(folder / "queries.jsonl")
    queries = {str(r["_id"]): str(r.get("text") or "") for r in query_rows}
    segments = {
        str(r["_id"]): str(r["segment"]) for r in query_rows if isinstance(r.get("segment"), str)
    }
    qrel_files = (
        [folder / "qrels" / f"{split}.tsv"] if split else sorted((folder / "qrels").glob("*.tsv"))
    )
    if not qrel_files or not all(p.is_file() for p in qrel_files):
        raise DatasetError(f"{folder / 'qrels'}: no qrels file{' for ' + split if split else ''}")
    qrels: dict[str, dict[str, int]] = {}
    for path in qrel_files:
        digest.update(path.read_bytes())
        with path.open(encoding="utf-8") as fh:
            reader = csv.reader(fh, delimiter="\t")
            for n, row in enumerate(reader, start=1):
                if n == 1 and row and row[0] == "query-id":
                    continue
                if len(row) != 3:
                    raise DatasetError(f"{path}:{n}: expected 'query-id<TAB>corpus-id<TAB>score'")
                try:
                    grade = int(row[2])
                except ValueError as exc:
                    raise DatasetError(f"{path}:{n}: score {row[2]!r} is not an integer") from exc
                qrels.setdefault(row[0], {})[row[1]] = grade
    missing = sorted(q for q in qrels if q not in queries)
    if missing:
        raise DatasetError(
            f"{folder}: qrels name queries missing from queries.jsonl: {missing[:5]}"
        )
    return Dataset(folder.name, corpus, queries, qrels, segments, digest.hexdigest())


def split_queries(
    query_ids: list[str], seed: int = 2026, train_fraction: float = 0.8
) -> dict[str, list[str]]:
    """A fixed split by hashing each id with the seed: stable under reordering and additions."""
    order = sorted(query_ids, key=lambda q: hashlib.sha256(f"{seed}:{q}".encode()).hexdigest())
    cut = round(len(order) * train_fraction)
    return {"train": sorted(order[:cut]), "validation": sorted(order[cut:])}
