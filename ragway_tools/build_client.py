"""Knowledge builds from the client side: read sources, fill a build, check, promote.

The retriever owns the indexes; everything here talks to it over gRPC
(CreateBuild, Upsert/Delete with origin BULK, SealBuild, Search on the build id,
PromoteBuild, RollbackBuild, DeleteBuild). The CLI (ragway.cli_builds) and the
tests call these functions.

The *promotion check* here (HitRate@k of a build on a QA set, run before
``PromoteBuild``) is not the *release gate* of ``ragway eval gate``
(ragway_tools/evaluation/release_gate.py), which checks evaluation reports in CI.
Its settings keep their ``gate_*`` names so ``RAGWAY_GATE_*`` variables still work.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field

from ragway.chunking import duplicate_rate, text_digest
from ragway.kb import Defaults, Document, DocumentError, discover, parse_document
from ragway.settings import ServiceSettings
from ragway.v1 import retriever_pb2 as pb
from ragway.v1 import retriever_pb2_grpc as pb_grpc
from ragway_tools.channels import service_channel
from ragway_tools.loading import LoadReport, load_documents

PARSER_VERSION = "ragway.parsing/1"
CHUNKER_VERSION = "ragway.chunking/1"


class BuildsSettings(ServiceSettings):
    """What `ragway builds` and `ragway ingest` read from RAGWAY_* variables."""

    retriever_addr: str = "127.0.0.1:7101"
    # The promotion check a build must pass before it may become live.
    gate_qa_set: Path = Path("config/gate-qa.yaml")
    gate_top_k: int = Field(default=5, ge=1, le=100)
    gate_min_hit_rate: float = Field(default=0.8, ge=0.0, le=1.0)


class PromotionCheckError(ValueError):
    """The QA set of the promotion check is missing or malformed."""


@dataclass
class SourceRead:
    """Documents parsed from files, and the files that could not be."""

    documents: list[Document] = field(default_factory=list)
    errors: list[tuple[Path, str]] = field(default_factory=list)

    @property
    def chunks(self) -> int:
        return sum(len(d.chunks) for d in self.documents)


def find_files(paths: Sequence[Path]) -> tuple[list[tuple[Path, Path]], list[tuple[Path, str]]]:
    """(file, root) pairs under ``paths``, and the paths that do not exist."""
    files: list[tuple[Path, Path]] = []
    missing: list[tuple[Path, str]] = []
    for p in paths:
        try:
            files.extend(discover([p], suffixes=None))
        except DocumentError as exc:
            missing.append((p, str(exc).removeprefix(f"{p}: ")))
    return files, missing


def read_sources(
    paths: Sequence[Path],
    defaults: Defaults,
    *,
    on_file: Callable[[Path], None] | None = None,
    on_files: Callable[[int], None] | None = None,
) -> SourceRead:
    """Parse every file under ``paths``; a bad file is recorded and the rest continue."""
    files, missing = find_files(paths)
    out = SourceRead(errors=missing)
    if on_files is not None:
        on_files(len(files))
    seen: dict[tuple[str, str], Path] = {}
    for path, root in files:
        try:
            doc = parse_document(path, root, defaults)
        except DocumentError as exc:
            out.errors.append((path, str(exc).removeprefix(f"{path}: ")))
        else:
            key = (doc.tenant, doc.document_id)
            if key in seen:
                out.errors.append((path, f"document id {doc.document_id!r} repeats {seen[key]}"))
            else:
                seen[key] = path
                out.documents.append(doc)
        if on_file is not None:
            on_file(path)
    return out


def chunker_config(defaults: Defaults) -> dict[str, Any]:
    return {
        "parser": PARSER_VERSION,
        "chunker": {"version": CHUNKER_VERSION, "max_words": defaults.max_words},
        "defaults": {"tenant": defaults.tenant, "groups": list(defaults.groups)},
    }


def summarize(read: SourceRead) -> dict[str, Any]:
    """Counts and checksums recorded in a build's manifest."""
    docs = sorted(read.documents, key=lambda d: (d.tenant, d.document_id))
    doc_sum = hashlib.sha256()
    chunk_sum = hashlib.sha256()
    for d in docs:
        doc_sum.update(f"{d.tenant}\x1f{d.document_id}\x1f{d.checksum}\n".encode())
        for c in sorted(d.chunks, key=lambda c: c.chunk_id):
            chunk_sum.update(f"{c.chunk_id}\x1f{text_digest(c.text)}\n".encode())
    formats: dict[str, int] = {}
    for d in docs:
        formats[d.source_format] = formats.get(d.source_format, 0) + 1
    return {
        "documents": len(docs),
        "chunks": read.chunks,
        "formats": formats,
        "duplicate_rate": round(duplicate_rate(c.text for d in docs for c in d.chunks), 4),
        "checksums": {
            "documents_sha256": doc_sum.hexdigest(),
            "chunks_sha256": chunk_sum.hexdigest(),
        },
        "skipped_files": [f"{p}: {reason}" for p, reason in read.errors],
    }


@dataclass
class Created:
    info: pb.BuildInfo
    read: SourceRead
    load: LoadReport


def create_build(
    addr: str,
    paths: Sequence[Path],
    defaults: Defaults,
    *,
    build_id: str = "",
    candidate: bool = True,
    on_file: Callable[[Path], None] | None = None,
    on_document: Callable[[Document], None] | None = None,
    token: str | None = None,
) -> Created:
    """Read the sources, fill a new build through the retriever and seal it.

    The build is the ``candidate`` first (unless ``candidate`` is False), so
    webhook updates that arrive while it fills reach it too; the bulk load then
    skips the documents they touched, and promotion loses none of them.
    """
    read = read_sources(paths, defaults, on_file=on_file)
    source = {"paths": [str(p.resolve()) for p in paths]}
    with service_channel(addr, token) as ch:
        stub = pb_grpc.RetrieverStub(ch)
        info = stub.CreateBuild(
            pb.CreateBuildRequest(
                build_id=build_id,
                config_json=json.dumps(chunker_config(defaults)),
                source=json.dumps(source),
                as_candidate=candidate,
            ),
            timeout=30,
        )
        load = load_documents(
            addr,
            read.documents,
            build=info.build_id,
            origin=pb.WRITE_ORIGIN_BULK,
            on_document=on_document,
            token=token,
        )
        shown = stub.ShowBuild(pb.ShowBuildRequest(build=info.build_id), timeout=60)
        summary = summarize(read)
        # Webhooks may have changed documents meanwhile: seal what the build holds.
        summary["chunks"] = shown.sparse_count
        summary["bulk_skipped_chunks"] = load.skipped_chunks
        sealed = stub.SealBuild(
            pb.SealBuildRequest(build_id=info.build_id, summary_json=json.dumps(summary)),
            timeout=60,
        )
    return Created(info=sealed, read=read, load=load)


def manifest_sources(path: Path) -> tuple[list[Path], Defaults]:
    """The source folders and chunker defaults a build manifest recorded."""
    try:
        manifest = json.loads(path.read_text())
        source = json.loads(manifest.get("source") or "{}")
        config = manifest.get("config", {})
        paths = [Path(p) for p in source["paths"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DocumentError(f"{path}: not a build manifest with source paths ({exc})") from None
    d = config.get("defaults", {})
    max_words = config.get("chunker", {}).get("max_words")
    defaults = Defaults(
        tenant=d.get("tenant"),
        groups=tuple(d.get("groups") or ()),
        **({"max_words": int(max_words)} if max_words else {}),
    )
    return paths, defaults


@dataclass
class PromotionCheckItem:
    question: str
    documents: tuple[str, ...]
    tenant: str
    groups: tuple[str, ...]


@dataclass
class PromotionCheckResult:
    qa_set: str
    top_k: int
    min_hit_rate: float
    hits: int
    total: int
    misses: list[str]
    seconds: float

    @property
    def hit_rate(self) -> float:
        return self.hits / self.total if self.total else 0.0

    @property
    def passed(self) -> bool:
        return self.total > 0 and self.hit_rate >= self.min_hit_rate

    def as_json(self) -> dict[str, Any]:
        return {
            "qa_set": self.qa_set,
            "top_k": self.top_k,
            "min_hit_rate": self.min_hit_rate,
            "hit_rate": round(self.hit_rate, 4),
            "hits": self.hits,
            "total": self.total,
            "passed": self.passed,
            "misses": self.misses,
        }


def load_promotion_qa_set(path: Path) -> list[PromotionCheckItem]:
    """Items of a promotion check QA set (format: config/gate-qa.yaml)."""
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise PromotionCheckError(f"cannot read the promotion check QA set {path}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise PromotionCheckError(f"{path}: expected a mapping with 'items'")
    tenant = str(data.get("tenant", ""))
    groups = tuple(data.get("groups") or ())
    items = []
    for n, raw in enumerate(data["items"], start=1):
        if not isinstance(raw, dict) or not raw.get("question") or not raw.get("document"):
            raise PromotionCheckError(f"{path}: item {n} needs 'question' and 'document'")
        docs = raw["document"]
        items.append(
            PromotionCheckItem(
                question=str(raw["question"]),
                documents=tuple(docs) if isinstance(docs, list) else (str(docs),),
                tenant=str(raw.get("tenant", tenant)),
                groups=tuple(raw.get("groups") or groups),
            )
        )
    if not items:
        raise PromotionCheckError(f"{path}: no items")
    return items


def run_promotion_check(
    addr: str,
    build_id: str,
    qa_set: Path,
    *,
    top_k: int,
    min_hit_rate: float,
    token: str | None = None,
) -> PromotionCheckResult:
    """HitRate@k of the build on the QA set: a gold document in the top k."""
    items = load_promotion_qa_set(qa_set)
    started = time.perf_counter()
    hits = 0
    misses = []
    with service_channel(addr, token) as ch:
        stub = pb_grpc.RetrieverStub(ch)
        for item in items:
            reply = stub.Search(
                pb.SearchRequest(
                    query=item.question,
                    tenant=item.tenant,
                    access_groups=item.groups,
                    top_k=top_k,
                    build=build_id,
                    budget_ms=10_000,
                ),
                timeout=30,
            )
            if any(h.document_id in item.documents for h in reply.hits):
                hits += 1
            else:
                misses.append(item.question)
    return PromotionCheckResult(
        qa_set=str(qa_set),
        top_k=top_k,
        min_hit_rate=min_hit_rate,
        hits=hits,
        total=len(items),
        misses=misses,
        seconds=time.perf_counter() - started,
    )


def live_build(addr: str, *, token: str | None = None) -> str:
    with service_channel(addr, token) as ch:
        stub = pb_grpc.RetrieverStub(ch)
        reply: pb.DescribeBuildResponse = stub.DescribeBuild(
            pb.DescribeBuildRequest(build="live"), timeout=30
        )
        return reply.build_id


def promote(
    addr: str,
    build_id: str,
    check: PromotionCheckResult | None,
    expected_live: str,
    *,
    token: str | None = None,
) -> pb.AliasChange:
    """Point ``live`` at the build; ``check`` (None: skipped) is recorded in its manifest."""
    with service_channel(addr, token) as ch:
        stub = pb_grpc.RetrieverStub(ch)
        change: pb.AliasChange = stub.PromoteBuild(
            pb.PromoteBuildRequest(
                build_id=build_id,
                expected_live=expected_live,
                gate_json=json.dumps(check.as_json() if check else {"skipped": True}),
            ),
            timeout=60,
        )
        return change


def rollback(addr: str, *, token: str | None = None) -> pb.AliasChange:
    with service_channel(addr, token) as ch:
        change: pb.AliasChange = pb_grpc.RetrieverStub(ch).RollbackBuild(
            pb.RollbackBuildRequest(), timeout=60
        )
        return change


def list_builds(addr: str, *, token: str | None = None) -> list[pb.BuildInfo]:
    with service_channel(addr, token) as ch:
        stub = pb_grpc.RetrieverStub(ch)
        return list(stub.ListBuilds(pb.ListBuildsRequest(), timeout=30).builds)


def show_build(addr: str, name: str, *, token: str | None = None) -> pb.BuildInfo:
    with service_channel(addr, token) as ch:
        info: pb.BuildInfo = pb_grpc.RetrieverStub(ch).ShowBuild(
            pb.ShowBuildRequest(build=name), timeout=60
        )
        return info


def delete_build(addr: str, build_id: str, *, token: str | None = None) -> None:
    with service_channel(addr, token) as ch:
        pb_grpc.RetrieverStub(ch).DeleteBuild(pb.DeleteBuildRequest(build_id=build_id), timeout=60)
