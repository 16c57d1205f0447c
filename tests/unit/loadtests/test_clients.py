"""The load suite's virtual user, against a real HTTP server on loopback."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from loadtests.clients import Clock, User
from loadtests.model import ErrorLog, RunTrace
from loadtests.scenario import Disconnects, Scenario
from services.gateway.runs.events import RunAcceptedEvent
from tests.loopback import serving

ACCEPTED = RunAcceptedEvent(run_id="r-1", question="q").model_dump_json()


async def heartbeats_forever(request: Request) -> StreamingResponse:
    """A run's stream that never ends: its first event, then heartbeats only."""

    async def body() -> AsyncIterator[bytes]:
        yield f"id: 1-0\nevent: run.accepted\ndata: {ACCEPTED}\n\n".encode()
        while True:
            await asyncio.sleep(0.05)
            yield b": heartbeat\n\n"

    return StreamingResponse(body(), media_type="text/event-stream")


async def test_a_stream_that_never_ends_is_abandoned_at_the_drain_deadline() -> None:
    # Before: the user read heartbeats for ever and held the load past its deadline.
    app = Starlette(routes=[Route("/v1/runs/{run_id}/events", heartbeats_forever)])
    with serving(app, "endless-stream") as url:
        loop = asyncio.get_running_loop()
        clock = Clock(loop, loop.time(), submit_until_s=0.0, follow_until_s=1.0)
        scenario = Scenario(
            name="endless", duration_s=1, streams=1, disconnects=Disconnects(probability=0)
        )
        trace = RunTrace(run_id="r-1", user=0, submitted_s=0.0, accepted_s=0.0)
        errors = ErrorLog()
        async with httpx.AsyncClient(timeout=5) as http:
            user = User(0, http, [url], ["q"], scenario, clock, errors, [trace])
            # The guard only keeps a regression from hanging the suite.
            await asyncio.wait_for(user._follow(trace), timeout=30)
    assert trace.abandoned == "the drain deadline passed while streaming"
    assert [e.type for e in trace.events] == ["run.accepted"]
    assert trace.terminal is None and trace.connections == 1 and not errors.counts
