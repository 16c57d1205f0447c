"""The embeddable widget in headless Chromium, on a page of another origin than the gateway.

The host pages are served by a tiny http.server on another loopback port; the gateway
serves /widget.js and the API with CORS. The generator pauses before every delta, so a
test can reload or stop while the answer is still streaming.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ragway.kb import Defaults, discover, parse_document
from ragway_tools.launcher import Stack, StackConfig, free_port
from ragway_tools.loading import load_documents
from tests.conftest import FIXTURES, ROOT
from tests.integration.conftest import KEYS, auth
from tests.integration.runs import QUESTION
from tests.integration.test_page import CHROMIUM, browser  # noqa: F401  (the Chromium fixture)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (make browser)")

DELAY_MS = 250
SCREENSHOTS = ROOT / "var" / "screenshots"
HOSTILE = "How often is the gadget vault rotated?"

# A strict policy: scripts and connections only to the gateway, nothing inline at all.
CSP = "default-src 'none'; script-src {gw}; connect-src {gw}"

HOST_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
{csp}
<title>Host page</title></head>
<body><h1>A page of another origin</h1>
<script src="{gw}/widget.js" data-key="{key}" data-title="Ask ragway" defer></script>
</body></html>
"""

HOSTILE_DOC = """---
title: "Gadget vault <img src=x onerror=\\"window.__xss=1\\">"
document_id: hostile/vault
version: "1"
---
# Gadget vault

## Rotation

The gadget vault is rotated every 9 days <img src=x onerror="window.__xss=2"> by the vault team.
The gadget vault rotation is logged <script>window.__xss=3</script> in the vault journal.
"""


@pytest.fixture(scope="module")
def slow(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Own Redis, a generator that pauses before every delta, a gateway; the shared retriever."""
    tmp = tmp_path_factory.mktemp("widget")
    kb = tmp / "kb"
    kb.mkdir()
    (kb / "vault.md").write_text(HOSTILE_DOC)
    docs = [
        parse_document(path, root, Defaults(tenant="hostile", groups=("public",)))
        for path, root in discover([kb])
    ]
    load_documents(stack.config.retriever_addr, docs, token=stack.config.service_token)
    config = StackConfig.on_free_ports(
        tmp / "stack",
        retriever_port=stack.config.retriever_port,
        service_token=stack.config.service_token,
        api_keys_file=FIXTURES / "api-keys.yaml",
        extra_env={"RAGWAY_FAULT_DELTA_DELAY_MS": str(DELAY_MS)},
    )
    s = Stack(config)
    s.logs_dir.mkdir(parents=True)
    try:
        s.start_redis()
        s.start_service("generator")
        s.start_gateway()
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="module")
def host(slow: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Host pages on another loopback origin: csp.html (strict CSP), and one per key."""
    pages = tmp_path_factory.mktemp("host")
    gw = slow.config.gateway_url
    policy = f'<meta http-equiv="Content-Security-Policy" content="{CSP.format(gw=gw)}">'
    for name, key, csp in [
        ("csp.html", KEYS["demo-sre"], policy),
        ("public.html", KEYS["demo"], policy),
        # No CSP here: only the widget's rendering stands between the text and the page.
        ("xss.html", KEYS["hostile"], ""),
    ]:
        (pages / name).write_text(HOST_PAGE.format(gw=gw, key=key, csp=csp))
    handler = functools.partial(_QuietHandler, directory=str(pages))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def open_widget(browser: Any, url: str, viewport: tuple[int, int] = (1280, 800)) -> Any:  # noqa: F811
    page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    page.violations = []
    page.on(
        "console",
        lambda m: page.violations.append(m.text) if "Content Security" in m.text else None,
    )
    page.goto(url)
    page.click(".launcher")
    return page


def ask(page: Any, question: str) -> None:
    page.fill("#rw-input", question)
    page.keyboard.press("Enter")


def last(page: Any, selector: str) -> Any:
    return page.locator(f".exchange:last-child {selector}")


def wait_state(page: Any, *states: str, timeout: int = 30_000) -> str:
    sel = ", ".join(f".exchange:last-child[data-state={s}]" for s in states)
    page.wait_for_selector(sel, timeout=timeout)
    return str(page.locator(".exchange:last-child").get_attribute("data-state"))


def record(slow: Stack, page: Any, who: str) -> dict[str, Any]:
    run_id = page.evaluate(
        "() => JSON.parse(Object.entries(sessionStorage)"
        ".find(([k]) => k.startsWith('ragway-widget'))[1]).exchanges.at(-1).runId"
    )
    resp = httpx.get(f"{slow.config.gateway_url}/v1/runs/{run_id}", headers=auth(who), timeout=10)
    assert resp.status_code == 200, resp.text
    body: dict[str, Any] = resp.json()
    return body


def test_the_widget_streams_a_cited_answer_on_another_origin(
    browser: Any,  # noqa: F811
    slow: Stack,
    host: str,
) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for size, name in [((1280, 800), "desktop"), ((375, 740), "phone")]:
        page = open_widget(browser, host + "/csp.html", size)
        ask(page, QUESTION)
        page.wait_for_selector(".exchange:last-child[data-state=streaming]", timeout=30_000)
        partial = last(page, ".text").inner_text()
        assert wait_state(page, "done") == "done"
        text = last(page, ".text").inner_text()
        assert partial and len(partial) < len(text), "the answer did not stream"
        assert text == record(slow, page, "demo-sre")["answer"]
        sources = last(page, ".source")
        assert sources.count() >= 1
        assert "Streaming" in sources.first.inner_text()
        assert page.violations == [], page.violations
        page.screenshot(path=str(SCREENSHOTS / f"widget-{name}.png"))
        page.close()


def test_a_reload_mid_answer_resumes_to_exactly_the_final_text(
    browser: Any,  # noqa: F811
    slow: Stack,
    host: str,
) -> None:
    page = open_widget(browser, host + "/csp.html")
    ask(page, QUESTION)
    page.wait_for_selector(".exchange:last-child[data-state=streaming]", timeout=30_000)
    resumed: list[str] = []
    page.on(
        "request",
        lambda r: (
            resumed.append(r.headers.get("last-event-id", "")) if "/events" in r.url else None
        ),
    )
    page.reload()
    assert wait_state(page, "done") == "done"
    assert resumed and resumed[0], "the stream did not resume with Last-Event-ID"
    assert last(page, ".text").inner_text() == record(slow, page, "demo-sre")["answer"]
    assert page.locator(".exchange").count() == 1
    page.close()


def test_the_stop_button_cancels_the_run(browser: Any, slow: Stack, host: str) -> None:  # noqa: F811
    page = open_widget(browser, host + "/csp.html")
    ask(page, QUESTION)
    page.wait_for_selector(".exchange:last-child[data-state=streaming]", timeout=30_000)
    page.click(".stop")
    assert wait_state(page, "cancelled", "done") == "cancelled"
    assert record(slow, page, "demo-sre")["status"] == "cancelled"
    page.close()


def test_an_origin_not_on_the_keys_list_is_refused(
    browser: Any,  # noqa: F811
    host: str,
) -> None:
    # key-demo-public admits only https://www.ragway.example.
    page = open_widget(browser, host + "/public.html")
    ask(page, QUESTION)
    assert wait_state(page, "error") == "error"
    message = last(page, ".state").inner_text()
    assert "origin" in message and "demo-public" in message
    page.close()


def test_hostile_document_text_executes_nothing(
    browser: Any,  # noqa: F811
    host: str,
) -> None:
    page = open_widget(browser, host + "/xss.html")
    ask(page, HOSTILE)
    assert wait_state(page, "done") == "done"
    page.wait_for_timeout(500)  # time for a broken <img> to fire onerror, were there one
    assert page.evaluate("() => window.__xss") is None
    root = "document.getElementById('ragway-widget').shadowRoot"
    assert page.evaluate(f"() => {root}.querySelectorAll('img, script').length") == 0
    # The markup is shown as text: in the answer and in the source title.
    assert "<img" in last(page, ".source").inner_text()
    answer = last(page, ".text").inner_text()
    assert "9 days" in answer
    page.close()


def test_the_demo_page_embeds_the_widget_under_a_strict_policy(
    browser: Any,  # noqa: F811
    slow: Stack,
) -> None:
    page = open_widget(browser, slow.config.gateway_url + "/widget-demo?key=" + KEYS["demo-sre"])
    ask(page, QUESTION)
    assert wait_state(page, "done") == "done"
    assert "Last-Event-ID" in last(page, ".text").inner_text()
    assert page.violations == [], page.violations
    page.close()
