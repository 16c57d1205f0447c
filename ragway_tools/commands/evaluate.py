"""``ragway eval ...``: retrieval quality, the reranker curve, answers, refusals, gates."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import grpc
import typer

from ragway_tools.commands.common import console, eval_home, fail, load_split, progress_bar
from ragway_tools.evaluation.qa import QASet

eval_app = typer.Typer(
    help="Measure retrieval and answers on benchmark data.", no_args_is_help=True
)

DatasetOpt = Annotated[Path, typer.Option(help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/")]
SplitOpt = Annotated[str, typer.Option(help="validation, train or all (fixed seeded 80/20 split)")]
SeedOpt = Annotated[int, typer.Option(help="Seed of the train/validation split")]
RetrieverOpt = Annotated[
    str | None, typer.Option(help="A running retriever holding the corpus (default: start one)")
]


def _require_artifact(reranker: Path) -> None:
    if not (reranker / "artifact.json").is_file():
        raise fail(f"--reranker {reranker}: not a reranker artifact (no artifact.json)")


@eval_app.command("retrieval")
def retrieval(
    dataset: DatasetOpt,
    split: SplitOpt = "validation",
    modes: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated of sparse,dense,hybrid,hybrid+rerank "
            "(default: all, hybrid+rerank only with --reranker)"
        ),
    ] = None,
    reranker: Annotated[
        Path | None, typer.Option(help="Reranker artifact the private retriever loads")
    ] = None,
    output: Annotated[
        Path | None, typer.Option(help="Report folder (default var/eval/<name>-<checksum>/<split>)")
    ] = None,
    retriever: RetrieverOpt = None,
    seed: SeedOpt = 2026,
) -> None:
    """Recall@k, HitRate@k, MRR@10 and nDCG@10 of each retrieval mode on a BEIR data set."""
    from ragway_tools.evaluation.retrieval import evaluate_dataset
    from ragway_tools.launcher import LaunchError

    data, ids = load_split(dataset, split, seed)
    if reranker is not None:
        _require_artifact(reranker)
    chosen = modes or "sparse,dense,hybrid" + (",hybrid+rerank" if reranker else "")
    home = eval_home(data)
    out = output or home / split
    try:
        with progress_bar() as progress:
            table = evaluate_dataset(
                data,
                ids,
                split,
                [m.strip() for m in chosen.split(",") if m.strip()],
                out,
                retriever=retriever,
                index_home=home / "retriever",
                reranker=reranker,
                progress=progress,
            )
    except (LaunchError, ValueError) as exc:
        raise fail(str(exc)) from None
    console.print(table)
    console.print(f"report: {out}/report.md, report.json, run.<mode>.trec")


@eval_app.command("rerank-curve")
def rerank_curve(
    dataset: DatasetOpt,
    reranker: Annotated[
        list[Path],
        typer.Option(
            help="Reranker artifact (ragway train reranker); repeat it for one per layer count"
        ),
    ],
    split: SplitOpt = "validation",
    depths: Annotated[str, typer.Option(help="Comma-separated rerank depths")] = "10,20,30,50",
    lengths: Annotated[str, typer.Option(help="Comma-separated max input lengths")] = (
        "128,192,256"
    ),
    runtimes: Annotated[
        str,
        typer.Option(
            help="onnx-int8 and/or onnx-fp32; a +best suffix reads each passage's "
            "best-matching span instead of its head (RAGWAY_RERANK_WINDOW=best)"
        ),
    ] = "onnx-int8",
    budget_ms: Annotated[
        float, typer.Option(help="p95 the rerank stage may take (the goal: 40 ms on 2 cores)")
    ] = 40.0,
    threads: Annotated[
        int, typer.Option(min=1, max=64, help="onnxruntime threads (RAGWAY_RERANK_THREADS)")
    ] = 1,
    batch_size: Annotated[
        int, typer.Option(min=0, max=256, help="Pairs per session run (RAGWAY_RERANK_BATCH_SIZE)")
    ] = 1,
    latency_queries: Annotated[
        int, typer.Option(min=1, help="Queries timed at each point (interleaved)")
    ] = 60,
    output: Annotated[Path | None, typer.Option(help="Report folder")] = None,
    retriever: RetrieverOpt = None,
    seed: SeedOpt = 2026,
) -> None:
    """Quality and latency of the reranker at each depth, input length and layer count."""
    from ragway_tools.evaluation.retrieval import indexed_retriever
    from ragway_tools.launcher import LaunchError
    from ragway_tools.training import curve, negatives

    data, ids = load_split(dataset, split, seed)
    for artifact in reranker:
        _require_artifact(artifact)
    try:
        depth_list = sorted({int(d) for d in depths.split(",")})
        length_list = sorted({int(n) for n in lengths.split(",")})
    except ValueError:
        raise fail("--depths and --lengths take comma-separated integers") from None
    runtime_list = [r.strip() for r in runtimes.split(",") if r.strip()]
    if bad := [
        r for r in runtime_list if r.removesuffix("+best") not in ("onnx-int8", "onnx-fp32")
    ]:
        raise fail(f"unknown runtime(s) {bad}; choose onnx-int8, onnx-fp32 (+best)")
    home = eval_home(data)
    out = output or home / split / "rerank-curve"
    with progress_bar() as progress:
        try:
            with indexed_retriever(
                data, retriever=retriever, index_home=home / "retriever", progress=progress
            ) as (stub, _):
                task = progress.add_task("candidates", total=len(ids))
                found = negatives.candidates(
                    stub,
                    data,
                    ids,
                    depth=curve.candidate_depth(depth_list),
                    on_query=lambda: progress.advance(task),
                )
        except LaunchError as exc:
            raise fail(str(exc), 1) from None
        task = progress.add_task(
            "scoring", total=len(ids) * len(length_list) * len(runtime_list) * len(reranker)
        )
        points = curve.measure(
            reranker,
            data,
            found,
            depths=depth_list,
            lengths=length_list,
            runtimes=runtime_list,
            latency_queries=latency_queries,
            threads=threads,
            batch_size=batch_size,
            on_step=lambda n: progress.advance(task, n),
        )
    best = curve.best_under(points, budget_ms)
    table = curve.render(points, curve.fused_point(data, found), budget_ms, best)
    out.mkdir(parents=True, exist_ok=True)
    names = ", ".join(a.name for a in reranker)
    setup = f"onnxruntime threads {threads}, batch size {batch_size} (0: one padded batch)"
    (out / "report.md").write_text(f"# Reranker curve: {names} on {split}\n\n{setup}.\n\n{table}")
    (out / "report.json").write_text(
        json.dumps(
            {
                "artifacts": [str(a) for a in reranker],
                "split": split,
                "threads": threads,
                "batch_size": batch_size,
                "budget_ms": budget_ms,
                "points": [p.__dict__ for p in points],
                "best": best.__dict__ if best else None,
            },
            indent=2,
        )
    )
    console.print(table)
    if best is None:
        console.print(f"No point fits {budget_ms:.0f} ms p95.")
    else:
        console.print(
            f"Best under {budget_ms:.0f} ms p95: {best.artifact} ({best.layers} layers), "
            f"{best.runtime}, max length {best.max_length}, depth {best.depth} "
            f"(nDCG@10 {best.ndcg10:.3f}, p95 {best.p95_ms:.1f} ms)"
        )
    console.print(f"report: {out}/report.md")


QAOpt = Annotated[Path, typer.Option(help="QA set (YAML, see ragway_tools/evaluation/qa.py)")]
GatewayOpt = Annotated[
    str | None, typer.Option(help="A running gateway URL (default: start a private demo stack)")
]


def _qa(path: Path) -> QASet:
    from ragway_tools.evaluation.qa import QAFileError, load_qa

    try:
        return load_qa(path)
    except QAFileError as exc:
        raise fail(str(exc)) from None


@eval_app.command("qa-retrieval")
def qa_retrieval(
    qa: QAOpt,
    reranker: Annotated[
        Path | None, typer.Option(help="Shared reranker artifact the private retriever loads")
    ] = None,
    tenant_reranker: Annotated[
        list[str] | None,
        typer.Option(help="<tenant>=<artifact>: a tenant's own adapted reranker (repeatable)"),
    ] = None,
    rerank_depth: Annotated[int, typer.Option(min=1, max=200)] = 5,
    skip_margin: Annotated[
        float | None, typer.Option(help="Also score the skip rule at this fused margin")
    ] = None,
    fit_skip: Annotated[
        bool, typer.Option(help="Fit the skip margin on this set (a TUNING set only)")
    ] = False,
    rerank_weight: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Also score this reranker/fused blend")
    ] = 1.0,
    fit_weight: Annotated[
        bool, typer.Option(help="Fit the rerank weight on this set (a TUNING set only)")
    ] = False,
    curve: Annotated[
        str | None,
        typer.Option(
            help="Also measure the depth/length/batching curve of the tenant rerankers: "
            "DEPTHS;LENGTHS;BATCH SIZES, e.g. '3,5,10;64,128;0,8'"
        ),
    ] = None,
    output: Annotated[Path | None, typer.Option(help="Report folder")] = None,
) -> None:
    """hit@1, hit@5, MRR@10 of a QA set's gold pages, fused and reranked, per caller scope."""
    from ragway_tools.evaluation import qa_retrieval as scoring
    from ragway_tools.evaluation.qa import QAFileError
    from ragway_tools.launcher import LaunchError

    qa_set = _qa(qa)
    if not qa_set.knowledge_base:
        raise fail(f"{qa}: names no knowledge_base to search")
    by_tenant: dict[str, Path] = {}
    for entry in tenant_reranker or []:
        tenant, eq, path = entry.partition("=")
        if not eq or not tenant or not path:
            raise fail(f"--tenant-reranker {entry!r}: use <tenant>=<artifact folder>")
        _require_artifact(Path(path))
        by_tenant[tenant] = Path(path).resolve()
    if reranker is not None:
        _require_artifact(reranker)
    try:
        levers = [[int(x) for x in part.split(",")] for part in curve.split(";")] if curve else []
    except ValueError:
        raise fail("--curve takes DEPTHS;LENGTHS;BATCH SIZES of comma-separated integers") from None
    if curve and (len(levers) != 3 or not by_tenant):
        raise fail("--curve needs three lists and at least one --tenant-reranker")
    env = {"RAGWAY_RERANK_DEPTH": str(rerank_depth)}
    if reranker is not None:
        env["RAGWAY_RERANKER_PATH"] = str(reranker.resolve())
    if by_tenant:
        env["RAGWAY_RERANKER_TENANT_PATHS"] = json.dumps({t: str(p) for t, p in by_tenant.items()})
    out = output or Path("var/eval") / qa_set.name / "qa-retrieval"
    try:
        with progress_bar() as progress, _kb_retriever(qa_set, env) as stub:
            asked = sum(1 for i in qa_set.items if i.answerable and i.sources)
            task = progress.add_task("questions", total=asked)
            results = scoring.run(stub, qa_set, on_item=lambda: progress.advance(task))
    except (LaunchError, QAFileError) as exc:
        raise fail(str(exc), 1) from None
    weight = rerank_weight
    if fit_weight:
        weight, _ = scoring.fit_weight(results)
        console.print(f"rerank weight fit on this set: {weight:.2f}")
    fitted = None
    if fit_skip:
        fitted, _ = scoring.fit_skip_margin(results, weight=weight)
        console.print(
            "skip margin fit on this set: "
            + (f"{fitted:.6f}" if fitted is not None else "none (always rerank)")
        )
    margin = skip_margin if skip_margin is not None else fitted
    meta = {
        "reranker": str(reranker) if reranker else None,
        "tenant_rerankers": {t: str(p) for t, p in by_tenant.items()},
        "rerank_depth": rerank_depth,
        "models": sorted({r.reranker for r in results if r.reranker}),
    }
    table = scoring.render(qa_set.name, results, margin, meta, weight)
    points = []
    if levers:
        from ragway_tools.training import qa_curve

        depths, lengths, batches = levers
        with progress_bar() as progress:
            task = progress.add_task("curve", total=len(depths) * len(lengths) * len(batches))
            points = qa_curve.measure(
                results, by_tenant, depths=depths, lengths=lengths, batch_sizes=batches,
                on_step=lambda n: progress.advance(task, n),
            )  # fmt: skip
        table += "\n## Rerank curve\n\n" + qa_curve.render(
            points, scoring.summarize(results, "fused")
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(table)
    report = {
        "qa": qa_set.name,
        **meta,
        "skip_margin": margin,
        "skip_margin_fitted": fit_skip,
        "fused": scoring.summarize(results, "fused"),
        "reranked": scoring.summarize(results, "reranked"),
        "rerank_weight": weight,
        "rerank_weight_fitted": fit_weight,
        "blended": scoring.summarize(results, "reranked", weight=weight),
        "skip": scoring.summarize(results, "skip", margin, weight) if margin is not None else None,
        "segments": {
            "fused": scoring.by_segment(results, "fused"),
            "reranked": scoring.by_segment(results, "reranked"),
        },
        "rerank_ms": scoring.latency(results),
        "curve": [p.__dict__ for p in points],
        "items": [{k: v for k, v in r.__dict__.items() if k != "candidates"} for r in results],
    }
    (out / "report.json").write_text(json.dumps(report, indent=2, default=list) + "\n")
    console.print(table)
    console.print(f"report: {out}/report.md, report.json")


@eval_app.command("rerank-bench")
def rerank_bench(
    qa: QAOpt = Path("eval/helpcentre/qa-tuning.yaml"),
    reranker: Annotated[
        Path | None, typer.Option(help="One artifact for every tenant of the QA set")
    ] = None,
    tenant_reranker: Annotated[
        list[str] | None,
        typer.Option(help="<tenant>=<artifact> (repeatable; default: newest in var/models)"),
    ] = None,
    limit: Annotated[
        int, typer.Option(min=0, help="Questions to measure, spread over the set (0: all)")
    ] = 60,
    output: Annotated[Path, typer.Option(help="Report folder")] = Path("var/bench/rerank"),
) -> None:
    """The rerank stage's p50/p95 at depths 5/10/20, fp32 baseline against its speed-ups."""
    import os

    from ragway_tools.evaluation import qa_retrieval as scoring
    from ragway_tools.evaluation.qa import QAFileError
    from ragway_tools.launcher import LaunchError
    from ragway_tools.training import rerank_bench

    qa_set = _qa(qa)
    if not qa_set.knowledge_base:
        raise fail(f"{qa}: names no knowledge_base to search")
    try:
        tenants = sorted({c.tenant for c in scoring.callers(qa_set).values()})
    except QAFileError as exc:
        raise fail(str(exc)) from None
    artifacts: dict[str, Path] = {}
    for entry in tenant_reranker or []:
        tenant, eq, path = entry.partition("=")
        if not eq or not tenant or not path:
            raise fail(f"--tenant-reranker {entry!r}: use <tenant>=<artifact folder>")
        artifacts[tenant] = Path(path)
    for tenant in tenants:
        if tenant in artifacts:
            continue
        newest = sorted(Path("var/models").glob(f"reranker-{tenant}-*"))
        if reranker is not None:
            artifacts[tenant] = reranker
        elif newest:
            artifacts[tenant] = newest[-1]
    if not artifacts:
        raise fail(
            "no reranker artifact: pass --reranker or --tenant-reranker, or train one "
            "(ragway train reranker --from-folder)"
        )
    for artifact in artifacts.values():
        _require_artifact(artifact)
    try:
        with progress_bar() as progress, _kb_retriever(qa_set, {}) as stub:
            asked = sum(1 for i in qa_set.items if i.answerable and i.sources)
            task = progress.add_task("fused heads", total=asked)
            results = scoring.run(
                stub, qa_set, top_k=max(rerank_bench.DEPTHS), on_item=lambda: progress.advance(task)
            )
    except (LaunchError, QAFileError) as exc:
        raise fail(str(exc), 1) from None
    items = [r for r in results if r.tenant in artifacts]
    if limit and len(items) > limit:
        items = [items[i * len(items) // limit] for i in range(limit)]
    load = os.getloadavg()[0]
    with progress_bar() as progress:
        task = progress.add_task("variants", total=len(items))
        points = rerank_bench.measure(items, artifacts, on_item=lambda: progress.advance(task))
    meta = {
        "qa": qa_set.name,
        "items": len(items),
        "artifacts": {t: p.name for t, p in sorted(artifacts.items())},
        "cpus": os.cpu_count(),
        "load": round(load, 2),
    }
    table = rerank_bench.render(points, meta)
    output.mkdir(parents=True, exist_ok=True)
    (output / "report.md").write_text(table)
    (output / "report.json").write_text(
        json.dumps({**meta, "points": rerank_bench.as_json(points)}, indent=2) + "\n"
    )
    console.print(table)
    console.print(f"report: {output}/report.md, report.json")


@contextlib.contextmanager
def _kb_retriever(qa_set: QASet, env: dict[str, str]) -> Iterator[Any]:
    """A private retriever with the QA set's knowledge base loaded (gone afterwards)."""
    import tempfile

    from ragway.kb import SUFFIXES, Defaults, discover, parse_document
    from ragway.v1 import retriever_pb2_grpc
    from ragway_tools.channels import service_channel
    from ragway_tools.launcher import Stack, StackConfig
    from ragway_tools.loading import load_documents

    found = discover(list(qa_set.knowledge_base), suffixes=tuple(SUFFIXES))
    docs = [parse_document(p, r, Defaults()) for p, r in found]
    with tempfile.TemporaryDirectory(prefix="ragway-qa-retrieval-") as tmp:
        stack = Stack(
            StackConfig.on_free_ports(
                Path(tmp), extra_env={"RAGWAY_INDEX_DIR": str(Path(tmp) / "index"), **env}
            )
        )
        try:
            stack.start_service("retriever")
            token = stack.config.service_token
            load_documents(stack.config.retriever_addr, docs, token=token)
            with service_channel(stack.config.retriever_addr, token) as channel:
                yield retriever_pb2_grpc.RetrieverStub(channel)
        finally:
            stack.stop()


@eval_app.command("answers")
def answers(
    qa: QAOpt = Path("eval/demo-qa.yaml"),
    gateway: GatewayOpt = None,
    output: Annotated[Path | None, typer.Option(help="Report folder")] = None,
    generator: Annotated[
        str | None,
        typer.Option(help="Label for the generator in the report (default: from the runs)"),
    ] = None,
) -> None:
    """Correctness, faithfulness, citations, abstention and an audit verdict per answer."""
    from ragway_tools.evaluation import answers as scoring
    from ragway_tools.evaluation.answer_run import AskError, ask_all
    from ragway_tools.evaluation.answer_run import gateway as open_gateway
    from ragway_tools.launcher import LaunchError

    qa_set = _qa(qa)
    out = output or Path("var/eval") / qa_set.name / "answers"
    try:
        with progress_bar() as progress:
            start = progress.add_task("starting", total=None)
            with open_gateway(gateway, qa=qa_set) as (url, _):
                progress.remove_task(start)
                task = progress.add_task("questions", total=len(qa_set.items))
                scores = ask_all(url, qa_set, on_item=lambda: progress.advance(task))
    except (LaunchError, AskError) as exc:
        raise fail(str(exc), 1) from None
    meta = {"gateway": gateway or "private demo stack", "generator": generator or "configured"}
    table = scoring.render(qa_set, scores, meta)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(table)
    report = {
        "qa": qa_set.name,
        **meta,
        "summary": scoring.summarize(scores),
        "segments": scoring.by_segment(scores),
        "items": [
            {
                "id": s.item.id,
                "segment": s.item.segment,
                "question": s.item.question,
                "refused": s.refused,
                "correct": s.correct,
                "faithful": s.faithful,
                "verdict": s.verdict,
                "leaked": s.leaked,
                "cited_documents": s.cited_documents,
                "unsupported": s.unsupported,
                "unsupported_numbers": s.unsupported_numbers,
                "answer": s.answer,
                "reason": s.reason,
                "degraded": s.degraded,
                "latency_ms": round(s.latency_ms, 1),
            }
            for s in scores
        ],
    }
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    console.print(table)
    console.print(f"report: {out}/report.md, report.json")


@eval_app.command("conversations")
def conversations(
    qa: Annotated[
        Path,
        typer.Option(help="Dialogue file (YAML, see ragway_tools/evaluation/conversations.py)"),
    ] = Path("eval/helpcentre/followups.yaml"),
    gateway: GatewayOpt = None,
    output: Annotated[Path | None, typer.Option(help="Report folder")] = None,
) -> None:
    """Follow-up correctness per turn: each dialogue asked in one conversation (rewriting)
    and each turn asked alone (the baseline), per split and per kind of follow-up."""
    from ragway_tools.evaluation import conversations as dialogues
    from ragway_tools.evaluation.answer_run import AskError
    from ragway_tools.evaluation.answer_run import gateway as open_gateway
    from ragway_tools.evaluation.qa import QAFileError
    from ragway_tools.launcher import LaunchError

    try:
        data = dialogues.load_dialogues(qa)
    except QAFileError as exc:
        raise fail(str(exc)) from None
    out = output or Path("var/eval") / data.qa.name / "conversations"
    try:
        with progress_bar() as progress:
            start = progress.add_task("starting", total=None)
            with open_gateway(gateway, qa=data.qa) as (url, _):
                progress.remove_task(start)
                runs = {}
                for mode in ("rewrite", "no_rewrite"):
                    task = progress.add_task(mode, total=len(data.dialogues))
                    runs[mode] = dialogues.ask_dialogues(
                        url,
                        data,
                        rewrite=mode == "rewrite",
                        on_dialogue=partial(progress.advance, task),
                    )
    except (LaunchError, AskError) as exc:
        raise fail(str(exc), 1) from None
    summary = dialogues.summarize(runs["rewrite"], runs["no_rewrite"])
    table = dialogues.render(summary)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(table)
    report = {
        "qa": data.qa.name,
        "gateway": gateway or "private stack",
        "summary": summary,
        "turns": {mode: dialogues.turn_rows(results) for mode, results in runs.items()},
    }
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    console.print(table)
    console.print(f"report: {out}/report.md, report.json")


@eval_app.command("sweep-refusal")
def sweep_refusal(
    qa: QAOpt = Path("eval/demo-qa.yaml"),
    thresholds: Annotated[
        str, typer.Option(help="Comma-separated min_support values, or start:stop:step")
    ] = "0.30:0.66:0.03",
    output: Annotated[Path | None, typer.Option(help="Report folder")] = None,
) -> None:
    """Correct vs false refusals at each evidence threshold (a private stack per sweep)."""
    from ragway_tools.evaluation.answer_run import AskError, best_threshold, render_sweep, sweep
    from ragway_tools.launcher import LaunchError
    from services.generator.settings import GeneratorSettings

    try:
        if ":" in thresholds:
            lo, hi, step = (float(x) for x in thresholds.split(":"))
            values = [round(lo + i * step, 4) for i in range(int((hi - lo) / step + 1e-9) + 1)]
        else:
            values = [float(x) for x in thresholds.split(",")]
    except ValueError:
        raise fail("--thresholds: comma-separated numbers or start:stop:step") from None
    if not values or not all(0.0 <= v <= 1.0 for v in values):
        raise fail("--thresholds must lie in [0, 1]")
    qa_set = _qa(qa)
    current = GeneratorSettings().min_support
    try:
        with progress_bar() as progress:
            task = progress.add_task("thresholds", total=len(values))
            points = sweep(qa_set, values, on_threshold=lambda _: progress.advance(task))
    except (LaunchError, AskError) as exc:
        raise fail(str(exc), 1) from None
    best = best_threshold(points)
    table = render_sweep(points, best, current)
    out = output or Path("var/eval") / qa_set.name / "sweep-refusal"
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(f"# Refusal threshold sweep on {qa_set.name}\n\n{table}")
    (out / "report.json").write_text(
        json.dumps({"points": [p.__dict__ for p in points], "best": best.__dict__}, indent=2)
    )
    console.print(table)
    console.print(
        f"Best threshold: {best.threshold:.2f} (cost {best.cost:g}, abstention accuracy "
        f"{best.abstention_accuracy:.3f}, false refusals {best.false_refusals:.3f}); "
        f"current default RAGWAY_MIN_SUPPORT={current:.2f}"
    )
    console.print(f"report: {out}/report.md")


@eval_app.command("debug")
def debug(
    question: Annotated[str, typer.Argument(help="The question to trace")],
    key: Annotated[str, typer.Option(help="API key to ask as")] = "rgw-demo-public-key",
    gateway: GatewayOpt = None,
    retriever: Annotated[
        str | None, typer.Option(help="The running retriever behind --gateway")
    ] = None,
    keys_file: Annotated[Path, typer.Option(help="API key file")] = Path("config/api-keys.yaml"),
    depth: Annotated[int, typer.Option(min=1, max=100, help="Candidates shown per stage")] = 8,
    qa: Annotated[
        Path | None,
        typer.Option(help="Serve this QA set's knowledge base and keys in the private stack"),
    ] = None,
) -> None:
    """Every stage for one question: candidates, fusion, rerank, context, answer, citations."""
    from ragway_tools.commands.debug_view import show
    from ragway_tools.evaluation.answer_run import gateway as open_gateway
    from ragway_tools.evaluation.debug import debug as trace
    from ragway_tools.launcher import LaunchError

    if (gateway is None) != (retriever is None):
        raise fail("give both --gateway and --retriever, or neither (private demo stack)")
    try:
        qa_set = _qa(qa) if qa is not None else None
        if qa_set is not None and qa_set.api_keys is not None:
            keys_file = qa_set.api_keys
        with open_gateway(gateway, qa=qa_set) as (url, stack):
            addr = retriever or stack.config.retriever_addr
            # A private stack has a service token of its own, which the environment
            # does not name: without it every Search was refused (UNAUTHENTICATED).
            report = trace(
                question,
                gateway_url=url,
                retriever=addr,
                key=key,
                keys_file=keys_file,
                depth=depth,
                token=None if retriever is not None else stack.config.service_token,
            )
    except (LaunchError, ValueError, RuntimeError, grpc.RpcError) as exc:
        raise fail(str(exc), 1) from None
    show(report, console)


@eval_app.command("gate")
def gate(
    config: Annotated[Path, typer.Option(help="Gates file (YAML)")],
    report: Annotated[
        list[str] | None,
        typer.Option(help="Override a report path: NAME=PATH (repeatable)"),
    ] = None,
) -> None:
    """Compare reports with floors, ceilings and tolerances; exit 1 on any breach."""
    from ragway_tools.evaluation.release_gate import GateConfigError, apply, load_config, render

    overrides = {}
    for entry in report or []:
        name, sep, path = entry.partition("=")
        if not sep or not name or not path:
            raise fail(f"--report {entry!r}: expected NAME=PATH")
        overrides[name] = Path(path)
    try:
        outcomes = apply(load_config(config, overrides))
    except GateConfigError as exc:
        raise fail(str(exc)) from None
    console.print(render(outcomes), soft_wrap=True)  # a table, not prose: never wrapped
    breaches = [o for o in outcomes if not o.passed]
    if breaches:
        console.print(f"[bold red]gate failed:[/] {len(breaches)} of {len(outcomes)} checks")
        raise typer.Exit(1)
    console.print(f"gate passed: {len(outcomes)} checks")


SideOpt = Annotated[
    str,
    typer.Option(
        help="report.json of `ragway eval answers`, build:ID_OR_ALIAS, or path:FILE.yaml "
        "(path options); live sides are served by a private stack"
    ),
]


@eval_app.command("compare")
def compare(
    a: Annotated[str, typer.Option("--a", help="Side A (the baseline)")],
    b: Annotated[str, typer.Option("--b", help="Side B (the candidate)")],
    qa: QAOpt = Path("eval/demo-qa.yaml"),
    alpha: Annotated[float, typer.Option(min=0.0001, max=0.5, help="Test level")] = 0.05,
    admin_key: Annotated[
        str, typer.Option(help="Admin key of the private stack (sets its baseline path)")
    ] = "rgw-demo-admin-key",
    output: Annotated[Path | None, typer.Option(help="Report folder")] = None,
) -> None:
    """Both sides answer the QA set; paired per-segment deltas; exit 1 when B is worse."""
    import httpx

    from ragway_tools.evaluation import compare as cmp
    from ragway_tools.evaluation.answer_run import AskError, ask_all
    from ragway_tools.evaluation.answer_run import gateway as open_gateway
    from ragway_tools.launcher import LaunchError
    from services.gateway.paths.models import PathOptions

    qa_set = _qa(qa)
    try:
        sides = [cmp.parse_side(a), cmp.parse_side(b)]
        for side in sides:
            if side.options is not None:
                PathOptions.model_validate(side.options)
    except (cmp.CompareError, ValueError) as exc:
        raise fail(str(exc)) from None
    outcomes: list[dict[str, cmp.Outcome]] = [{}, {}]
    try:
        for i, side in enumerate(sides):
            if side.report is not None:
                outcomes[i] = cmp.load_report(side.report)
        live = [i for i, side in enumerate(sides) if side.options is not None]
        if live:
            with progress_bar() as progress, open_gateway(None, qa=qa_set) as (url, _):
                for i in live:
                    resp = httpx.put(
                        f"{url}/v1/admin/paths/baseline",
                        json=sides[i].options,
                        headers={"Authorization": f"Bearer {admin_key}"},
                        timeout=60,
                    )
                    if resp.status_code != 200:
                        raise cmp.CompareError(f"{sides[i].name}: {resp.text[:300]}")
                    task = progress.add_task(sides[i].name[:14], total=len(qa_set.items))
                    scores = ask_all(url, qa_set, on_item=partial(progress.advance, task))
                    outcomes[i] = {s.item.id: cmp.outcome_of(s) for s in scores}
        result = cmp.compare(qa_set, *outcomes, a_name=a, b_name=b, alpha=alpha)
    except cmp.CompareError as exc:
        raise fail(str(exc)) from None
    except (LaunchError, AskError) as exc:
        raise fail(str(exc), 1) from None
    text = cmp.render(result)
    out = output or Path("var/eval") / qa_set.name / "compare"
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(text)
    (out / "report.json").write_text(json.dumps(cmp.to_json(result), indent=2) + "\n")
    console.print(text, soft_wrap=True)
    console.print(f"report: {out}/report.md, report.json")
    if result.worse:
        raise typer.Exit(1)
