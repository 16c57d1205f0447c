"""``ragway eval debug`` and ``eval answers`` against the suite's running stack."""

from __future__ import annotations

import pytest

from ragway_tools.evaluation.answer_run import ask_all
from ragway_tools.evaluation.debug import DebugReport, debug
from ragway_tools.evaluation.qa import QAItem, QASet
from ragway_tools.launcher import Stack
from tests.conftest import FIXTURES
from tests.integration.conftest import KEYS


def debug_acme(stack: Stack, depth: int = 10, token: str | None = None) -> DebugReport:
    """``ragway eval debug`` of one Acme question against the suite's stack."""
    return debug(
        "What is the Acme meal allowance per day?",
        gateway_url=stack.config.gateway_url,
        retriever=stack.config.retriever_addr,
        key=KEYS["acme"],
        keys_file=FIXTURES / "api-keys.yaml",
        depth=depth,
        token=token,
    )


def test_debug_traces_every_stage_of_one_question(stack: Stack) -> None:
    report = debug_acme(stack)
    assert (report.tenant, report.groups) == ("acme", ["staff"])
    stages = {s.stage: s for s in report.stages}
    assert list(stages) == ["bm25", "dense", "fused (RRF)", "reranked"]
    # Retrieval ran with the caller's scope: only Acme's documents, in every stage.
    for stage in report.stages:
        assert stage.hits, stage.stage
        assert all(h["document_id"].startswith("acme/") for h in stage.hits), stage.stage
    assert all(h["sparse_rank"] for h in stages["bm25"].hits)
    assert all(h["dense_rank"] for h in stages["dense"].hits)
    # No reranker in the suite's stack: the stage says so instead of pretending.
    assert any("no reranker" in d for d in stages["reranked"].degraded)
    assert not report.answer["refused"]
    assert report.citations and all(c.verdict == "supported" for c in report.citations)
    cited = {c.document_id for c in report.citations}
    assert cited <= {s["document_id"] for s in report.answer["sources"]}


def test_debug_uses_the_stacks_own_service_token(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `ragway eval debug --qa ...` starts a private stack whose service token the
    # operator's environment does not name: the retrieval stages were refused
    # (UNAUTHENTICATED) until the stack's token was passed through.
    monkeypatch.delenv("RAGWAY_SERVICE_TOKEN", raising=False)
    monkeypatch.delenv("RAGWAY_SERVICE_TOKEN_FILE", raising=False)
    report = debug_acme(stack, depth=3, token=stack.config.service_token)
    for stage in report.stages[:3]:  # bm25, dense, fused: searched, not refused
        assert stage.hits, stage.stage
        assert all(h["document_id"].startswith("acme/") for h in stage.hits), stage.stage


def test_eval_answers_scores_what_the_api_returns(stack: Stack) -> None:
    qa = QASet(
        "suite",
        (
            QAItem(
                "meal",
                "What is the Acme meal allowance per day?",
                ("45 euros",),
                ("acme/expense-policy",),
                "exact",
                "acme",
            ),
            QAItem("cup", "Who won the 1998 football world cup?", (), (), "unanswerable", "acme"),
            QAItem("bands", "What are the salary bands?", (), (), "forbidden", "acme"),
        ),
        callers={"acme": KEYS["acme"]},
    )
    scores = {s.item.id: s for s in ask_all(stack.config.gateway_url, qa)}
    assert scores["cup"].refused and scores["cup"].correct
    assert scores["bands"].refused and scores["bands"].correct  # HR-only for this caller
    meal = scores["meal"]
    assert not meal.refused and meal.faithful and meal.verdict == "ok", meal.answer
    assert meal.latency_ms > 0
