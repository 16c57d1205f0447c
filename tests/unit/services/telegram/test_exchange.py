"""One exchange: edits are rate limited while deltas stream, Telegram's 429 is obeyed, and
a chat's questions are one conversation."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator
from typing import Any

from telegram.error import RetryAfter
from telegram.warnings import PTBDeprecationWarning

from services.telegram.allowlist import AllowList, Grant
from services.telegram.bot import Channel, Exchange
from services.telegram.gateway import (
    ACCEPTED,
    Event,
    GatewayClient,
    GatewayRejected,
    GatewayUnavailable,
)
from services.telegram.settings import TelegramSettings


class ScriptedGateway(GatewayClient):
    def __init__(self, events: list[Event], fail: bool = False) -> None:
        super().__init__("http://127.0.0.1:9", 1)
        self.events = events
        self.fail = fail

    async def ask(
        self, api_key: str, question: str, conversation_id: str | None = None
    ) -> AsyncIterator[Event]:
        for event in self.events:
            yield event
        if self.fail:
            raise GatewayUnavailable("ConnectError")


class Reply:
    """Stands in for telegram.Message: records edits; can refuse some with a 429."""

    def __init__(self, retry_after_on: set[int] | None = None, wait_s: int = 30) -> None:
        self.wait_s = wait_s
        self.edits: list[tuple[str, Any]] = []
        self.extra: list[str] = []
        self.retry_after_on = retry_after_on or set()
        self.calls = 0

    async def edit_text(self, text: str, parse_mode: Any = None, **_: Any) -> None:
        self.calls += 1
        if self.calls in self.retry_after_on:
            with warnings.catch_warnings():  # PTB 22 deprecates the int form it builds
                warnings.simplefilter("ignore", PTBDeprecationWarning)
                error = RetryAfter(self.wait_s)
            raise error
        self.edits.append((text, parse_mode))

    async def reply_text(self, text: str, **_: Any) -> None:
        self.extra.append(text)


def _deltas(n: int) -> list[Event]:
    events = [Event(f"1-{i}", "answer.delta", {"text": f"w{i} ", "index": i}) for i in range(n)]
    answer = {"answer": "".join(f"w{i} " for i in range(n)).strip(), "citations": []}
    events.append(Event("2-0", "answer.completed", answer | {"refused": False}))
    return [*events, Event("3-0", "run.completed", {"status": "succeeded"})]


async def _run(
    gateway: GatewayClient, reply: Reply, interval_s: float = 60, channel: Channel | None = None
) -> None:
    settings = TelegramSettings(telegram_edit_interval_s=interval_s)
    channel = channel or Channel(AllowList({}), gateway, settings)
    exchange = Exchange(channel, Grant(1, "k", "secret"), reply, 7)  # type: ignore[arg-type]
    await exchange.run("q")


class ConversationGateway(GatewayClient):
    """Answers in conversation "conv-n", and refuses the ids in ``gone`` as expired."""

    def __init__(self, gone: set[str]) -> None:
        super().__init__("http://127.0.0.1:9", 1)
        self.gone = gone
        self.asked: list[str | None] = []

    async def ask(
        self, api_key: str, question: str, conversation_id: str | None = None
    ) -> AsyncIterator[Event]:
        self.asked.append(conversation_id)
        if conversation_id in self.gone:
            raise GatewayRejected(404, "conversation_not_found", "no conversation")
        conversation = conversation_id or f"conv-{len(self.asked)}"
        yield Event("", ACCEPTED, {"run_id": "run_1", "conversation_id": conversation})
        for event in _deltas(2):
            yield event


async def test_a_chat_asks_in_its_conversation_and_an_expired_one_is_started_afresh() -> None:
    gateway = ConversationGateway(gone=set())
    channel = Channel(AllowList({}), gateway, TelegramSettings())
    await _run(gateway, Reply(), channel=channel)
    await _run(gateway, Reply(), channel=channel)
    assert gateway.asked == [None, "conv-1"] and channel.conversations == {7: "conv-1"}
    gateway.gone.add("conv-1")  # expired: the question is asked again, in a new one
    reply = Reply()
    await _run(gateway, reply, channel=channel)
    assert gateway.asked[2:] == ["conv-1", None] and channel.conversations == {7: "conv-4"}
    assert reply.edits[-1][0].startswith("w0 w1")


async def test_when_deltas_stream_fast_then_the_reply_is_edited_once_per_interval() -> None:
    reply = Reply()
    await _run(ScriptedGateway(_deltas(200)), reply)
    # One streaming edit (the interval is a minute), then the final answer in HTML.
    assert [mode for _, mode in reply.edits] == [None, "HTML"]
    assert reply.edits[0][0] == "w0"
    assert reply.edits[-1][0].startswith("w0 w1 w2") and reply.edits[-1][0].endswith("w199")


async def test_when_telegram_says_retry_after_then_streaming_edits_wait_and_the_final_lands() -> (
    None
):
    reply = Reply(retry_after_on={1})
    await _run(ScriptedGateway(_deltas(50)), reply, interval_s=0.05)
    # The 429 pushed the next edit 30 s out: no streaming edit got through, the final did.
    assert [mode for _, mode in reply.edits] == ["HTML"]


async def test_when_the_gateway_drops_mid_answer_then_the_user_reads_a_clear_message() -> None:
    reply = Reply()
    await _run(ScriptedGateway(_deltas(3)[:2], fail=True), reply)
    assert reply.edits[-1][0].startswith("The knowledge service cannot be reached")


async def test_when_the_final_edit_gets_a_short_retry_after_then_it_waits_and_lands() -> None:
    reply = Reply(retry_after_on={2}, wait_s=1)  # 1: the streaming edit, 2: the final
    await _run(ScriptedGateway(_deltas(5)), reply)
    assert [mode for _, mode in reply.edits] == [None, "HTML"] and reply.calls == 3
