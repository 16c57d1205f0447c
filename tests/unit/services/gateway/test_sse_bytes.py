"""The bytes a stream sends for an event: encoded once for every stream of its run."""

from __future__ import annotations

from sse_starlette import ServerSentEvent
from sse_starlette.event import ensure_bytes

from services.gateway.api.routes.runs import sse_bytes
from services.gateway.runs.events import AnswerDelta
from services.gateway.runs.store import Event


def test_the_bytes_are_what_the_stream_sent_before() -> None:
    delta = AnswerDelta(text="Resume with Last-Event-ID.\nThen", index=0)
    event = Event("1796020562250-0", delta.TYPE.value, delta.data())
    before = ensure_bytes(ServerSentEvent(data=event.data, event=event.type, id=event.id), "\r\n")
    assert sse_bytes(event) == before
    assert before.startswith(b"id: 1796020562250-0\r\nevent: answer.delta\r\ndata: ")


def test_one_encoding_serves_every_stream_of_the_event() -> None:
    event = Event("1796020562251-3", "run.completed", '{"status": "succeeded"}')
    sse_bytes.cache_clear()
    first = sse_bytes(event)
    again = [sse_bytes(event) for _ in range(2000)]  # 2,000 streams on one run
    assert all(b is first for b in again)
    info = sse_bytes.cache_info()
    assert (info.misses, info.hits) == (1, 2000)
