"""The SSE parser dispatches what a browser's EventSource dispatches, nothing more."""

from __future__ import annotations

from collections.abc import AsyncIterator

from loadtests.sse import Message, messages


async def lines(*items: str) -> AsyncIterator[str]:
    for item in items:
        yield item


async def parse(*items: str) -> list[Message]:
    return [m async for m in messages(lines(*items))]


async def test_a_heartbeat_after_an_event_is_not_an_event() -> None:
    # httpx-sse 0.4.3 turns the comment block into a second event with the same id.
    got = await parse("id: 1-0", "event: run.accepted", "data: {}", "", ": heartbeat", "")
    assert got == [Message("run.accepted", "{}", "1-0", has_id=True)]


async def test_an_event_without_an_id_keeps_the_last_id_and_says_so() -> None:
    got = await parse(
        "id: 1-0", "event: a", "data: x", "", "event: stream.closing", "data: y", "retry: 1000", ""
    )
    assert got[1] == Message("stream.closing", "y", "1-0", has_id=False)


async def test_data_lines_join_with_newlines_and_the_default_type_is_message() -> None:
    got = await parse("data:first", "data: second", "")
    assert got == [Message("message", "first\nsecond", "", has_id=False)]


async def test_an_unfinished_block_at_the_end_is_dropped() -> None:
    assert await parse("id: 1-0", "event: a", "data: x") == []
