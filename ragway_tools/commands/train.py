"""``ragway train reranker``: fine-tune ragway's cross-encoder on a BEIR training split."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated

import typer

from ragway_tools.commands.common import console, eval_home, fail, load_split, progress_bar
from ragway_tools.training.reranker import TrainConfig as TrainDefaults

train_app = typer.Typer(help="Train ragway's own models from benchmark data.", no_args_is_help=True)


@train_app.command("reranker")
def reranker(
    dataset: Annotated[Path, typer.Option(help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/")],
    output: Annotated[Path, typer.Option(help="Folder that receives the artifact")] = Path(
        "var/models"
    ),
    seed: Annotated[int, typer.Option(help="Seed of the train/validation split")] = 2026,
    epochs: Annotated[int, typer.Option(min=1, max=20)] = TrainDefaults.epochs,
    max_length: Annotated[int, typer.Option(min=32, max=512)] = TrainDefaults.max_length,
    layers: Annotated[int, typer.Option(min=1, max=6, help="Encoder layers kept")] = (
        TrainDefaults.layers
    ),
    group_size: Annotated[
        int, typer.Option(min=2, max=64, help="1 positive + N-1 hard negatives")
    ] = TrainDefaults.group_size,
    negatives_depth: Annotated[
        int, typer.Option(min=2, max=200, help="Mine negatives from the hybrid top-N")
    ] = TrainDefaults.negatives_depth,
    learning_rate: Annotated[float, typer.Option(min=1e-7, max=1e-2)] = (
        TrainDefaults.learning_rate
    ),
    threads: Annotated[int, typer.Option(min=1, max=64)] = TrainDefaults.threads,
    retriever: Annotated[
        str | None, typer.Option(help="A running retriever holding the corpus (default: start one)")
    ] = None,
) -> None:
    """Mine hard negatives with ragway's retriever, fine-tune, save a versioned artifact."""
    from ragway_tools.evaluation.retrieval import indexed_retriever
    from ragway_tools.launcher import LaunchError
    from ragway_tools.training import negatives
    from ragway_tools.training import reranker as trainer

    data, train_ids = load_split(dataset, "train", seed)
    config = trainer.TrainConfig(
        max_length=max_length,
        epochs=epochs,
        group_size=group_size,
        negatives_depth=negatives_depth,
        learning_rate=learning_rate,
        layers=layers,
        threads=threads,
        seed=seed,
    )
    home = eval_home(data)
    cache = home / f"negatives-train-s{seed}-d{negatives_depth}.json"
    progress = progress_bar()
    with progress:
        if cache.is_file():
            mined: dict[str, list[str]] = json.loads(cache.read_text())
        else:
            try:
                with indexed_retriever(
                    data, retriever=retriever, index_home=home / "retriever", progress=progress
                ) as (stub, _):
                    task = progress.add_task("negatives", total=len(train_ids))
                    mined = negatives.mine(
                        stub,
                        data,
                        train_ids,
                        depth=negatives_depth,
                        on_query=lambda: progress.advance(task),
                    )
            except LaunchError as exc:
                raise fail(str(exc), 1) from None
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_text(json.dumps(mined))
        groups = trainer.build_groups(data, train_ids, mined)
        if not groups:
            raise fail("no training groups: no query has both a relevant document and a negative")
        per_step = config.queries_per_step
        steps = config.epochs * ((len(groups) + per_step - 1) // per_step)
        task = progress.add_task("training", total=steps)

        def on_step(step: int, loss: float) -> None:
            progress.update(task, completed=step, description=f"loss {loss:.3f}")
            if not console.is_terminal and step % 25 == 0:  # a log file gets a line, not a bar
                console.log(f"step {step}/{steps} loss {loss:.3f}")

        result = trainer.train(groups, config, on_step=on_step)
    with console.status("Saving the artifact and exporting ONNX (fp32 + int8)…"):
        folder = trainer.save_artifact(
            result, config, output, dataset=data, query_ids=train_ids, split_seed=seed
        )
    console.print(
        f"Trained on {len(train_ids)} queries ({len(groups)} groups, {result.pairs} pairs) "
        f"in {result.seconds:.0f} s; config {dataclasses.asdict(config)}"
    )
    console.print(f"artifact: {folder}")
    console.print(
        f"use it: RAGWAY_RERANKER_PATH={folder} (retriever), or "
        f"ragway eval retrieval --reranker {folder}"
    )
