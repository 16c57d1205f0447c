"""Tenants and access groups are applied inside the search: forbidden text never comes back."""

from __future__ import annotations

import httpx

from tests.integration.conftest import auth

HOTEL = "What is the highest hotel limit per night in Europe?"


def ask(api: httpx.Client, who: str, question: str) -> dict:  # type: ignore[type-arg]
    resp = api.post("/v1/ask", json={"question": question, "top_k": 10}, headers=auth(who))
    assert resp.status_code == 200, resp.text
    body: dict = resp.json()  # type: ignore[type-arg]
    return body


def test_another_tenants_document_never_comes_back_even_as_the_best_match(
    api: httpx.Client,
) -> None:
    # The Globex text matches this question best, word for word.
    body = ask(api, "acme", HOTEL)
    docs = {s["document_id"] for s in body["sources"]}
    assert "globex/expense-policy" not in docs
    assert "310" not in body["answer"]
    assert "acme/expense-policy" in docs
    globex = ask(api, "globex", HOTEL)
    assert {s["document_id"] for s in globex["sources"]} == {"globex/expense-policy"}
    assert "310 dollars" in globex["answer"]


def test_deprecated_and_not_yet_effective_versions_are_never_sources(api: httpx.Client) -> None:
    body = ask(api, "acme", HOTEL)
    docs = {s["document_id"] for s in body["sources"]}
    assert not docs & {"acme/expense-policy-2019", "acme/expense-policy-2030"}
    assert "180 euros" in body["answer"]
    assert "120" not in body["answer"] and "240" not in body["answer"]


def test_a_restricted_document_needs_its_group(api: httpx.Client) -> None:
    q = "What is the salary band for a senior engineer?"
    staff = ask(api, "acme", q)
    assert "acme/salary-bands" not in {s["document_id"] for s in staff["sources"]}
    assert "82,000" not in staff["answer"]
    hr = ask(api, "acme-hr", q)
    assert [c["document_id"] for c in hr["citations"]] == ["acme/salary-bands"]
    assert "82,000 to 104,000 euros" in hr["answer"]


def test_the_demo_runbook_is_invisible_without_the_sre_group(api: httpx.Client) -> None:
    body = ask(api, "demo", "What is the escalation code word for a full outage of the gateway?")
    assert "runbooks/on-call" not in {s["document_id"] for s in body["sources"]}
    assert "ORCHID" not in body["answer"]


def test_another_tenants_run_answers_like_a_missing_one(api: httpx.Client) -> None:
    run = api.post("/v1/runs", json={"question": HOTEL}, headers=auth("acme")).json()["run_id"]
    for path in (f"/v1/runs/{run}", f"/v1/runs/{run}/events"):
        resp = api.get(path, headers=auth("globex"))
        assert resp.status_code == 404
        assert resp.json()["error"]["code"] == "run_not_found"
