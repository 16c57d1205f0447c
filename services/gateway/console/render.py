"""A run record (``GET /v1/runs/{id}``) as the console's panels: the answer, the evidence
the generator was given, and the run's debug path. Plain functions of the record, so
they are tested without Gradio; every text from the API is escaped, never trusted."""

from __future__ import annotations

from html import escape
from typing import Any

STYLE = """<style>
.evidence{border:1px solid #d0d7de;border-radius:6px;padding:8px 10px;margin:6px 0}
.evidence.cited{border-color:#1a7f37;background:#f0fff4}
.evidence .head{font-weight:600}.evidence .meta{color:#57606a;font-size:.85em}
.evidence .text{white-space:pre-wrap;margin-top:4px}
.debug table{border-collapse:collapse;margin:4px 0 10px}
.debug td,.debug th{border:1px solid #d0d7de;padding:2px 6px;text-align:left}
</style>"""


def answer_markdown(run: dict[str, Any]) -> str:
    """The answer, or the refusal and its reason, as text for a Markdown panel."""
    if run.get("refused"):
        reason = run.get("refusal_detail") or run.get("refusal_reason") or "no reason given"
        return f"Refused: {reason}"
    if run.get("answer"):
        return str(run["answer"])
    error = run.get("error") or {}
    return f"No answer ({run.get('status')}{': ' + error['message'] if error else ''})"


def evidence_html(run: dict[str, Any]) -> str:
    """One card per passage given to the generator, in the run's order; cited ones marked."""
    cited = {c["source_id"] for c in run.get("citations", [])}
    cards = []
    for s in run.get("sources", []):
        is_cited = s["source_id"] in cited
        meta = (
            f"version {s['version']} · score {s['score']:.4f} · "
            f"document {s['document_id']} · {s['url']}"
        )
        cards.append(
            f'<div class="evidence{" cited" if is_cited else ""}" '
            f'data-source-id="{escape(s["source_id"])}">'
            f'<div class="head">[{int(s["number"])}] {escape(s["title"])} — '
            f"{escape(s['section'])}{' · cited' if is_cited else ''}</div>"
            f'<div class="meta">{escape(meta)}</div>'
            f'<div class="text">{escape(s.get("text", ""))}</div></div>'
        )
    if not cards:
        cards.append('<p class="none">No passages reached the generator.</p>')
    return (
        STYLE
        + f'<div class="evidence-panel" data-run-id="{escape(run["id"])}">'
        + "".join(cards)
        + "</div>"
    )


def _table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def debug_html(run: dict[str, Any]) -> str:
    """What the run record tells of the path: who served it with what, the passages in
    their fused and reranked order with scores, each citation, degradations, timings."""
    cited = {c["number"] for c in run.get("citations", [])}
    about = [
        ["run id", run["id"]],
        ["status", str(run.get("status"))],
        ["channel", str(run.get("channel"))],
        ["question", run.get("question", "")],
        ["searched for", run.get("rewritten_query") or run.get("question", "")],
        ["verdict", str(run.get("verdict"))],
        ["evidence score", _number(run.get("evidence_score"))],
        ["path", f"{run.get('path')} v{run.get('path_version')}"],
        ["index build", str(run.get("build_id"))],
        ["reranker", str(run.get("reranker_model"))],
        ["rerank skipped", str(run.get("rerank_skipped"))],
        ["model", str(run.get("model"))],
        ["prompt version", str(run.get("prompt_version"))],
        ["access groups", ", ".join(run.get("access_groups", []))],
    ]
    passages = [
        [str(s["number"]), s["title"], s["section"], f"{s['score']:.4f}",
         "cited" if s["number"] in cited else "not cited"]
        for s in run.get("sources", [])
    ]  # fmt: skip
    citations = [
        [f"[{c['number']}]", c["title"], c["section"], c["document_id"]]
        for c in run.get("citations", [])
    ]
    degraded = [[d["stage"], d["reason"]] for d in run.get("degraded", [])]
    timings = [[k, f"{v:.0f}"] for k, v in run.get("timings_ms", {}).items()]
    return STYLE + (
        '<div class="debug">'
        + _table(["", ""], about)
        + "<h4>Passages given to the generator (final order, score)</h4>"
        + _table(["#", "title", "section", "score", "citation"], passages)
        + "<h4>Citations</h4>"
        + (_table(["#", "title", "section", "document"], citations) if citations else "<p>none</p>")
        + "<h4>Degradations</h4>"
        + (_table(["stage", "reason"], degraded) if degraded else '<p class="none">none</p>')
        + "<h4>Timings (ms)</h4>"
        + _table(["stage", "ms"], timings)
        + "</div>"
    )


def _number(value: Any) -> str:
    return "none" if value is None else f"{float(value):.4f}"
