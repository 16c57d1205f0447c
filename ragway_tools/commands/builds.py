"""``ragway builds ...`` and ``ragway ingest PATH...``: knowledge builds from the terminal."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import grpc
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ragway.build_targets import target_builds
from ragway.kb import Defaults, Document, DocumentError
from ragway_tools import build_client as b

builds_app = typer.Typer(
    help="Knowledge builds: create, list, show, promote, rollback, delete.", no_args_is_help=True
)
console = Console()
err = Console(stderr=True)

Retriever = Annotated[
    str | None, typer.Option(help="Retriever address (default: RAGWAY_RETRIEVER_ADDR)")
]
Tenant = Annotated[
    str | None, typer.Option(help="Tenant for documents that do not name one (else required)")
]
Groups = Annotated[
    list[str] | None,
    typer.Option("--groups", help="Access groups for documents that set none (repeatable)"),
]


def _settings() -> b.BuildsSettings:
    return b.BuildsSettings()


@contextmanager
def _rpc_errors(addr: str) -> Iterator[None]:
    """gRPC failures as one line naming the retriever and its reason, exit status 1."""
    try:
        yield
    except grpc.RpcError as exc:
        code = exc.code()
        where = f"the retriever at {addr}"
        if code == grpc.StatusCode.UNAVAILABLE:
            err.print(f"[bold red]error:[/] {where} is unreachable (is 'ragway up' running?)")
        else:
            err.print(f"[bold red]error:[/] {where} refused: {code.name}: {exc.details()}")
        raise typer.Exit(1) from None


def _progress(label: str) -> Progress:
    return Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )


def _errors_table(read: b.SourceRead) -> None:
    # One line per file, never wrapped, so that each error can be found with grep.
    for path, reason in read.errors:
        err.print(f"[yellow]failed[/] {path}: {reason}", soft_wrap=True, highlight=False)


def _when(unix: object) -> str:
    if not isinstance(unix, int | float) or not unix:
        return ""
    return dt.datetime.fromtimestamp(unix, dt.UTC).strftime("%Y-%m-%d %H:%M:%SZ")


@builds_app.command("create")
def builds_create(
    source: Annotated[
        list[Path],
        typer.Option("--from", help="Source folder or file (repeatable), or a build manifest"),
    ],
    build_id: Annotated[str, typer.Option(help="Build id (default: generated)")] = "",
    tenant: Tenant = None,
    groups: Groups = None,
    candidate: Annotated[
        bool, typer.Option(help="Alias it 'candidate' so webhooks reach it while it fills")
    ] = True,
    retriever: Retriever = None,
) -> None:
    """Fill a new build from sources (or from a manifest's sources) and seal it."""
    addr = retriever or _settings().retriever_addr
    paths = source
    defaults = Defaults(tenant=tenant, groups=tuple(groups or ()))
    if len(source) == 1 and source[0].is_file() and source[0].suffix == ".json":
        try:
            paths, recorded = b.manifest_sources(source[0])
        except DocumentError as exc:
            err.print(f"[bold red]error:[/] {exc}")
            raise typer.Exit(2) from None
        defaults = Defaults(
            tenant=tenant or recorded.tenant,
            groups=tuple(groups or recorded.groups),
            max_words=recorded.max_words,
        )
    with _rpc_errors(addr), _progress("Building") as progress:
        task = progress.add_task("build", total=None)
        created = b.create_build(
            addr,
            paths,
            defaults,
            build_id=build_id,
            candidate=candidate,
            on_document=lambda _: progress.advance(task),
        )
    manifest = json.loads(created.info.manifest_json)
    table = Table(title=f"Build {created.info.build_id}", show_edge=False)
    for col in ("documents", "chunks", "duplicate rate", "skipped files", "aliases"):
        table.add_column(col, justify="right")
    table.add_row(
        str(manifest["documents"]),
        str(manifest["chunks"]),
        f"{manifest['duplicate_rate']:.1%}",
        str(len(created.read.errors)),
        ", ".join(created.info.aliases) or "-",
    )
    console.print(table)
    _errors_table(created.read)
    console.print(f"next: ragway builds promote {created.info.build_id}")


@builds_app.command("list")
def builds_list(retriever: Retriever = None) -> None:
    """Every build, newest first, with its aliases and counts."""
    addr = retriever or _settings().retriever_addr
    with _rpc_errors(addr):
        infos = b.list_builds(addr)
    table = Table(show_edge=False)
    for col in ("build", "aliases", "status", "documents", "chunks", "created", "promoted"):
        table.add_column(col)
    for info in infos:
        m = json.loads(info.manifest_json)
        table.add_row(
            info.build_id,
            ", ".join(info.aliases),
            str(m.get("status", "")),
            str(m.get("documents", "")),
            str(m.get("chunks", "")),
            _when(m.get("created_at")),
            _when(m.get("promoted_at")),
        )
    console.print(table)


@builds_app.command("show")
def builds_show(
    build: Annotated[str, typer.Argument(help="Build id or alias")] = "live",
    retriever: Retriever = None,
) -> None:
    """A build's manifest and the chunk counts its indexes hold now."""
    addr = retriever or _settings().retriever_addr
    with _rpc_errors(addr):
        info = b.show_build(addr, build)
    manifest = json.loads(info.manifest_json)
    console.print_json(
        data={
            "build_id": info.build_id,
            "aliases": list(info.aliases),
            "index": {"sparse_chunks": info.sparse_count, "dense_chunks": info.dense_count},
            "manifest": manifest,
        }
    )


@builds_app.command("promote")
def builds_promote(
    build_id: Annotated[str, typer.Argument(help="The build to make live")],
    qa_set: Annotated[
        Path | None, typer.Option(help="Promotion check QA set (default: RAGWAY_GATE_QA_SET)")
    ] = None,
    min_hit_rate: Annotated[
        float | None, typer.Option(help="Promotion check threshold, HitRate@k")
    ] = None,
    skip_gate: Annotated[
        bool, typer.Option(help="Promote without the promotion check (recorded)")
    ] = False,
    retriever: Retriever = None,
) -> None:
    """Check the build (promotion check, counts), then point 'live' at it atomically."""
    s = _settings()
    addr = retriever or s.retriever_addr
    with _rpc_errors(addr):
        live = b.live_build(addr)
        check = None
        if not skip_gate:
            try:
                check = b.run_promotion_check(
                    addr,
                    build_id,
                    qa_set or s.gate_qa_set,
                    top_k=s.gate_top_k,
                    min_hit_rate=s.gate_min_hit_rate if min_hit_rate is None else min_hit_rate,
                )
            except b.PromotionCheckError as exc:
                err.print(f"[bold red]error:[/] {exc}")
                raise typer.Exit(2) from None
            verdict = "[green]passed[/]" if check.passed else "[bold red]failed[/]"
            console.print(
                f"promotion check {verdict}: HitRate@{check.top_k} {check.hit_rate:.3f} "
                f"({check.hits}/{check.total}; threshold {check.min_hit_rate}) on {check.qa_set}"
            )
            if not check.passed:
                for q in check.misses[:10]:
                    err.print(f"  missed: {q}")
                err.print(f"[bold red]not promoted:[/] live stays {live}")
                raise typer.Exit(1)
        change = b.promote(addr, build_id, check, expected_live=live)
    console.print(f"live: {change.previous_build_id} → [bold]{change.build_id}[/]")


@builds_app.command("rollback")
def builds_rollback(retriever: Retriever = None) -> None:
    """Point 'live' back at the build it named before the last promotion."""
    addr = retriever or _settings().retriever_addr
    with _rpc_errors(addr):
        change = b.rollback(addr)
    console.print(f"live: {change.previous_build_id} → [bold]{change.build_id}[/]")


@builds_app.command("delete")
def builds_delete(
    build_id: Annotated[str, typer.Argument(help="A build no alias or rollback step names")],
    retriever: Retriever = None,
) -> None:
    """Remove a build's indexes and manifest."""
    addr = retriever or _settings().retriever_addr
    with _rpc_errors(addr):
        b.delete_build(addr, build_id)
    console.print(f"deleted {build_id}")


def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files and folders (md, html, txt, pdf)")],
    tenant: Tenant = None,
    groups: Groups = None,
    build: Annotated[
        str, typer.Option(help="One build id or alias (default: live and the candidate)")
    ] = "",
    retriever: Retriever = None,
) -> None:
    """Parse files and folders and write them into the live build (and the candidate)."""
    from ragway.v1 import retriever_pb2 as pb
    from ragway.v1 import retriever_pb2_grpc as pb_grpc
    from ragway_tools.channels import service_channel
    from ragway_tools.loading import load_documents

    addr = retriever or _settings().retriever_addr
    defaults = Defaults(tenant=tenant, groups=tuple(groups or ()))
    with _progress("Reading") as progress:
        task = progress.add_task("read", total=None)
        read = b.read_sources(
            paths,
            defaults,
            on_files=lambda n: progress.update(task, total=n),
            on_file=lambda _: progress.advance(task),
        )
    with _rpc_errors(addr):
        if build:
            targets = [build]
        else:
            with service_channel(addr) as ch:
                targets = target_builds(pb_grpc.RetrieverStub(ch))
        with _progress("Indexing") as progress:
            task = progress.add_task("index", total=len(read.documents) * len(targets))

            def done(doc: Document) -> None:
                progress.advance(task)

            for target in targets:
                load_documents(
                    addr,
                    read.documents,
                    build=target,
                    origin=pb.WRITE_ORIGIN_INCREMENTAL,
                    on_document=done,
                )
    table = Table(title="Ingested", show_edge=False)
    for col in ("builds", "documents", "chunks", "duplicate rate", "failed files"):
        table.add_column(col, justify="right")
    summary = b.summarize(read)
    table.add_row(
        ", ".join(targets),
        str(summary["documents"]),
        str(summary["chunks"]),
        f"{summary['duplicate_rate']:.1%}",
        str(len(read.errors)),
    )
    console.print(table)
    _errors_table(read)
    if read.errors:  # the good files are in; the status still tells scripts
        raise typer.Exit(1)
