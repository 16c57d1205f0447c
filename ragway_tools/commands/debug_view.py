"""Rendering ``ragway eval debug``: one table per stage, then the context and the answer."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ragway_tools.evaluation.debug import DebugReport


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def show(report: DebugReport, console: Console) -> None:
    console.print(
        f"[bold]{report.question}[/]  (tenant {report.tenant}; groups {', '.join(report.groups)})"
    )
    for stage in report.stages:
        table = Table(title=f"{stage.stage}  ({stage.ms:.1f} ms)", title_justify="left")
        for col in ("#", "chunk", "bm25 (rank)", "dense (rank)", "unit (rank)", "fused", "rerank"):
            table.add_column(col, justify="right" if col != "chunk" else "left")
        for h in stage.hits:
            table.add_row(
                str(h["rank"]),
                h["chunk_id"],
                f"{_num(h['sparse'], 2)} ({h['sparse_rank'] or '-'})",
                f"{_num(h['dense'])} ({h['dense_rank'] or '-'})",
                f"{_num(h['unit'])} ({h['unit_rank'] or '-'})",
                f"{h['fused']:.4f}",
                _num(h["rerank"]),
            )
        console.print(table)
        for note in stage.degraded:
            console.print(f"  [yellow]degraded[/] {note}")
    body = report.answer
    context = Table(title="passages that reached the generator", title_justify="left")
    for col in ("[n]", "chunk", "score"):
        context.add_column(col)
    for s in body.get("sources") or []:
        context.add_row(str(s["number"]), s["source_id"], f"{s['score']:.4f}")
    console.print(context)
    if body.get("refused"):
        console.print(f"[bold]refused[/]: {body.get('reason')}  {body.get('answer')}")
    else:
        console.print(f"[bold]answer[/]: {body.get('answer')}")
    for c in report.citations:
        extra = f"; numbers not in the passage: {c.missing_numbers}" if c.missing_numbers else ""
        console.print(
            f"  [{c.number}] {c.document_id}: [bold]{c.verdict}[/] "
            f"(coverage {c.coverage:.2f}{extra})"
        )
    for d in body.get("degraded") or []:
        console.print(f"  [yellow]degraded[/] {d['stage']}: {d['reason']}")
