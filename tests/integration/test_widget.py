"""The embeddable widget in headless Chromium, on a page of another origin than the gateway.

The host pages are served by a tiny http.server on another loopback port; the gateway
serves /widget.js and the API with CORS. The generator pauses before every delta, so a
test can reload or stop while the answer is still streaming.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from ragway.kb import Defaults, discover, parse_document
from ragway_tools.cli import app as cli
from ragway_tools.launcher import Stack, StackConfig, free_port
from ragway_tools.loading import load_documents
from tests.conftest import FIXTURES, ROOT
from tests.integration.conftest import KEYS, auth
from tests.integration.netcut import CuttableProxy, cuttable
from tests.integration.runs import QUESTION
from tests.integration.test_page import CHROMIUM, browser  # noqa: F401  (the Chromium fixture)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (make browser)")

DELAY_MS = 250
SCREENSHOTS = ROOT / "var" / "screenshots"
HOSTILE = "How often is the gadget vault rotated?"
# A conversation on the demo knowledge base: the follow-up leans on the first question.
OPENING = "How are API keys stored?"
FOLLOW_UP = "how do I add one?"
STANDALONE = "how do I add API keys?"
AXE = ROOT / "tests/vendor/axe-core/axe.min.js"
# A widget key (kind: widget) for the host pages' origin, added to the fixture keys.
WIDGET_KEY = "key-host-widget"
ADMIN_KEY = "key-demo-admin"

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
def host_origin() -> str:
    """The host pages' origin, known before the gateway starts so a widget key can list it."""
    return f"http://127.0.0.1:{free_port()}"


def keys_with_widget_key(path: Path, origin: str) -> Path:
    keys = yaml.safe_load((FIXTURES / "api-keys.yaml").read_text())
    keys["keys"].append(
        {
            "id": "host-widget",
            "sha256": hashlib.sha256(WIDGET_KEY.encode()).hexdigest(),
            "tenant": "demo",
            "groups": ["public"],
            "allowed_origins": [origin],
            "kind": "widget",
        }
    )
    path.write_text(yaml.safe_dump(keys))
    return path


@pytest.fixture(scope="module")
def slow(
    stack: Stack, host_origin: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
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
        api_keys_file=keys_with_widget_key(tmp / "api-keys.yaml", host_origin),
        # Paced like an LLM: four-word deltas (the default is one a sentence), so
        # the answer is still streaming when the test acts on it.
        extra_env={
            "RAGWAY_FAULT_DELTA_DELAY_MS": str(DELAY_MS),
            "RAGWAY_EXTRACTIVE_DELTA_WORDS": "4",
        },
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
def proxy(slow: Stack) -> Iterator[CuttableProxy]:
    """The gateway behind a link the network-cut test can drop."""
    with cuttable("127.0.0.1", slow.config.gateway_port) as p:
        yield p


@pytest.fixture(scope="module")
def host(
    slow: Stack, host_origin: str, proxy: CuttableProxy, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """Host pages on another loopback origin: csp.html (strict CSP), and one per key;
    cut.html reaches the gateway through the cuttable proxy."""
    pages = tmp_path_factory.mktemp("host")
    gw = slow.config.gateway_url
    policy = f'<meta http-equiv="Content-Security-Policy" content="{CSP.format(gw=gw)}">'
    via = f'<meta http-equiv="Content-Security-Policy" content="{CSP.format(gw=proxy.url)}">'
    (pages / "cut.html").write_text(HOST_PAGE.format(gw=proxy.url, key=KEYS["demo-sre"], csp=via))
    for name, key, csp in [
        ("csp.html", KEYS["demo-sre"], policy),
        ("public.html", KEYS["demo"], policy),
        ("widget.html", WIDGET_KEY, policy),
        # No CSP here: only the widget's rendering stands between the text and the page.
        ("xss.html", KEYS["hostile"], ""),
    ]:
        (pages / name).write_text(HOST_PAGE.format(gw=gw, key=key, csp=csp))
    handler = functools.partial(_QuietHandler, directory=str(pages))
    port = int(host_origin.rsplit(":", 1)[1])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield host_origin
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


def saved_state(page: Any) -> dict[str, Any]:
    """What the widget keeps in sessionStorage."""
    state: dict[str, Any] = page.evaluate(
        "() => JSON.parse(Object.entries(sessionStorage)"
        ".find(([k]) => k.startsWith('ragway-widget'))[1])"
    )
    return state


def run_id_of(page: Any) -> str:
    run_id: str = saved_state(page)["exchanges"][-1]["runId"]
    return run_id


def record(slow: Stack, page: Any, who: str, origin: str | None = None) -> dict[str, Any]:
    run_id = run_id_of(page)
    headers = auth(who) if who in KEYS else {"Authorization": f"Bearer {who}"}
    if origin is not None:
        headers["Origin"] = origin
    resp = httpx.get(f"{slow.config.gateway_url}/v1/runs/{run_id}", headers=headers, timeout=10)
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


def converse(page: Any) -> None:
    """The opening question, then the follow-up, each to its end."""
    for n, question in enumerate((OPENING, FOLLOW_UP), start=1):
        ask(page, question)
        page.wait_for_selector(f".exchange:nth-child({n})")
        assert wait_state(page, "done") == "done"


def test_a_follow_up_continues_the_conversation_and_shows_what_was_searched(
    browser: Any,  # noqa: F811
    slow: Stack,
    host: str,
) -> None:
    page = open_widget(browser, host + "/csp.html")
    ask(page, OPENING)
    assert wait_state(page, "done") == "done"
    opening = record(slow, page, "demo-sre")
    conversation_id = opening["conversation_id"]
    assert saved_state(page)["conversationId"] == conversation_id
    assert opening["rewritten_query"] is None and last(page, ".searched").is_hidden()

    ask(page, FOLLOW_UP)
    page.wait_for_selector(".exchange:nth-child(2)")
    assert wait_state(page, "done") == "done"
    follow_up = record(slow, page, "demo-sre")
    assert follow_up["conversation_id"] == conversation_id  # sent with the question
    assert (follow_up["question"], follow_up["rewritten_query"]) == (FOLLOW_UP, STANDALONE)
    assert last(page, ".searched").inner_text() == f"Searched for: {STANDALONE}"
    assert "SHA-256" in last(page, ".text").inner_text()
    assert last(page, ".source").count() >= 1
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "widget-conversation.png"))

    page.reload()  # the conversation and what was searched for are kept in the tab
    page.wait_for_selector(".exchange:nth-child(2)[data-state=done]")
    assert last(page, ".searched").inner_text() == f"Searched for: {STANDALONE}"
    assert saved_state(page)["conversationId"] == conversation_id

    page.click(".icon.new")  # a new conversation: no history, the follow-up asked alone
    assert page.locator(".exchange").count() == 0
    assert shadow_focus(page) == "rw-input"
    ask(page, FOLLOW_UP)
    assert wait_state(page, "done") == "done"
    alone = record(slow, page, "demo-sre")
    assert alone["conversation_id"] not in (None, conversation_id)
    assert alone["rewritten_query"] is None and last(page, ".searched").is_hidden()
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


def shadow_focus(page: Any) -> str:
    """The class of the focused element inside the widget ('' when focus is elsewhere)."""
    found: str = page.evaluate(
        "() => { const h = document.getElementById('ragway-widget');"
        " if (document.activeElement !== h) return '';"
        " const a = h.shadowRoot.activeElement; return a ? (a.id || a.className) : ''; }"
    )
    return found


def exported(slow: Stack) -> list[dict[str, Any]]:
    """What an operator gets from ``ragway feedback export`` (JSON Lines)."""
    result = CliRunner().invoke(
        cli,
        ["feedback", "export", "--tenant", "demo", "--url", slow.config.gateway_url,
         "--key", ADMIN_KEY],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def test_thumbs_after_an_answer_store_feedback_on_the_run(
    browser: Any,  # noqa: F811
    slow: Stack,
    host: str,
) -> None:
    # A widget key, as a site would publish it: bound to the host page's origin.
    page = open_widget(browser, host + "/widget.html")
    ask(page, QUESTION)
    assert wait_state(page, "done") == "done"
    run = record(slow, page, WIDGET_KEY, origin=host)
    assert run["origin"] == host and run["key_id"] == "host-widget"
    # Not from another origin, not without one (curl): a copied key reads nothing.
    for origin in ("http://127.0.0.1:1", None):
        headers = {"Authorization": f"Bearer {WIDGET_KEY}"}
        if origin:
            headers["Origin"] = origin
        resp = httpx.get(f"{slow.config.gateway_url}/v1/runs/{run['id']}", headers=headers)
        assert resp.status_code == 403, resp.text
    page.click(".exchange:last-child .thumb.down")
    page.wait_for_selector(".exchange:last-child .thumb.down[aria-pressed=true]")
    assert "Thanks" in last(page, ".state").inner_text()
    mine = [r for r in exported(slow) if r["run_id"] == run["id"]]
    assert [(r["rating"], r["origin"], r["path"]) for r in mine] == [("down", host, "baseline")]
    # Changing one's mind replaces the feedback: still one record, now up.
    page.click(".exchange:last-child .thumb.up")
    page.wait_for_selector(".exchange:last-child .thumb.up[aria-pressed=true]")
    assert last(page, ".thumb.down").get_attribute("aria-pressed") == "false"
    mine = [r for r in exported(slow) if r["run_id"] == run["id"]]
    assert [r["rating"] for r in mine] == ["up"]
    # The run's own record shows it too: the latest rating and when it was sent.
    shown = record(slow, page, WIDGET_KEY, origin=host)["feedback"]
    assert (shown["rating"], shown["comment"], shown["at_ms"]) == ("up", None, mine[0]["at_ms"])
    page.close()


def test_the_widget_is_keyboard_operable(browser: Any, host: str) -> None:  # noqa: F811
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(host + "/csp.html")
    page.keyboard.press("Tab")
    assert shadow_focus(page) == "launcher"
    page.keyboard.press("Enter")  # opens the panel, focus in the question box
    assert shadow_focus(page) == "rw-input"
    page.keyboard.type(QUESTION)
    page.keyboard.press("Enter")
    assert wait_state(page, "done") == "done"
    page.keyboard.press("Shift+Tab")  # back from the box: the last answer's thumbs down
    assert shadow_focus(page) == "thumb down"
    page.keyboard.press("Space")
    page.wait_for_selector(".exchange:last-child .thumb.down[aria-pressed=true]")
    page.keyboard.press("Escape")  # closes the panel and gives the focus back
    assert page.locator("#rw-panel").is_hidden()
    assert shadow_focus(page) == "launcher"
    page.close()


def test_axe_finds_no_serious_accessibility_violations(
    browser: Any,  # noqa: F811
    host: str,
) -> None:
    # The strict policy would refuse the injected axe script; the widget is the same.
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(host + "/csp.html")
    page.click(".launcher")
    converse(page)  # answers, sources, thumbs and a "Searched for" line all shown
    assert last(page, ".searched").is_visible()
    page.add_script_tag(path=str(AXE))
    for theme in ("light", "dark"):
        page.emulate_media(color_scheme=theme)
        results = page.evaluate(
            "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
            ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target)}))"
        )
        serious = [v for v in results if v["impact"] in ("serious", "critical")]
        assert serious == [], (theme, serious)
    context.close()


def test_a_network_cut_mid_answer_resumes_to_the_exact_answer_once(
    browser: Any,  # noqa: F811
    slow: Stack,
    host: str,
    proxy: CuttableProxy,
) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    streams: list[str] = []  # the Last-Event-ID of each stream the widget opened

    def opened(request: Any) -> None:
        if "/events" in request.url:
            streams.append(request.headers.get("last-event-id", ""))

    page.on("request", opened)
    page.goto(host + "/cut.html")
    page.click(".launcher")
    ask(page, QUESTION)
    page.wait_for_selector(".exchange:last-child[data-state=streaming]", timeout=30_000)
    proxy.cut()  # the open stream is reset; reconnects are refused until restored
    assert wait_state(page, "reconnecting") == "reconnecting"
    cut_at = last(page, ".text").inner_text()
    page.wait_for_timeout(6 * DELAY_MS)  # the run goes on writing while the page is cut off
    proxy.restore()
    assert wait_state(page, "done") == "done"
    answer = record(slow, page, "demo-sre")["answer"]
    text = last(page, ".text").inner_text()
    assert cut_at and len(cut_at) < len(answer), "the cut did not fall mid-answer"
    assert text == answer  # nothing missing, nothing twice
    assert len(streams) >= 2 and streams[0] == "" and all(streams[1:]), streams
    assert page.locator(".exchange").count() == 1
    assert proxy.cuts >= 1
    page.close()
