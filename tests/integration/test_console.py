"""The evidence console in a real browser (headless Chromium) against the real stack."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragway_tools.launcher import Stack
from tests.integration.conftest import KEYS, auth
from tests.integration.test_page import CHROMIUM

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (make browser)"),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"],
        )  # fmt: skip
        yield b
        b.close()


def _open(browser: Any, stack: Stack) -> Any:
    page = browser.new_page()
    page.goto(stack.config.gateway_url + "/console")
    page.fill("#api-key", KEYS["demo-sre"])
    return page


def _done(page: Any) -> str:
    page.wait_for_selector("#status[data-state=done], #status[data-state=error]", timeout=30_000)
    return str(page.get_attribute("#status", "data-state"))


def _evidence(page: Any) -> list[tuple[str, bool, str]]:
    return [
        (card.get_attribute("data-source-id"), "cited" in card.get_attribute("class"),
         card.inner_text())
        for card in page.query_selector_all(".evidence")
    ]  # fmt: skip


def test_an_answer_is_shown_beside_exactly_the_passages_it_came_from(
    browser: Any, stack: Stack, api: httpx.Client
) -> None:
    page = _open(browser, stack)
    page.fill("#question", "How do I resume a stream after a disconnect?")
    page.click("#ask")
    assert _done(page) == "done", page.inner_text("#error")
    assert "Last-Event-ID" in page.inner_text("#answer")
    run_id = page.input_value("#run-id")
    record = api.get(f"/v1/runs/{run_id}", headers=auth("demo-sre")).json()
    assert record["channel"] == "console"
    shown = _evidence(page)
    # One card per source of the run record, in its order, cited exactly where it cites.
    assert [s[0] for s in shown] == [s["source_id"] for s in record["sources"]]
    cited = {c["source_id"] for c in record["citations"]}
    assert cited and {s[0] for s in shown if s[1]} == cited
    for (_, _, text), source in zip(shown, record["sources"], strict=True):
        assert source["title"] in text and f"version {source['version']}" in text
        assert f"score {source['score']:.4f}" in text
    assert any("Streaming" in text for _, is_cited, text in shown if is_cited)
    assert page.inner_text(".meta-verdict") == "grounded"
    if artifacts := os.environ.get("RAGWAY_TEST_ARTIFACTS"):  # for a change's note
        page.screenshot(path=str(Path(artifacts) / "console-evidence.png"), full_page=True)
    page.close()


def test_a_past_run_is_looked_up_by_id_and_an_unknown_id_says_so(
    browser: Any, stack: Stack, api: httpx.Client
) -> None:
    reply = api.post(
        "/v1/ask", json={"question": "What is the capital of France?"}, headers=auth("demo-sre")
    ).json()
    page = _open(browser, stack)
    page.fill("#run-id", reply["run_id"])
    page.click("#lookup")
    assert _done(page) == "done", page.inner_text("#error")
    assert page.inner_text(".meta-run-id") == reply["run_id"]
    assert page.inner_text("#refusal").startswith("Refused:")
    assert page.query_selector_all(".evidence.cited") == []

    page.fill("#run-id", "run_does_not_exist")
    page.click("#lookup")
    assert _done(page) == "error"
    assert "no run with id 'run_does_not_exist'" in page.inner_text("#error")
    assert page.query_selector_all(".evidence") == []
    page.close()
