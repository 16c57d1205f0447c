"""The ``ragway`` command: start the stack, load knowledge, ask, export the API spec."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from enum import StrEnum
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ragway_tools.commands.builds import builds_app, ingest
from ragway_tools.commands.canary import canary_app, paths_app
from ragway_tools.commands.congruence import eval_congruence
from ragway_tools.commands.evaluate import eval_app
from ragway_tools.commands.feedback import feedback_app
from ragway_tools.commands.opensearch import opensearch_node
from ragway_tools.commands.trace import trace
from ragway_tools.commands.train import train_app

app = typer.Typer(
    help="ragway: grounded, cited answers from your knowledge base.", no_args_is_help=True
)
kb_app = typer.Typer(help="Load documents into a knowledge build.", no_args_is_help=True)
app.add_typer(kb_app, name="kb")
app.add_typer(eval_app, name="eval")
app.add_typer(train_app, name="train")
app.add_typer(builds_app, name="builds")
app.add_typer(paths_app, name="paths")
app.add_typer(canary_app, name="canary")
app.add_typer(feedback_app, name="feedback")
app.command("ingest")(ingest)
app.command("trace")(trace)
console = Console()
err = Console(stderr=True)

DEMO_KEYS = {
    "rgw-demo-public-key": "public",
    "rgw-demo-sre-key": "public + sre",
    "rgw-demo-admin-key": "public; admin: paths, canary",
}


class GeneratorChoice(StrEnum):
    extractive = "extractive"
    llama = "llama"
    openai = "openai"


class _Stop(Exception):
    pass


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop


def _still_stopping(signum: int, frame: FrameType | None) -> None:
    err.print("still stopping the parts (each has a bounded grace period)…")


@app.command()
def up(
    port: Annotated[int, typer.Option(help="Gateway HTTP port")] = 8000,
    redis_port: Annotated[int, typer.Option(help="Redis-protocol server port")] = 6390,
    retriever_port: Annotated[int, typer.Option(help="Retriever gRPC port")] = 7101,
    generator_port: Annotated[int, typer.Option(help="Generator gRPC port")] = 7102,
    ingest_port: Annotated[int, typer.Option(help="Ingest webhook API port")] = 7103,
    data_dir: Annotated[Path, typer.Option(help="Redis AOF, indexes and logs")] = Path("var"),
    kb: Annotated[list[Path] | None, typer.Option(help="Knowledge folders to load")] = None,
    api_keys: Annotated[
        Path | None,
        typer.Option(
            help="API key file for the gateway (format: config/api-keys.yaml); "
            "default config/api-keys.yaml with the demo keys"
        ),
    ] = None,
    generator: Annotated[
        GeneratorChoice | None,
        typer.Option(
            help="Generator backend: extractive, llama (the packaged local model) or openai "
            "(RAGWAY_LLM_* settings); default RAGWAY_GENERATOR_BACKEND, else extractive"
        ),
    ] = None,
    telegram: Annotated[
        bool,
        typer.Option(
            help="Also start the Telegram bot (RAGWAY_TELEGRAM_TOKEN_FILE and "
            "RAGWAY_TELEGRAM_ALLOWLIST_FILE; docs/channels.md)"
        ),
    ] = False,
    console_flag: Annotated[
        bool,
        typer.Option(
            "--console",
            help="Serve the Gradio evidence console at /console instead of the static one "
            "(log in with an API key; docs/channels.md)",
        ),
    ] = False,
) -> None:
    """Start Redis, retriever, generator, gateway, ingest API and worker; load the demo KB."""
    from ragway_tools.demo import DEMO_KB
    from ragway_tools.launcher import (
        LaunchError,
        Stack,
        StackConfig,
        ensure_llama_backend,
        load_api_keys,
    )

    started = time.monotonic()
    config = StackConfig(
        data_dir=data_dir,
        redis_port=redis_port,
        retriever_port=retriever_port,
        generator_port=generator_port,
        gateway_port=port,
        ingest_port=ingest_port,
        extra_env=({"RAGWAY_GENERATOR_BACKEND": generator.value} if generator else {})
        | ({"RAGWAY_CONSOLE": "gradio"} if console_flag else {}),
        api_keys_file=api_keys or StackConfig.api_keys_file,
    )
    stack = Stack(config)
    backend = generator.value if generator else os.environ.get("RAGWAY_GENERATOR_BACKEND")
    try:
        # Before anything starts: a bad key file or a missing backend fails at once.
        keys = load_api_keys(config.api_keys_file)
        if telegram:
            _check_telegram()
        if console_flag:
            _check_console()
        if backend == GeneratorChoice.llama:
            ensure_llama_backend(lambda line: console.print(line, markup=False, highlight=False))
    except LaunchError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(1) from None
    started = time.monotonic()  # "ready in": the stack's start, not a first llama build
    # Both signals, explicitly: a shell starting us in the background ignores
    # SIGINT for its children, and Python would then never raise KeyboardInterrupt.
    signal.signal(signal.SIGTERM, _raise_stop)
    signal.signal(signal.SIGINT, _raise_stop)
    try:
        with console.status("Starting Redis server, retriever and generator…"):
            stack.start_backends()
        _load(
            config.retriever_addr,
            kb or list(DEMO_KB),
            tenant="demo",
            groups=["public"],
            token=config.service_token,
        )
        with console.status("Starting gateway, ingest API and worker…"):
            stack.start_gateway()
            stack.start_ingest()
        if telegram:
            with console.status("Starting the Telegram bot…"):
                stack.start_telegram()
        ready_s = time.monotonic() - started
        console.print(f"\n[bold green]ragway is ready[/] in {ready_s:.1f} s")
        console.print(f"  Open [bold]{config.gateway_url}/[/] and ask a question.")
        login = " (Gradio: log in with a key id and the key)" if console_flag else ""
        console.print(f"  Evidence console: {config.gateway_url}/console{login} (docs/channels.md)")
        console.print(f"  API docs: {config.gateway_url}/docs   Logs: {stack.logs_dir}/")
        if api_keys is None:
            for key, groups in DEMO_KEYS.items():
                console.print(f"  Demo API key [cyan]{key}[/] (tenant demo; groups {groups})")
        else:
            ids = ", ".join(k.id for k in keys)
            console.print(f"  API keys from {config.api_keys_file}: {ids}")
        console.print(
            f"  Webhooks: POST {config.ingest_url}/v1/webhooks/documents "
            f"(demo secret {config.webhook_secret}; docs/ingestion.md)"
        )
        console.print(
            f"  Service token: {config.service_token_file} (for the ragway commands: "
            f"export RAGWAY_SERVICE_TOKEN_FILE={config.service_token_file})"
        )
        if telegram:
            console.print(f"  Telegram bot: answering allow-listed users (log {stack.logs_dir}/)")
        console.print("  Press Ctrl-C to stop.\n")
        while True:
            dead = stack.dead()
            if dead:
                names = ", ".join(
                    f"{p.name} (exit {p.process.returncode}, log {p.log_path})" for p in dead
                )
                raise LaunchError(f"stopped unexpectedly: {names}")
            time.sleep(0.5)
    except _Stop:
        console.print("\nStopping…")
    except LaunchError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(1) from None
    finally:
        # A second Ctrl-C while the parts stop must not abandon them half-stopped
        # (or print a traceback): stopping is bounded by each part's grace period.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, _still_stopping)
        stack.stop()
        console.print("All parts stopped.")


def _check_telegram() -> None:
    """The bot's token file and allow-list, checked before any part starts."""
    from ragway_tools.launcher import LaunchError
    from services.telegram.allowlist import AllowList
    from services.telegram.settings import TelegramSettings

    settings = TelegramSettings()
    try:
        settings.token()  # read to check it; the bot reads it again, nothing keeps it here
        AllowList.from_file(settings.telegram_allowlist_file)
    except ValueError as exc:
        raise LaunchError(f"--telegram: {exc} (docs/channels.md)") from None


def _check_console() -> None:
    """Gradio is installed (the console extra); found, not imported: the gateway does that."""
    import importlib.util

    from ragway_tools.launcher import LaunchError

    if importlib.util.find_spec("gradio") is None:
        raise LaunchError(
            "--console: gradio is not installed: install the console extra with "
            "make install, which installs requirements.lock (docs/channels.md)"
        )


@kb_app.command("load")
def kb_load(
    paths: Annotated[list[Path], typer.Argument(help="Markdown files or folders")],
    retriever: Annotated[str, typer.Option(help="Retriever address")] = "127.0.0.1:7101",
    tenant: Annotated[str, typer.Option(help="Tenant when a document does not set one")] = "demo",
    groups: Annotated[list[str] | None, typer.Option(help="Access groups by default")] = None,
) -> None:
    """Parse Markdown documents and upsert them into the live build through the retriever."""
    from ragway_tools.launcher import LaunchError

    try:
        _load(retriever, paths, tenant=tenant, groups=groups or ["public"])
    except LaunchError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(1) from None


def _load(
    addr: str, paths: list[Path], *, tenant: str, groups: list[str], token: str | None = None
) -> None:
    """``token``: the service token (None: the environment's, ragway_tools/channels.py)."""
    import grpc

    from ragway.kb import Defaults, DocumentError, discover, parse_document
    from ragway_tools.launcher import LaunchError
    from ragway_tools.loading import load_documents

    defaults = Defaults(tenant=tenant, groups=tuple(groups))
    try:
        files = discover(paths)
    except DocumentError as exc:
        raise LaunchError(str(exc)) from None
    documents, problems = [], []
    for path, root in files:
        try:
            documents.append(parse_document(path, root, defaults))
        except DocumentError as exc:
            problems.append(str(exc))
    progress = Progress(
        TextColumn("Loading knowledge"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )
    with progress:
        task = progress.add_task("load", total=len(documents))
        try:
            report = load_documents(
                addr, documents, on_document=lambda _: progress.advance(task), token=token
            )
        except grpc.RpcError as exc:
            raise LaunchError(
                f"the retriever at {addr} refused the documents: {exc.details()}"
            ) from None
    table = Table(title=f"Knowledge build {report.build_id}", show_edge=False)
    for col in ("documents", "chunks", "skipped"):
        table.add_column(col, justify="right")
    table.add_row(str(report.documents), str(report.chunks), str(len(problems)))
    console.print(table)
    for problem in problems:
        err.print(f"[yellow]skipped[/] {problem}")


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question")],
    url: Annotated[str, typer.Option(help="Gateway URL")] = "http://127.0.0.1:8000",
    key: Annotated[
        str, typer.Option(envvar="RAGWAY_API_KEY", help="API key")
    ] = "rgw-demo-public-key",
) -> None:
    """Ask the running gateway and print the answer with its sources."""
    import httpx

    try:
        reply = httpx.post(
            f"{url}/v1/ask",
            json={"question": question},
            headers={"Authorization": f"Bearer {key}"},
            timeout=60,
        )
    except httpx.HTTPError as exc:
        err.print(f"[bold red]error:[/] cannot reach {url}: {exc}")
        raise typer.Exit(1) from None
    body = reply.json()
    if reply.status_code != 200:
        err.print(f"[bold red]{reply.status_code}[/] {body['error']['message']}")
        raise typer.Exit(1)
    if body["refused"]:
        console.print(f"[yellow]No answer:[/] {body['reason']}")
    else:
        console.print(body["answer"])
    for c in body["citations"]:
        console.print(
            f"  [{c['number']}] {c['title']} — {c['section'] or '(intro)'} ({c['source_id']})"
        )


@app.command()
def bench(
    qa: Annotated[Path, typer.Option(help="QA file (YAML items with 'question')")] = Path(
        "tests/fixtures/demo-qa.yaml"
    ),
    output: Annotated[Path, typer.Option(help="Report path (a .json sits beside it)")] = Path(
        "var/bench/report.md"
    ),
) -> None:
    """Measure end-to-end latency on a private stack, with baselines from the same run."""
    from ragway_tools import bench as bench_mod
    from ragway_tools.launcher import LaunchError

    try:
        with console.status("Benchmarking on a private stack…"):
            bench_mod.run(qa, output)
    except LaunchError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(1) from None
    console.print(output.read_text())
    console.print(f"report: {output}")


@app.command("bench-tracing")
def bench_tracing(
    qa: Annotated[Path, typer.Option(help="QA file (YAML items with 'question')")] = Path(
        "tests/fixtures/demo-qa.yaml"
    ),
    output: Annotated[Path, typer.Option(help="Report path (a .json sits beside it)")] = Path(
        "var/bench/tracing.md"
    ),
    concurrency: Annotated[int, typer.Option(min=1, help="Closed-loop clients")] = 4,
    duration_s: Annotated[
        float, typer.Option("--duration-s", min=1, help="Measured seconds per mode")
    ] = 30.0,
) -> None:
    """Measure tracing on against tracing off: the same /v1/ask load, p50/p95 and runs/s."""
    from ragway_tools import bench_tracing as mod
    from ragway_tools.launcher import LaunchError

    try:
        with console.status("Tracing off, then on, each on a private stack…"):
            mod.run(qa, output, concurrency=concurrency, duration_s=duration_s)
    except LaunchError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(1) from None
    console.print(output.read_text())
    console.print(f"report: {output}")


@app.command("trace-report")
def trace_report(
    output: Annotated[Path, typer.Option(help="Report path (the spans' .json sits beside it)")] = (
        Path("var/observability/report.md")
    ),
    overhead: Annotated[
        Path, typer.Option(help="The bench-tracing report to quote for the overhead")
    ] = Path("var/bench/tracing.md"),
) -> None:
    """One webhook and one /v1/ask on a private traced stack: both traces and every /metrics."""
    from ragway_tools import trace_report as mod
    from ragway_tools.launcher import LaunchError

    try:
        with console.status("One webhook and one question on a private traced stack…"):
            mod.run(output, overhead=overhead)
    except LaunchError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(1) from None
    console.print(f"report: {output}")


@app.command()
def openapi(
    output: Annotated[Path | None, typer.Option(help="Write here instead of stdout")] = None,
) -> None:
    """Print (or write) the gateway's OpenAPI spec."""
    from services.gateway.main import create_app
    from services.gateway.settings import GatewaySettings

    spec = create_app(
        GatewaySettings(api_keys_file=Path("config/api-keys.yaml")), with_executor=False
    ).openapi()
    text = json.dumps(spec, indent=2, sort_keys=True) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text)
        console.print(f"wrote {output}")


app.command("opensearch-node")(opensearch_node)
eval_app.command("congruence")(eval_congruence)


def main() -> None:
    app()
