"""The Telegram bot as its own process, against the real stack and a fake Bot API.

The fake (tests/telegram_fake.py) stands in for api.telegram.org, which these tests cannot
reach: python-telegram-bot talks to it over HTTP through its ``base_url`` setting, so the
bot's real polling, handlers and message edits run end to end.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragway_tools.launcher import Stack, free_port
from tests.conftest import ROOT
from tests.integration.conftest import KEYS, auth
from tests.telegram_fake import BotMessage, FakeBotApi, serve_fake_bot_api

pytestmark = pytest.mark.integration

TOKEN = "4242:test-token-that-must-never-be-logged"
ALLOWED = 1001  # demo-public: tenant demo, group public
STRANGER = 2002
# The bot's test conversation, for the channel's note (var/ is not committed).
TRANSCRIPT = ROOT / "var" / "telegram" / "transcript.md"


def _write_config(folder: Path) -> dict[str, str]:
    (folder / "demo.key").write_text(KEYS["demo"] + "\n")
    (folder / "token").write_text(TOKEN + "\n")
    (folder / "users.yaml").write_text(
        "keys:\n"
        "  demo-public: {key_file: demo.key}\n"
        "users:\n"
        f"  - {{telegram_id: {ALLOWED}, key_id: demo-public, name: Alice}}\n"
    )
    return {
        "RAGWAY_TELEGRAM_TOKEN_FILE": str(folder / "token"),
        "RAGWAY_TELEGRAM_ALLOWLIST_FILE": str(folder / "users.yaml"),
        "RAGWAY_TELEGRAM_EDIT_INTERVAL_S": "0.2",
        "RAGWAY_TELEGRAM_SOURCE_BASE_URL": "https://docs.example.com",
    }


@pytest.fixture(scope="module")
def bot(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeBotApi]:
    env = _write_config(tmp_path_factory.mktemp("telegram"))
    with serve_fake_bot_api(TOKEN) as (fake, url):
        stack.start_telegram(env=env | {"RAGWAY_TELEGRAM_API_URL": url})
        try:
            yield fake
        finally:
            stack.kill("telegram", signal.SIGTERM)
            TRANSCRIPT.parent.mkdir(parents=True, exist_ok=True)
            TRANSCRIPT.write_text(fake.transcript())
    log = (stack.logs_dir / "telegram.log").read_text()
    assert TOKEN not in log and TOKEN.split(":")[1] not in log, "the bot logged its token"
    assert "Traceback" not in log, log[-4000:]


def _finished(chat: list[BotMessage]) -> bool:
    return len(chat) >= 1 and chat[0].parse_mode == "HTML"


def test_an_allowed_user_gets_the_answer_streamed_then_its_sources_as_links(
    bot: FakeBotApi, stack: Stack, api: httpx.Client
) -> None:
    question = "How do I resume a stream after a disconnect?"
    bot.say(ALLOWED, question)
    chat = bot.wait_for(ALLOWED, _finished)
    if artifacts := os.environ.get("RAGWAY_TEST_ARTIFACTS"):  # for a change's note
        lines = [f"user {ALLOWED}: {question}"]
        lines += [f"bot (edit {i}): {text}" for i, text in enumerate(chat[0].edits)]
        (Path(artifacts) / "telegram-transcript.txt").write_text("\n\n".join(lines) + "\n")
    reply = chat[0]
    assert reply.edits[0] == "Searching the knowledge base…"
    assert len(reply.edits) >= 3, reply.edits  # placeholder, at least one partial, final
    assert "Last-Event-ID" in reply.text
    assert "<b>Sources</b>" in reply.text
    assert '[1] <a href="https://docs.example.com/' in reply.text
    # Streaming edits were rate limited: far fewer than the deltas, and never the same twice.
    assert all(a != b for a, b in zip(reply.edits, reply.edits[1:], strict=False))
    # The exchange is an ordinary run, with its channel named, under the user's key.
    log = (stack.logs_dir / "telegram.log").read_text()
    [run_id] = re.findall(rf"telegram exchange .*run_id=(run_\w+) telegram_id={ALLOWED}\b", log)
    record = api.get(f"/v1/runs/{run_id}", headers=auth("demo")).json()
    assert record["channel"] == "telegram" and record["question"] == question
    assert record["key_id"] == "demo-public" and record["citations"]


def test_an_unknown_user_is_refused_politely_and_nothing_is_asked(
    bot: FakeBotApi, stack: Stack
) -> None:
    bot.say(STRANGER, "What does the on-call runbook say?")
    chat = bot.wait_for(STRANGER, lambda c: len(c) == 1)
    assert "answers only the people its operators have added" in chat[0].text
    assert str(STRANGER) in chat[0].text
    log = (stack.logs_dir / "telegram.log").read_text()
    assert f"telegram user not allowed telegram_id={STRANGER}" in log
    assert "on-call runbook" not in log  # logged by id only


def test_a_refused_answer_is_shown_with_its_reason(bot: FakeBotApi) -> None:
    before = len(bot.chat(ALLOWED))
    bot.say(ALLOWED, "What is the capital of France?")
    chat = bot.wait_for(ALLOWED, lambda c: len(c) > before and c[before].parse_mode == "HTML")
    text = chat[before].text
    assert "I can't answer that from the knowledge base." in text
    assert "Reason:" in text and "Sources" not in text


def test_a_gateway_outage_is_a_clear_message(
    stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> None:
    env = _write_config(tmp_path_factory.mktemp("telegram-outage"))
    dead_gateway = f"http://127.0.0.1:{free_port()}"
    with serve_fake_bot_api(TOKEN) as (fake, url):
        stack.start_telegram(
            "telegram-outage",
            env=env | {"RAGWAY_TELEGRAM_API_URL": url, "RAGWAY_GATEWAY_URL": dead_gateway},
        )
        try:
            fake.say(ALLOWED, "How do I resume a stream?")
            chat = fake.wait_for(ALLOWED, lambda c: c and "cannot be reached" in c[0].text)
        finally:
            stack.kill("telegram-outage", signal.SIGTERM)
    assert chat[0].text.startswith("The knowledge service cannot be reached right now.")
    log = (stack.logs_dir / "telegram-outage.log").read_text()
    assert "gateway unavailable" in log and "Traceback" not in log


def _exchanges(stack: Stack) -> list[str]:
    log = (stack.logs_dir / "telegram.log").read_text()
    return re.findall(rf"telegram exchange .*run_id=(run_\w+) telegram_id={ALLOWED}\b", log)


def test_questions_in_a_chat_are_one_conversation_until_new(
    bot: FakeBotApi, stack: Stack, api: httpx.Client
) -> None:
    def ask(question: str) -> dict[str, Any]:
        before, runs = len(bot.chat(ALLOWED)), len(_exchanges(stack))
        bot.say(ALLOWED, question)
        bot.wait_for(ALLOWED, lambda c: len(c) > before and c[before].parse_mode == "HTML")
        run_id = _exchanges(stack)[runs]
        return dict(api.get(f"/v1/runs/{run_id}", headers=auth("demo")).json())

    opening = ask("How are API keys stored?")
    follow_up = ask("how do I add one?")
    # The follow-up was asked in the opening's conversation, so it was rewritten from it.
    assert opening["conversation_id"] and follow_up["conversation_id"] == opening["conversation_id"]
    assert follow_up["rewritten_query"] and follow_up["rewritten_query"] != "how do I add one?"

    before = len(bot.chat(ALLOWED))
    bot.say(ALLOWED, "/new")
    chat = bot.wait_for(ALLOWED, lambda c: len(c) > before)
    assert chat[before].text == "New conversation: your next question starts afresh."
    fresh = ask("How are API keys stored?")
    assert fresh["conversation_id"] and fresh["conversation_id"] != opening["conversation_id"]
    assert fresh["rewritten_query"] is None
