"""The Gradio console's panels, from a run record: no Gradio needed to check them."""

from __future__ import annotations

from typing import Any

import pytest

from services.gateway.console import render

pytestmark = pytest.mark.unit


def _source(number: int, text: str = "Reconnect with Last-Event-ID.") -> dict[str, Any]:
    return {
        "number": number, "source_id": f"doc#{number}", "document_id": "doc", "title": "Streaming",
        "section": "Replay", "url": "/docs/streaming", "version": "3", "score": 0.5 + number,
        "text": text,
    }  # fmt: skip


def _run(**fields: Any) -> dict[str, Any]:
    sources = [_source(1), _source(2, "<script>alert(1)</script> & more")]
    run = {
        "id": "run_1", "status": "succeeded", "question": "How?", "answer": "Reconnect. [1]",
        "sources": sources, "citations": [sources[0]], "verdict": "grounded",
        "evidence_score": 0.8, "degraded": [{"stage": "rerank", "reason": "timeout"}],
        "timings_ms": {"retrieval": 12.4, "generation": 40.0},
    }  # fmt: skip
    return run | fields


def test_each_passage_is_a_card_in_order_and_only_the_cited_are_marked() -> None:
    html = render.evidence_html(_run())
    assert html.index('class="evidence cited" data-source-id="doc#1"') < html.index(
        'class="evidence" data-source-id="doc#2"'
    )
    assert "version 3 · score 1.5000" in html and "[1] Streaming — Replay · cited" in html


def test_text_from_the_api_is_escaped_never_markup() -> None:
    html = render.evidence_html(_run())
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in html
    debug = render.debug_html(_run(question="<b>bold</b>"))
    assert "<b>bold</b>" not in debug and "&lt;b&gt;bold&lt;/b&gt;" in debug


def test_the_debug_path_lists_verdict_degradations_and_timings() -> None:
    debug = render.debug_html(_run())
    assert "<td>verdict</td><td>grounded</td>" in debug
    assert "<td>evidence score</td><td>0.8000</td>" in debug
    assert "<td>rerank</td><td>timeout</td>" in debug
    assert "<td>retrieval</td><td>12</td>" in debug
    assert "<td>2</td><td>Streaming</td><td>Replay</td><td>2.5000</td><td>not cited</td>" in debug


def test_a_refusal_is_shown_with_its_reason() -> None:
    run = _run(refused=True, answer=None, refusal_detail="no passage answers this")
    assert render.answer_markdown(run) == "Refused: no passage answers this"
    assert render.answer_markdown(_run()) == "Reconnect. [1]"
