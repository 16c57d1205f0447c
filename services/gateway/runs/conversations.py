"""Conversations in Redis: who owns one, and its turns, for follow-up questions.

    ragway:conv:{id}           hash: tenant, key_id, created_at_ms, updated_at_ms,
                               chars (size of the turns), run:{run_id} (turns taken)
    ragway:conv:{id}:turns     list: one JSON turn per finished run, oldest first

Both keys expire ``conversation_ttl_s`` after the last activity. Being in Redis,
a conversation survives gateway restarts and any replica continues it. A turn is
appended by the executor when its run succeeds, once per run id (a run delivered
twice adds one turn).
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import redis.asyncio as redis
from pydantic import BaseModel, Field

from ragway import redaction
from services.gateway.runs.models import now_ms

CONVERSATION_ID = re.compile(r"^conv_[0-9a-f]{32}$")

_APPEND = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HSETNX', KEYS[1], 'run:' .. ARGV[1], '1') == 0 then return 2 end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('HINCRBY', KEYS[1], 'chars', tonumber(ARGV[3]))
redis.call('HSET', KEYS[1], 'updated_at_ms', ARGV[4])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[5]))
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[5]))
return 1
"""


def new_conversation_id() -> str:
    return f"conv_{uuid.uuid4().hex}"


def conversation_key(conversation_id: str) -> str:
    return f"ragway:conv:{conversation_id}"


# Named in ragway/redaction.py, which takes a redacted answer out of its turn.
turns_key = redaction.turns_key


class Turn(BaseModel):
    run_id: str
    question: str = Field(description="What the user asked.")
    query: str = Field(description="The standalone query searched and answered for.")
    rewrite_rule: str = Field(
        description="How the query was made from the question: first, standalone, contrast, "
        "ellipsis, pronoun or correction."
    )
    answer: str
    refused: bool
    source_ids: list[str] = Field(description="The chunk ids the answer cites.")
    at_ms: int
    redacted: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Only when a cited document was deleted (`document_deleted`) or revoked "
        "(`access_changed`) after the run: `answer` is then empty.",
    )

    @property
    def chars(self) -> int:
        return len(self.question) + len(self.query) + len(self.answer)


class ConversationMeta(BaseModel):
    id: str
    tenant: str
    key_id: str
    created_at_ms: int
    updated_at_ms: int
    chars: int = 0
    turn_count: int = 0


class Conversation(BaseModel):
    """A conversation as GET /v1/conversations/{id} returns it."""

    id: str
    created_at_ms: int
    updated_at_ms: int
    expires_in_s: int = Field(description="Seconds until it expires without further turns.")
    chars: int = Field(description="Size of its turns (characters), against the limit.")
    turns: list[Turn]


class ConversationStore:
    def __init__(self, client: redis.Redis) -> None:
        self._r = client
        self._append = client.register_script(_APPEND)

    async def open(self, conversation_id: str, tenant: str, key_id: str, ttl_s: int) -> None:
        """Create an empty conversation owned by this key."""
        now = str(now_ms())
        key = conversation_key(conversation_id)
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.hset(
                key,
                mapping={
                    "tenant": tenant,
                    "key_id": key_id,
                    "created_at_ms": now,
                    "updated_at_ms": now,
                    "chars": "0",
                },
            )
            pipe.expire(key, ttl_s)
            await pipe.execute()

    async def meta(self, conversation_id: str) -> ConversationMeta | None:
        raw: dict[Any, Any] = await self._r.hgetall(conversation_key(conversation_id))
        if not raw:
            return None
        fields = {_text(k): _text(v) for k, v in raw.items()}
        return ConversationMeta(
            id=conversation_id,
            tenant=fields["tenant"],
            key_id=fields["key_id"],
            created_at_ms=int(fields["created_at_ms"]),
            updated_at_ms=int(fields["updated_at_ms"]),
            chars=int(fields.get("chars", "0")),
            turn_count=int(await self._r.llen(turns_key(conversation_id))),
        )

    async def turns(self, conversation_id: str) -> list[Turn]:
        raw: list[Any] = await self._r.lrange(turns_key(conversation_id), 0, -1)
        return [Turn.model_validate_json(item) for item in raw]

    async def expires_in_s(self, conversation_id: str) -> int:
        return max(0, int(await self._r.ttl(conversation_key(conversation_id))))

    async def append(self, conversation_id: str, turn: Turn, ttl_s: int) -> bool:
        """Add the turn of a finished run; False when the conversation has expired
        (or the run's turn is already there)."""
        result = await self._append(
            keys=[conversation_key(conversation_id), turns_key(conversation_id)],
            args=[turn.run_id, turn.model_dump_json(), turn.chars, str(now_ms()), ttl_s],
        )
        return int(result) == 1


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
