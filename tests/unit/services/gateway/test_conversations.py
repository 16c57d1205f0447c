"""Runs as turns of a conversation: ownership, limits, the rewritten query reaching the
retriever and the generator, and the turn the executor adds."""

from __future__ import annotations

import asyncio

import pytest

from services.gateway.api.errors import http_error
from services.gateway.auth import Principal
from services.gateway.runs.errors import (
    ConversationNotFound,
    ConversationTooLarge,
    ConversationTurnLimit,
)
from services.gateway.runs.executor import RunExecutor
from services.gateway.runs.models import RunRecord
from services.gateway.runs.submit import Ask, submit
from services.gateway.settings import GatewaySettings
from tests.unit.services.gateway.fakes import FakeBackends, FakeConversations, FakeStore

SETTINGS = GatewaySettings(grpc_backoff_s=0.0, conversation_max_turns=2)
CALLER = Principal(key_id="k1", tenant="acme", groups=frozenset({"public"}))
FIRST = "How many people can be in a huddle on Starter?"


class Breakers:
    def unavailable(self) -> None:
        return None


def ask(
    store: FakeStore,
    conversations: FakeConversations,
    question: str,
    conversation_id: str | None = None,
    caller: Principal = CALLER,
    settings: GatewaySettings = SETTINGS,
) -> RunRecord:
    """Submit and execute one run; its final record."""

    async def go() -> RunRecord:
        created = await submit(
            store,
            settings,
            Breakers(),
            caller,
            Ask(question=question, top_k=None, mode="hybrid", conversation_id=conversation_id),
            None,
            conversations,
        )
        backends = FakeBackends()
        await RunExecutor(store, backends, settings, conversations=conversations).execute(
            created.run_id, 1
        )
        record = store.records[created.run_id]
        assert backends.requests[0].question == record.standalone_query
        return record

    return asyncio.run(go())


def test_a_run_without_conversation_starts_one_and_becomes_its_first_turn() -> None:
    store, conversations = FakeStore(), FakeConversations()
    record = ask(store, conversations, FIRST)
    assert record.conversation_id is not None
    assert (record.rewritten_query, record.rewrite_rule) == (None, "first")
    [turn] = conversations.turn_lists[record.conversation_id]
    assert (turn.run_id, turn.question, turn.query) == (record.id, FIRST, FIRST)
    assert turn.answer == record.answer
    assert turn.source_ids == [c.source_id for c in record.citations]


def test_a_follow_up_is_searched_and_answered_as_its_standalone_query() -> None:
    store, conversations = FakeStore(), FakeConversations()
    first = ask(store, conversations, FIRST)
    second = ask(store, conversations, "what about Business?", first.conversation_id)
    assert second.conversation_id == first.conversation_id
    assert second.question == "what about Business?"
    assert second.rewritten_query == "How many people can be in a huddle on Business?"
    assert second.rewrite_rule == "contrast"
    [retrieval] = store.data(second.id, "retrieval.completed")
    assert retrieval["query"] == second.rewritten_query
    assert "query" not in store.data(first.id, "retrieval.completed")[0]
    turns = conversations.turn_lists[first.conversation_id or ""]
    assert [t.query for t in turns] == [FIRST, second.rewritten_query]


def test_another_keys_conversation_is_not_found() -> None:
    store, conversations = FakeStore(), FakeConversations()
    first = ask(store, conversations, FIRST)
    other = Principal(key_id="k2", tenant="acme", groups=frozenset({"public"}))
    for caller, conversation_id in [(other, first.conversation_id), (CALLER, "conv_nope")]:
        with pytest.raises(ConversationNotFound) as caught:
            ask(store, conversations, "and on Business?", conversation_id, caller=caller)
        assert http_error(caught.value).status == 404
        assert http_error(caught.value).code == "conversation_not_found"


def test_a_conversation_at_its_turn_limit_refuses_another_turn() -> None:
    store, conversations = FakeStore(), FakeConversations()
    first = ask(store, conversations, FIRST)
    ask(store, conversations, "and on Business?", first.conversation_id)
    with pytest.raises(ConversationTurnLimit) as caught:
        ask(store, conversations, "and on Enterprise?", first.conversation_id)
    assert (http_error(caught.value).status, http_error(caught.value).code) == (
        409,
        "conversation_turn_limit",
    )


def test_a_conversation_over_its_size_limit_refuses_another_turn() -> None:
    store, conversations = FakeStore(), FakeConversations()
    small = GatewaySettings(grpc_backoff_s=0.0, conversation_max_chars=1000)
    first = ask(store, conversations, "x " * 499 + "?", settings=small)
    with pytest.raises(ConversationTooLarge) as caught:
        ask(store, conversations, "and on Business?", first.conversation_id, settings=small)
    assert http_error(caught.value).code == "conversation_too_large"
    assert "limit is 1000" in str(caught.value)


def test_a_run_delivered_twice_adds_one_turn() -> None:
    store, conversations = FakeStore(), FakeConversations()
    record = ask(store, conversations, FIRST)
    executor = RunExecutor(store, FakeBackends(), SETTINGS, conversations=conversations)
    asyncio.run(executor.execute(record.id, 1))
    assert len(conversations.turn_lists[record.conversation_id or ""]) == 1


def test_the_turn_is_written_before_the_terminal_event() -> None:
    # A client reads the terminal event and may ask its follow-up at once, on another
    # replica, while this one dies: a turn written after the final write was lost then
    # (CI, 2026-12-02: the follow-up was searched without its subject).
    store, conversations = FakeStore(), FakeConversations()
    turns_at_finish: list[int] = []
    finish = store.finish

    async def finish_seeing_turns(record: RunRecord, *args: object, **kwargs: object) -> str:
        turns_at_finish.append(len(conversations.turn_lists[record.conversation_id or ""]))
        return await finish(record, *args, **kwargs)  # type: ignore[arg-type]

    store.finish = finish_seeing_turns  # type: ignore[method-assign]
    ask(store, conversations, FIRST)
    assert turns_at_finish == [1]
