"""``ragway train reranker --from-folder|--from-build``: one adapted artifact per tenant.

The documents come from the folders (``--from-folder``) or from the source
paths a build's manifest recorded (``--from-build``, re-read with the build's
own chunker settings and checked against its chunk checksum). Negatives are
mined from a retriever holding those documents: a private one started for a
folder, the running one (on that build id) for a build.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from ragway.kb import Defaults, Document, DocumentError
from ragway.v1 import retriever_pb2, retriever_pb2_grpc
from ragway_tools.channels import service_channel
from ragway_tools.commands.common import console, fail, progress_bar

EVAL_DEPTH = 5  # the held-out slice is reranked at the retriever's default rerank depth
MAX_HELDOUT = 60  # enough for a stable MRR, cheap enough to score every few steps


@dataclass(frozen=True)
class Source:
    documents: list[Document]
    record: dict[str, Any]  # what the artifact records about where the documents came from
    build: str  # the build to search for negatives; "" = the private retriever's live one


def from_folders(folders: Sequence[Path]) -> Source:
    from ragway_tools.build_client import read_sources

    read = read_sources(list(folders), Defaults())
    if read.errors:
        problems = "; ".join(f"{p}: {why}" for p, why in read.errors[:5])
        raise fail(f"cannot read the knowledge base: {problems}")
    return Source(read.documents, {"kind": "folder", "paths": [str(f) for f in folders]}, "")


def from_build(addr: str, name: str) -> Source:
    """The documents of a build, re-read from the source paths its manifest names."""
    from ragway_tools.build_client import read_sources, summarize

    try:
        with service_channel(addr) as channel:
            info = retriever_pb2_grpc.RetrieverStub(channel).ShowBuild(
                retriever_pb2.ShowBuildRequest(build=name), timeout=30
            )
    except grpc.RpcError as exc:
        raise fail(f"build {name!r} at {addr}: {exc.details()}", 1) from None
    manifest = json.loads(info.manifest_json or "{}")
    try:
        paths = [Path(p) for p in json.loads(manifest.get("source") or "{}")["paths"]]
    except (KeyError, TypeError, ValueError):
        raise fail(f"build {info.build_id} records no source paths to read") from None
    d = manifest.get("config", {}).get("defaults", {})
    max_words = manifest.get("config", {}).get("chunker", {}).get("max_words")
    defaults = Defaults(
        tenant=d.get("tenant"),
        groups=tuple(d.get("groups") or ()),
        **({"max_words": int(max_words)} if max_words else {}),
    )
    try:
        read = read_sources(paths, defaults)
    except DocumentError as exc:
        raise fail(str(exc)) from None
    recorded = (manifest.get("checksums") or {}).get("chunks_sha256")
    now = summarize(read)["checksums"]["chunks_sha256"]
    if recorded and recorded != now:
        console.print(
            f"[yellow]warning:[/] the sources of build {info.build_id} changed since it was "
            "built; training reads them as they are now"
        )
    record = {
        "kind": "build",
        "build_id": info.build_id,
        "paths": [str(p) for p in paths],
        "build_chunks_sha256": recorded,
        "read_chunks_sha256": now,
    }
    return Source(read.documents, record, info.build_id)


@contextlib.contextmanager
def private_retriever(documents: Sequence[Document]) -> Iterator[tuple[str, str]]:
    """A retriever on free ports holding ``documents``, gone afterwards: its address
    and its service token."""
    from ragway_tools.launcher import Stack, StackConfig
    from ragway_tools.loading import load_documents

    with tempfile.TemporaryDirectory(prefix="ragway-adapt-") as tmp:
        env = {"RAGWAY_INDEX_DIR": str(Path(tmp) / "index")}
        stack = Stack(StackConfig.on_free_ports(Path(tmp), extra_env=env))
        try:
            stack.start_service("retriever")
            load_documents(stack.config.retriever_addr, documents, token=stack.config.service_token)
            yield stack.config.retriever_addr, stack.config.service_token
        finally:
            stack.stop()


def adapt(
    source: Source,
    addr: str,
    config: Any,
    output: Path,
    *,
    token: str | None = None,
    tenants: Sequence[str],
    max_minutes: float,
    heldout_fraction: float,
    max_steps: int | None = None,
    start: tuple[Path, dict[str, Any]] | None = None,
) -> list[Path]:
    """Train one artifact per tenant; returns their folders.

    ``start``: a trained artifact's ``model/`` folder and its record
    (``reranker.artifact_base``) to start from instead of the packaged MiniLM.
    """
    from ragway_tools.training import adapt as adaptation

    corpora = adaptation.tenant_corpora(source.documents)
    unknown = sorted(set(tenants) - set(corpora))
    if unknown:
        raise fail(f"no current documents of tenant(s) {unknown}; found {sorted(corpora)}")
    limits = Limits(max_minutes * 60, max_steps, heldout_fraction)
    with service_channel(addr, token) as channel:
        stub = retriever_pb2_grpc.RetrieverStub(channel)
        return [
            train_tenant(stub, corpora[t], source, config, output, limits, start)
            for t in (list(tenants) or sorted(corpora))
        ]


@dataclass(frozen=True)
class Limits:
    max_seconds: float
    max_steps: int | None
    heldout_fraction: float


def train_tenant(
    stub: retriever_pb2_grpc.RetrieverStub,
    corpus: Any,
    source: Source,
    config: Any,
    output: Path,
    limits: Limits,
    start: tuple[Path, dict[str, Any]] | None = None,
) -> Path:
    """Pseudo-queries, negatives, early-stopped training and the artifact of one tenant."""
    from ragway_tools.training import adapt as adaptation
    from ragway_tools.training import pseudo
    from ragway_tools.training import reranker as trainer

    tenant = corpus.tenant
    queries = pseudo.generate(list(corpus.chunks.values()))
    train_q, heldout_q = pseudo.split(queries, limits.heldout_fraction, salt=str(config.seed))
    progress = progress_bar()
    with progress:
        task = progress.add_task(f"{tenant} negatives", total=len(queries))
        mined = adaptation.mine(
            stub,
            corpus,
            queries,
            depth=config.negatives_depth,
            build=source.build,
            on_query=lambda: progress.advance(task),
        )
        groups = adaptation.build_groups(corpus, train_q, mined, seed=config.seed)
        items = adaptation.heldout_items(corpus, heldout_q, mined, depth=EVAL_DEPTH)
        items = items[:MAX_HELDOUT]
        if not groups or not items:
            raise fail(f"tenant {tenant}: too few chunks to train on ({len(queries)} queries)")
        fused = adaptation.fused_mrr(items)
        per_step = config.queries_per_step
        steps = config.epochs * ((len(groups) + per_step - 1) // per_step)
        steps = min(steps, limits.max_steps or steps)
        bar = progress.add_task(f"{tenant} training", total=steps)

        def on_step(step: int, loss: float) -> None:
            progress.update(bar, completed=step, description=f"{tenant} loss {loss:.3f}")
            if not console.is_terminal and step % 25 == 0:  # a log gets lines, not a bar
                console.log(f"{tenant}: step {step}/{steps} loss {loss:.3f}")

        def on_eval(step: int, mrr: float) -> None:
            progress.console.log(
                f"{tenant}: step {step}: held-out MRR@{EVAL_DEPTH} {mrr:.3f} "
                f"(fused order {fused:.3f})"
            )

        stopping = trainer.EarlyStopping(
            evaluate=lambda score: adaptation.reranked_mrr(items, score),
            every=20,
            patience=3,
            max_seconds=limits.max_seconds,
            max_steps=limits.max_steps,
        )
        base = start[0] if start else None
        result = trainer.train(
            groups, config, base=base, on_step=on_step, stopping=stopping, on_eval=on_eval
        )
    checksum, data = adaptation.data_record(
        corpus,
        source.record,
        train_q,
        heldout_q,
        heldout_fraction=limits.heldout_fraction,
        negatives_depth=config.negatives_depth,
        foreign_hits=mined.foreign_hits,
    )
    best = max((m for _, m in result.evaluations), default=0.0)
    extra = {
        "tenant": tenant,
        "heldout": {
            "items": len(items),
            "depth": EVAL_DEPTH,
            "fused_mrr": round(fused, 4),
            "best_mrr": round(best, 4),
        },
        **({"init_from": start[1]} if start else {}),
    }
    with console.status(f"{tenant}: saving the artifact and exporting ONNX…"):
        folder = trainer.write_artifact(
            result, config, output, checksum=checksum, data=data, base=base,
            prefix=f"reranker-{tenant}", extra=extra,
        )  # fmt: skip
    console.print(
        f"{tenant}: {len(groups)} groups from {len(queries)} pseudo-queries, {result.steps} "
        f"steps in {result.seconds:.0f} s (best at step {result.best_step}); held-out "
        f"MRR@{EVAL_DEPTH} {best:.3f} vs fused {fused:.3f}; config {dataclasses.asdict(config)}"
    )
    console.print(f"artifact: {folder}")
    return folder
