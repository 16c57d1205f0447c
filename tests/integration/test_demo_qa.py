"""The demo QA set through the public API: answered with the right source, or refused."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import yaml

from tests.conftest import FIXTURES
from tests.integration.conftest import auth

ITEMS: list[dict[str, Any]] = yaml.safe_load((FIXTURES / "demo-qa.yaml").read_text())["items"]


@pytest.mark.parametrize(
    "item",
    [
        pytest.param(i, marks=pytest.mark.xfail(reason=i["known_failure"], strict=True))
        if i.get("known_failure")
        else i
        for i in ITEMS
    ],
    ids=[i["question"][:48] for i in ITEMS],
)
def test_demo_question(api: httpx.Client, item: dict[str, Any]) -> None:
    caller = "demo-sre" if item.get("caller") == "sre" else "demo"
    resp = api.post("/v1/ask", json={"question": item["question"]}, headers=auth(caller))
    assert resp.status_code == 200, resp.text
    body = resp.json()
    # The extractive answer copies passage sentences: the output checks find nothing.
    assert [d for d in body["degraded"] if d["stage"] == "generator"] == []
    if item["expect"] == "refuse":
        assert body["refused"], f"answered: {body['answer']}"
        assert body["citations"] == []
    else:
        assert not body["refused"], body["reason"]
        expected = item["document"] if isinstance(item["document"], list) else [item["document"]]
        cited = {c["document_id"] for c in body["citations"]}
        assert cited & set(expected), body["answer"]


def test_the_runbook_answer_needs_the_sre_group(api: httpx.Client) -> None:
    q = "What is the escalation code word for a full outage of the gateway?"
    body = api.post("/v1/ask", json={"question": q}, headers=auth("demo")).json()
    assert body["refused"]
    assert "runbooks/on-call" not in {s["document_id"] for s in body["sources"]}
