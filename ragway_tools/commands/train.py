"""``ragway train reranker``: fine-tune ragway's cross-encoder.

On a BEIR training split (``--dataset``), or self-supervised on a knowledge
base's own documents (``--from-folder`` / ``--from-build``, one artifact per
tenant; see ragway_tools/training/adapt.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ragway_tools.commands.common import console, eval_home, fail, load_split, progress_bar
from ragway_tools.training.reranker import TrainConfig as TrainDefaults

if TYPE_CHECKING:  # the QA loader is imported where a command needs it (start-up stays light)
    from ragway_tools.evaluation.qa import QASet

# Adapting to a knowledge base trains on a few hundred pseudo-queries within a
# few minutes on two cores: shorter inputs and a smaller group make each step
# cheap enough, a higher rate makes the few steps count (docs/evaluation.md).
ADAPT_DEFAULTS = TrainDefaults(
    max_length=128, epochs=3, group_size=5, negatives_depth=20, learning_rate=2e-4
)
_MODE_DEFAULT = "Default: per mode (BEIR training or --from-* adaptation)"

train_app = typer.Typer(help="Train ragway's own models from benchmark data.", no_args_is_help=True)


@train_app.command("reranker")
def reranker(
    dataset: Annotated[
        Path | None, typer.Option(help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/")
    ] = None,
    from_folder: Annotated[
        list[Path] | None,
        typer.Option(help="Adapt to this knowledge-base folder (no labels; repeatable)"),
    ] = None,
    from_build: Annotated[
        str | None,
        typer.Option(help="Adapt to a build of the running retriever (id or alias, e.g. live)"),
    ] = None,
    tenant: Annotated[
        list[str] | None,
        typer.Option(help="With --from-*: only these tenants (default: one artifact per tenant)"),
    ] = None,
    max_minutes: Annotated[
        float, typer.Option(min=0.1, max=600, help="With --from-*: training time cap per tenant")
    ] = 4.0,
    heldout_fraction: Annotated[
        float,
        typer.Option(min=0.05, max=0.5, help="With --from-*: chunks held out for early stopping"),
    ] = 0.15,
    max_steps: Annotated[
        int | None, typer.Option(min=1, help="With --from-*: optimiser step cap per tenant")
    ] = None,
    output: Annotated[Path, typer.Option(help="Folder that receives the artifact")] = Path(
        "var/models"
    ),
    seed: Annotated[int, typer.Option(help="Seed of the train/validation split")] = 2026,
    epochs: Annotated[int | None, typer.Option(min=1, max=20, help=_MODE_DEFAULT)] = None,
    max_length: Annotated[int | None, typer.Option(min=32, max=512, help=_MODE_DEFAULT)] = None,
    layers: Annotated[int, typer.Option(min=1, max=6, help="Encoder layers kept")] = (
        TrainDefaults.layers
    ),
    group_size: Annotated[
        int | None,
        typer.Option(min=2, max=64, help="1 positive + N-1 hard negatives. " + _MODE_DEFAULT),
    ] = None,
    negatives_depth: Annotated[
        int | None,
        typer.Option(min=2, max=200, help="Mine negatives from the hybrid top-N. " + _MODE_DEFAULT),
    ] = None,
    learning_rate: Annotated[
        float | None, typer.Option(min=1e-7, max=1e-2, help=_MODE_DEFAULT)
    ] = None,
    threads: Annotated[int, typer.Option(min=1, max=64)] = TrainDefaults.threads,
    init_from: Annotated[
        Path | None,
        typer.Option(
            help="With --from-*: start from this trained artifact (e.g. the SciFact one) "
            "instead of the packaged MiniLM; its layer count is kept"
        ),
    ] = None,
    retriever: Annotated[
        str | None,
        typer.Option(
            help="A running retriever holding the corpus (default: start one; "
            "with --from-build: RAGWAY_RETRIEVER_ADDR)"
        ),
    ] = None,
    distill_from: Annotated[
        Path | None,
        typer.Option(
            help="With --dataset: a trained artifact whose order of each group the new "
            "(smaller, --layers) reranker also learns"
        ),
    ] = None,
    distill_weight: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="With --distill-from: the teacher's share")
    ] = 0.5,
    student_start: Annotated[
        str,
        typer.Option(
            help="With --distill-from: start the student from the teacher's first --layers "
            "layers and head (teacher) or from the packaged MiniLM's (minilm)"
        ),
    ] = "teacher",
) -> None:
    """Mine hard negatives with ragway's retriever, fine-tune, save a versioned artifact."""
    from ragway_tools.training import reranker as trainer

    mode = trainer.TrainConfig() if dataset is not None else ADAPT_DEFAULTS
    given: dict[str, Any] = {
        "max_length": max_length,
        "epochs": epochs,
        "group_size": group_size,
        "negatives_depth": negatives_depth,
        "learning_rate": learning_rate,
    }
    config = dataclasses.replace(
        mode,
        layers=layers,
        threads=threads,
        seed=seed,
        **{k: v for k, v in given.items() if v is not None},
    )
    chosen = [x for x in (dataset, from_folder, from_build) if x]
    if len(chosen) != 1:
        raise fail("give exactly one of --dataset, --from-folder or --from-build")
    start: tuple[Path, dict[str, Any]] | None = None
    if init_from is not None:
        if dataset is not None:
            raise fail("--init-from adapts a trained artifact: use it with --from-*")
        try:
            start = trainer.artifact_base(init_from)
        except ValueError as exc:
            raise fail(str(exc)) from None
        config = dataclasses.replace(config, layers=start[1]["layers"])
    if dataset is None:
        if distill_from is not None:
            raise fail("--distill-from trains on a labelled --dataset")
        _adapt(config, output, from_folder or [], from_build, retriever, tenant or [],
               max_minutes, max_steps, heldout_fraction, start)  # fmt: skip
        return
    teacher: tuple[Any, dict[str, Any]] | None = None
    student_base: Path | None = None
    if distill_from is not None:
        if student_start not in ("teacher", "minilm"):
            raise fail("--student-start is teacher or minilm")
        try:
            teacher_base, record = trainer.artifact_base(distill_from)
        except ValueError as exc:
            raise fail(str(exc)) from None
        if student_start == "teacher":
            # Layers past the teacher's would start untrained, not cut from it.
            if config.layers > record["layers"]:
                raise fail(
                    f"--layers {config.layers}: a student cut from the teacher keeps at "
                    f"most its {record['layers']} layers (or use --student-start minilm)"
                )
            student_base = teacher_base
        teacher = (trainer.load_teacher(distill_from), record)
        config = dataclasses.replace(config, distill_weight=distill_weight)
    _train_beir(config, dataset, output, seed, retriever, teacher, student_base)


def _adapt(
    config: Any,
    output: Path,
    folders: list[Path],
    build: str | None,
    retriever: str | None,
    tenants: list[str],
    max_minutes: float,
    max_steps: int | None,
    heldout_fraction: float,
    start: tuple[Path, dict[str, Any]] | None,
) -> None:
    from ragway_tools.build_client import BuildsSettings
    from ragway_tools.commands import train_adapt
    from ragway_tools.launcher import LaunchError

    try:
        with contextlib.ExitStack() as stack:
            token: str | None = None  # a running retriever: the environment's token
            if build is not None:
                addr = retriever or BuildsSettings().retriever_addr
                source = train_adapt.from_build(addr, build)
            else:
                source = train_adapt.from_folders(folders)
                with console.status("Starting a private retriever and loading the documents…"):
                    addr, token = stack.enter_context(
                        train_adapt.private_retriever(source.documents)
                    )
            done = train_adapt.adapt(
                source, addr, config, output, token=token, tenants=tenants, max_minutes=max_minutes,
                max_steps=max_steps, heldout_fraction=heldout_fraction, start=start,
            )  # fmt: skip
    except LaunchError as exc:
        raise fail(str(exc), 1) from None
    paths = ",".join(f'"{json.loads((f / "artifact.json").read_text())["tenant"]}": "{f}"'
                     for f in done)  # fmt: skip
    console.print(
        f"serve them: RAGWAY_RERANKER_TENANT_PATHS='{{{paths}}}' (retriever), or "
        "ragway eval qa-retrieval --qa <set> --tenant-reranker <tenant>=<artifact>"
    )


def _train_beir(
    config: Any,
    dataset: Path,
    output: Path,
    seed: int,
    retriever: str | None,
    teacher: tuple[Any, dict[str, Any]] | None = None,
    base: Path | None = None,
) -> None:
    from ragway_tools.evaluation.retrieval import indexed_retriever
    from ragway_tools.launcher import LaunchError
    from ragway_tools.training import negatives
    from ragway_tools.training import reranker as trainer

    data, train_ids = load_split(dataset, "train", seed)
    negatives_depth = config.negatives_depth
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

        result = trainer.train(
            groups, config, on_step=on_step, teacher=teacher[0] if teacher else None, base=base
        )
    with console.status("Saving the artifact and exporting ONNX (fp32 + int8)…"):
        folder = trainer.save_artifact(
            result,
            config,
            output,
            dataset=data,
            query_ids=train_ids,
            split_seed=seed,
            base=base,
            extra={"distilled_from": teacher[1]} if teacher else None,
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


def _advance(bar: Any, task: Any, done: int, _total: int) -> None:
    bar.update(task, completed=done)


# The tuning parts of ragway's own QA sets: what the generator's learned parts fit on.
_TUNING_SETS = [
    Path("eval/demo-qa.yaml"),
    Path("eval/helpcentre/qa-tuning.yaml"),
    Path("eval/supportdesk/qa-tuning.yaml"),
    Path("eval/servicehub/qa-tuning.yaml"),
    Path("eval/homecart/qa-tuning.yaml"),
    Path("eval/hostclub/qa-tuning.yaml"),
    Path("eval/harbourpad/qa-tuning.yaml"),
    Path("eval/lineside/qa-tuning.yaml"),
    Path("eval/fernhill/qa-tuning.yaml"),
    Path("eval/kestrel/qa-tuning.yaml"),
    Path("eval/tidewater/qa-tuning.yaml"),
    Path("eval/saltmarsh/qa-tuning.yaml"),
    Path("eval/marlowe/qa-tuning.yaml"),
    Path("eval/ashgrove/qa-tuning.yaml"),
    Path("eval/copperleaf/qa-tuning.yaml"),
    Path("eval/juniper/qa-tuning.yaml"),
    Path("eval/orchard/qa-tuning.yaml"),
    Path("eval/wrenfield/qa-tuning.yaml"),
    Path("eval/quayside/qa-tuning.yaml"),
    Path("eval/pinecrest/qa-tuning.yaml"),
    Path("eval/bramble/qa-tuning.yaml"),
    Path("eval/thornbury/qa-tuning.yaml"),
    Path("eval/kingsmere/qa-tuning.yaml"),
    Path("eval/seabright/qa-tuning.yaml"),
    Path("eval/galloway/qa-tuning.yaml"),
    Path("eval/ravensworth/qa-tuning.yaml"),
    Path("eval/ambleside/qa-tuning.yaml"),
    Path("eval/holloway/qa-tuning.yaml"),
    Path("eval/dunmore/qa-tuning.yaml"),
    Path("eval/westcombe/qa-tuning.yaml"),
    Path("eval/lochinver/qa-tuning.yaml"),
    Path("eval/redcliffe/qa-tuning.yaml"),
    Path("eval/oakhampton/qa-tuning.yaml"),
]


def _tuning_sets(paths: list[Path]) -> list[tuple[Path, QASet]]:
    """The QA sets to fit on, loaded; a held-out part is refused before anything starts."""
    from ragway_tools.evaluation.qa import QAFileError, load_qa

    held = [p for p in paths if "heldout" in p.name or "held-out" in p.name]
    if held:
        raise fail(f"{held[0]} is a held-out part: it may only be evaluated, never trained on")
    try:
        return [(path, load_qa(path)) for path in paths]
    except QAFileError as exc:
        raise fail(str(exc)) from exc


def _set_name(path: Path) -> str:
    """A QA set's name for its progress bar: the fixtures' parts share a file name."""
    return f"{path.parent.name}/{path.stem}" if path.parent.name != "eval" else path.stem


@contextlib.contextmanager
def _progress(name: str, total: int) -> Iterator[Callable[[int, int], None]]:
    """A progress bar for one QA set, as the callback the collectors report to."""
    with progress_bar() as bar:
        task = bar.add_task(name, total=total)
        yield functools.partial(_advance, bar, task)


@train_app.command("answerability")
def answerability(
    qa: Annotated[
        list[Path] | None,
        typer.Option(help="A QA set's TUNING part (repeatable); never a held-out part"),
    ] = None,
    output: Annotated[Path, typer.Option(help="Model file to write")] = Path(
        "services/generator/answerability.json"
    ),
    max_false_refusals: Annotated[
        float, typer.Option(min=0.0, max=0.5, help="Cross-validated false refusals allowed")
    ] = 0.05,
) -> None:
    """Fit the refusal decision on QA sets' questions (default: the tuning parts of the
    demo set and of the six help-centre fixtures), with its threshold chosen by
    cross-validation."""
    from ragway_tools.training import answerability as trainer
    from services.generator.backends.extractive import ExtractiveConfig

    paths = qa or _TUNING_SETS
    samples: list[trainer.Sample] = []
    for path, qa_set in _tuning_sets(paths):
        with _progress(_set_name(path), len(qa_set.items)) as progress:
            try:
                samples += trainer.samples_from_stack(qa_set, progress)
            except ValueError as exc:
                raise fail(str(exc)) from exc
    try:
        model, chosen = trainer.train(
            samples,
            qa_paths=paths,
            max_false_refusals=max_false_refusals,
            min_support=ExtractiveConfig().min_support,
        )
    except ValueError as exc:
        raise fail(str(exc)) from exc
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(model.to_json() + "\n", encoding="utf-8")
    weights = ", ".join(f"{f} {w:+.3f}" for f, w in zip(model.features, model.weights, strict=True))
    console.print(
        f"{len(samples)} questions ({sum(not s.answerable for s in samples)} unanswerable); "
        f"weights {weights}, bias {model.bias:+.3f}; threshold {chosen.threshold:.2f}: "
        f"cross-validated abstention {chosen.abstention:.3f}, false refusals "
        f"{chosen.false_refusals:.3f}\nwrote {output}"
    )


@train_app.command("unit-ranker")
def unit_ranker(
    qa: Annotated[
        list[Path] | None,
        typer.Option(help="A QA set's TUNING part (repeatable); never a held-out part"),
    ] = None,
    output: Annotated[Path, typer.Option(help="Model file to write")] = Path(
        "services/generator/unit_ranker.json"
    ),
) -> None:
    """Learn which retrieved unit to quote for each part of a question (default: the
    tuning parts of the demo set and of the six help-centre fixtures), its ridge chosen
    by leave-one-set-out."""
    from ragway_tools.training import unit_ranker as trainer

    paths = qa or _TUNING_SETS
    found: list[trainer.Group] = []
    for path, qa_set in _tuning_sets(paths):
        with _progress(_set_name(path), len(qa_set.items)) as progress:
            found += trainer.groups_from_stack(qa_set, str(path), progress)
    try:
        model, best = trainer.train(found, qa_paths=paths)
    except ValueError as exc:
        raise fail(str(exc)) from exc
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(model.to_json() + "\n", encoding="utf-8")
    console.print(
        f"{best.parts} question parts from {len(paths)} QA sets; ridge {best.l2}: "
        f"left-out sets' first unit carries the fact for {best.first_correct}/{best.parts} "
        f"parts (by support alone: {best.support_first_correct}/{best.parts})\nwrote {output}"
    )
