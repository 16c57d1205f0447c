"""What every sub-command shares: the consoles, the progress bar, data set loading."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ragway_tools.evaluation.beir import Dataset

console = Console()
err = Console(stderr=True)
SPLITS = ("validation", "train", "all")


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print a one-line error; the caller raises the returned Exit."""
    err.print(f"[bold red]error:[/] {message}")
    return typer.Exit(code)


def progress_bar() -> Progress:
    return Progress(
        TextColumn("{task.description:>14}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )


def load_split(dataset: Path, split: str, seed: int) -> tuple[Dataset, list[str]]:
    """The data set and the query ids of one split of the fixed seeded 80/20 split."""
    from ragway_tools.evaluation.beir import DatasetError, load, split_queries

    if split not in SPLITS:
        raise fail(f"--split must be one of {', '.join(SPLITS)}, not {split!r}")
    try:
        data = load(dataset)
    except DatasetError as exc:
        raise fail(str(exc)) from None
    ids = sorted(data.qrels) if split == "all" else split_queries(sorted(data.qrels), seed)[split]
    return data, ids


def eval_home(data: Dataset) -> Path:
    """Per-data-set working folder: the cached index, reports, mined negatives."""
    return Path("var/eval") / f"{data.name}-{data.checksum[:8]}"
