"""The demo page in a real browser (headless Chromium) against the real stack."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from ragway_tools.launcher import Stack

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None and os.environ.get("CI"):
    raise RuntimeError("CI needs Chromium for the browser tests (.ci/run installs it)")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (make browser)")


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


def ask(browser: Any, stack: Stack, question: str, key: str) -> Any:
    page = browser.new_page()
    page.goto(stack.config.gateway_url + "/")
    page.click("details summary")
    page.fill("#api-key", key)
    page.fill("#question", question)
    page.click("#ask")
    page.wait_for_selector("#status[data-state=done], #status[data-state=error]", timeout=30_000)
    return page


def test_the_page_streams_a_cited_answer_with_its_sources(browser: Any, stack: Stack) -> None:
    page = ask(browser, stack, "How do I resume a stream after a disconnect?", "key-demo-sre")
    assert page.get_attribute("#status", "data-state") == "done"
    assert "Last-Event-ID" in page.inner_text("#answer")
    cited = page.query_selector_all(".source.cited")
    assert cited, "no source card is marked cited"
    assert any("Streaming" in card.inner_text() for card in cited)
    assert len(page.query_selector_all(".source")) >= len(cited)
    page.close()


def test_the_page_shows_a_refusal(browser: Any, stack: Stack) -> None:
    page = ask(browser, stack, "What is the capital of France?", "key-demo-sre")
    assert "No answer" in page.inner_text("#answer")
    assert page.query_selector_all(".source.cited") == []
    page.close()


def test_the_page_shows_an_api_error_message(browser: Any, stack: Stack) -> None:
    # This key only admits https://www.ragway.example; the page's origin is loopback.
    page = ask(browser, stack, "How do I resume a stream?", "key-demo-public")
    assert page.get_attribute("#status", "data-state") == "error"
    assert "origin" in page.inner_text("#error")
    page.close()


def ask_again(page: Any, question: str) -> None:
    """Ask on a page that already answered: done once the new run (its id in the meta
    line) has ended."""
    before = page.inner_text("#meta")
    page.fill("#question", question)
    page.click("#ask")
    page.wait_for_function(
        "before => ['done', 'error'].includes(document.getElementById('status').dataset.state)"
        " && document.getElementById('meta').innerText !== before",
        arg=before,
        timeout=30_000,
    )


def test_the_page_continues_a_conversation_and_shows_what_was_searched(
    browser: Any, stack: Stack
) -> None:
    page = ask(browser, stack, "How are API keys stored?", "key-demo-sre")
    assert page.is_hidden("#searched")
    assert "1 question" in page.inner_text("#conversation")
    ask_again(page, "how do I add one?")
    assert page.get_attribute("#status", "data-state") == "done"
    assert page.inner_text("#searched") == "Searched for: how do I add API keys?"
    assert "2 questions" in page.inner_text("#conversation")
    page.click("#new-conversation")  # the next question stands alone
    assert page.is_hidden("#conversation")
    ask_again(page, "how do I add one?")
    assert page.is_hidden("#searched")
    assert "1 question" in page.inner_text("#conversation")
    page.close()


def test_a_bracket_quoted_from_a_page_shows_as_text_and_cites_nothing(
    browser: Any, stack: Stack
) -> None:
    # docs/canary.md writes `"steps": [5, 25, 50]`; the answer quotes it escaped.
    page = ask(
        browser, stack, 'What does "steps" look like in POST /v1/admin/canary?', "key-demo-sre"
    )
    assert page.get_attribute("#status", "data-state") == "done"
    text = page.inner_text("#answer .text")
    assert '"steps": [5, 25, 50]' in text and "\\[" not in text
    groups = [
        [a.get_attribute("data-cite") for a in g.query_selector_all("a.cite")]
        for g in page.query_selector_all("#answer .cite-group")
    ]
    assert groups and all(len(g) == 1 for g in groups), groups
    page.close()
