"""Conversations on the real stack: a follow-up is searched as its standalone query, the
conversation is the caller's alone, has a turn limit, and outlives the replica that began it."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragway_tools.launcher import Stack, free_port
from tests.integration.conftest import auth, own_redis

FIRST = "What is the hotel limit per night in Europe?"
FOLLOW_UP = "who must approve bookings above it?"


@pytest.fixture
def own(stack: Stack, tmp_path: Path) -> Iterator[Stack]:
    """Its own Redis and gateways (three turns at most), the session's retriever and generator."""
    with own_redis(stack, tmp_path, {"RAGWAY_CONVERSATION_MAX_TURNS": "3"}) as s:
        yield s


def ask(api: httpx.Client, who: str, question: str, conversation_id: str | None = None) -> Any:
    body: dict[str, Any] = {"question": question}
    if conversation_id is not None:
        body["conversation_id"] = conversation_id
    return api.post("/v1/ask", json=body, headers=auth(who))


def test_a_conversation_is_rewritten_owned_limited_and_continued_on_another_replica(
    own: Stack,
) -> None:
    # Two replicas on one Redis, both up before the first turn.
    first_port, second_port = free_port(), free_port()
    own.start_gateway("gateway-a", port=first_port)
    own.start_gateway("gateway-b", port=second_port)
    with httpx.Client(base_url=f"http://127.0.0.1:{first_port}", timeout=30) as api:
        first = ask(api, "acme", FIRST)
        assert first.status_code == 200, first.text
        conversation_id = first.json()["conversation_id"]
        assert conversation_id.startswith("conv_")
        assert first.json()["rewritten_query"] is None
        assert "180 euros" in first.json()["answer"]

    # The replica that began the conversation dies without a goodbye after turn 1.
    own.kill("gateway-a", signal.SIGKILL)
    with httpx.Client(base_url=f"http://127.0.0.1:{second_port}", timeout=30) as api:
        # Turn 2 on the other replica leans on turn 1: the rewrite carries its subject.
        second = ask(api, "acme", FOLLOW_UP, conversation_id)
        assert second.status_code == 200, second.text
        body = second.json()
        assert body["conversation_id"] == conversation_id
        assert body["rewritten_query"] == "who must approve bookings above hotel limit per night?"
        assert "director" in body["answer"]
        record = api.get(f"/v1/runs/{body['run_id']}", headers=auth("acme")).json()
        assert record["question"] == FOLLOW_UP  # kept as asked
        assert record["rewritten_query"] == body["rewritten_query"]
        assert (record["conversation_id"], record["rewrite_rule"]) == (conversation_id, "pronoun")

        # Another tenant's key: the conversation does not exist, to read or to continue.
        for resp in (
            api.get(f"/v1/conversations/{conversation_id}", headers=auth("globex")),
            ask(api, "globex", FOLLOW_UP, conversation_id),
        ):
            assert resp.status_code == 404, resp.text
            assert resp.json()["error"]["code"] == "conversation_not_found"

        view = api.get(f"/v1/conversations/{conversation_id}", headers=auth("acme"))
        assert view.status_code == 200, view.text
        turns = view.json()["turns"]
        assert [(t["question"], t["rewrite_rule"]) for t in turns] == [
            (FIRST, "first"),
            (FOLLOW_UP, "pronoun"),
        ]
        assert turns[1]["query"] == "who must approve bookings above hotel limit per night?"
        assert turns[0]["source_ids"], "the cited sources are kept with the turn"

        # A topic change stands alone: asked as it is.
        third = ask(
            api, "acme", "What is the daily meal allowance on business trips?", conversation_id
        )
        assert third.status_code == 200, third.text
        assert third.json()["conversation_id"] == conversation_id
        assert third.json()["rewritten_query"] is None
        assert "45 euros" in third.json()["answer"]

        over = ask(api, "acme", "and in Europe?", conversation_id)
        assert over.status_code == 409, over.text
        assert over.json()["error"]["code"] == "conversation_turn_limit"
        assert "limit of 3 turns" in over.json()["error"]["message"]
