"""The Gradio evidence console (RAGWAY_CONSOLE=gradio) against a live gateway: through
gradio_client, as a script would drive it, and once in headless Chromium.

The gateway here has its own Redis and the session's retriever and generator
(conftest.own_redis), since the console setting is the gateway's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragway_tools.launcher import Stack
from tests.conftest import ROOT
from tests.integration.conftest import KEYS, auth, own_redis
from tests.integration.test_page import CHROMIUM

pytest.importorskip("gradio", reason="the console extra is not installed (make install)")
gradio_client = pytest.importorskip("gradio_client")

pytestmark = pytest.mark.integration

SCREENSHOTS = ROOT / "var" / "screenshots"
QUESTION = "How do I resume a stream after a disconnect?"
CARD = re.compile(r'<div class="evidence( cited)?" data-source-id="([^"]+)">')


@pytest.fixture(scope="module")
def console(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    data = tmp_path_factory.mktemp("console-gradio")
    with own_redis(stack, data, {"RAGWAY_CONSOLE": "gradio"}) as s:
        s.start_gateway()
        yield s
    log = (data / "logs" / "gateway.log").read_text()
    assert "Traceback" not in log, log[-4000:]
    assert KEYS["demo-sre"] not in log, "the console logged a key"


def _client(console: Stack, who: str) -> Any:
    key_id = {"demo-sre": "demo-sre", "acme": "acme-staff"}[who]
    return gradio_client.Client(
        console.config.gateway_url + "/console/", auth=(key_id, KEYS[who]), verbose=False
    )


@pytest.fixture(scope="module")
def client(console: Stack) -> Any:
    return _client(console, "demo-sre")


def _record(console: Stack, run_id: str) -> dict[str, Any]:
    reply = httpx.get(f"{console.config.gateway_url}/v1/runs/{run_id}", headers=auth("demo-sre"))
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def test_an_answer_is_shown_beside_exactly_the_passages_it_came_from(
    client: Any, console: Stack
) -> None:
    chat, conversation, question, run_id, status, answer, evidence, debug = client.predict(
        QUESTION, [], "", api_name="/ask"
    )
    record = _record(console, run_id)
    assert record["channel"] == "console" and record["question"] == QUESTION
    assert record["key_id"] == "demo-sre" and record["conversation_id"] == conversation
    assert question == "" and status == f"Run {run_id}: succeeded"
    assert "Last-Event-ID" in answer
    assert chat[-1]["role"] == "assistant" and answer in str(chat[-1]["content"])
    # One card per source of the run record, in its order, cited exactly where it cites.
    cards = CARD.findall(evidence)
    assert [source_id for _, source_id in cards] == [s["source_id"] for s in record["sources"]]
    cited = {c["source_id"] for c in record["citations"]}
    assert cited and {source_id for mark, source_id in cards if mark} == cited
    for source in record["sources"]:
        assert f"version {source['version']} · score {source['score']:.4f}" in evidence
    # The debug path: verdict, build, every stage timing, and the degradations.
    assert "<td>verdict</td><td>grounded</td>" in debug
    assert f"<td>index build</td><td>{record['build_id']}</td>" in debug
    for stage in record["timings_ms"]:
        assert f"<td>{stage}</td>" in debug
    assert "Degradations</h4>" in debug


def test_a_follow_up_is_asked_in_the_conversation_and_new_starts_another(
    client: Any, console: Stack
) -> None:
    chat, conversation, *_ = client.predict("How are API keys stored?", [], "", api_name="/ask")
    chat, same, _, run_id, *_ = client.predict(
        "how do I add one?", chat, conversation, api_name="/ask"
    )
    assert same == conversation and len(chat) == 4
    assert _record(console, run_id)["rewritten_query"] == "how do I add API keys?"
    assert client.predict(api_name="/new") == ([], "")


def test_a_past_run_is_looked_up_by_id_and_an_unknown_id_says_so(
    client: Any, console: Stack
) -> None:
    reply = httpx.post(
        console.config.gateway_url + "/v1/ask",
        json={"question": "What is the capital of France?"},
        headers=auth("demo-sre"),
        timeout=30,
    ).json()
    run_id, status, answer, evidence, debug = client.predict(reply["run_id"], api_name="/lookup")
    assert run_id == reply["run_id"] and status == f"Run {run_id}: succeeded"
    assert answer.startswith("Refused:")
    assert " cited" not in "".join(mark for mark, _ in CARD.findall(evidence))
    assert f"<td>run id</td><td>{run_id}</td>" in debug

    _, status, answer, evidence, debug = client.predict("run_does_not_exist", api_name="/lookup")
    assert status == "404 run_not_found: no run with id 'run_does_not_exist'"
    assert (answer, evidence, debug) == ("", "", "")


def test_feedback_on_an_answer_lands_on_the_run_record(client: Any, console: Stack) -> None:
    *_, run_id, _, _, _, _ = client.predict(QUESTION, [], "", api_name="/ask")
    said = client.predict(run_id, "down", "missing the retry header", api_name="/feedback")
    assert said == f"Feedback down recorded on {run_id}."
    feedback = _record(console, run_id)["feedback"]
    assert feedback["rating"] == "down" and feedback["comment"] == "missing the retry header"


def test_the_console_keeps_the_access_rules_of_the_key_logged_in(
    client: Any, console: Stack
) -> None:
    *_, run_id, _, _, _, _ = client.predict(QUESTION, [], "", api_name="/ask")
    # Another tenant's key sees the demo tenant's run as if it did not exist.
    other = _client(console, "acme")
    _, status, *_ = other.predict(run_id, api_name="/lookup")
    assert status == f"404 run_not_found: no run with id {run_id!r}"


def test_the_console_is_closed_without_a_login(console: Stack) -> None:
    base = console.config.gateway_url + "/console"
    # Gradio's own API answers nothing to a caller that has not logged in.
    assert httpx.get(base + "/config").status_code == 401
    for key_id, key in [
        ("demo-sre", "not-the-key"),
        ("demo-widget", "key-demo-widget"),
        ("acme-staff", KEYS["demo-sre"]),
    ]:
        reply = httpx.post(base + "/login", data={"username": key_id, "password": key})
        assert reply.status_code == 400, (key_id, reply.text)
    # A server key and an admin key log in (the issue: "behind an admin key or login").
    for key_id, key in [("demo-sre", KEYS["demo-sre"]), ("demo-admin", "key-demo-admin")]:
        reply = httpx.post(base + "/login", data={"username": key_id, "password": key})
        assert reply.status_code == 200, (key_id, reply.text)
    with pytest.raises(ValueError, match=r"(?i)login|credentials"):
        gradio_client.Client(base + "/", auth=("demo-sre", "not-the-key"), verbose=False)


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (make browser)")
def test_the_evidence_panel_in_a_browser(console: Stack, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"],
        )  # fmt: skip
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        outside: list[str] = []
        host = console.config.gateway_url
        page.on("request", lambda r: None if r.url.startswith(host) else outside.append(r.url))
        page.goto(host + "/console/")
        page.fill("input[type=text]", "demo-sre")
        page.fill("input[type=password]", KEYS["demo-sre"])
        page.keyboard.press("Enter")
        page.wait_for_selector("#question textarea", timeout=30_000)
        page.fill("#question textarea", QUESTION)
        page.click("#ask")
        page.wait_for_selector("#evidence .evidence.cited", timeout=30_000)
        assert "Last-Event-ID" in page.inner_text("#answer")
        assert page.locator("#evidence .evidence").count() >= 1
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "console-gradio-evidence.png"), full_page=True)
        browser.close()
    assert outside == [], outside  # no font, script or analytics from anywhere else
