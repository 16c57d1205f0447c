"""/v1/conversations: read a conversation's turns (its follow-ups are asked via /v1/ask or
/v1/runs with its id)."""

from __future__ import annotations

from fastapi import APIRouter

from services.gateway.api.deps import Caller, Conversations
from services.gateway.api.routes.runs import ERRORS
from services.gateway.runs.conversations import Conversation
from services.gateway.runs.submit import owned_conversation

router = APIRouter(prefix="/v1/conversations", tags=["conversations"])


@router.get(
    "/{conversation_id}",
    response_model=Conversation,
    responses=ERRORS,
    summary="Read a conversation's turns",
)
async def get_conversation(
    conversation_id: str, caller: Caller, conversations: Conversations
) -> Conversation:
    """The turns of the caller's conversation, oldest first: each with the question as
    asked, the standalone query searched for, the answer and the cited source ids.
    Another key's conversation, or an expired one, is a 404."""
    meta = await owned_conversation(conversations, caller, conversation_id)
    return Conversation(
        id=meta.id,
        created_at_ms=meta.created_at_ms,
        updated_at_ms=meta.updated_at_ms,
        expires_in_s=await conversations.expires_in_s(meta.id),
        chars=meta.chars,
        turns=await conversations.turns(meta.id),
    )
