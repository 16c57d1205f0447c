"""Server-Sent Events parsing as the HTML standard specifies it (a browser's EventSource).

Written here rather than taken from httpx-sse: httpx-sse 0.4.3 dispatches an
empty event for every comment-only block (ragway's heartbeats) once an id has
been seen, repeating the last id; a browser dispatches nothing for those, and
the checker would see a duplicate.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Message:
    event: str
    data: str
    id: str  # the last event id buffer: carried over when the message has no id field
    has_id: bool  # whether this message set its id itself


async def messages(lines: AsyncIterable[str]) -> AsyncIterator[Message]:
    """Messages from a stream of lines (without their line endings)."""
    last_id, event, has_id = "", "", False
    data: list[str] = []
    async for line in lines:
        if line == "":
            # Dispatch; the standard drops a block whose data buffer is empty.
            if data:
                yield Message(event or "message", "\n".join(data), last_id, has_id)
            event, data, has_id = "", [], False
            continue
        if line.startswith(":"):
            continue  # a comment: heartbeat
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
        elif name == "id" and "\0" not in value:
            last_id, has_id = value, True
