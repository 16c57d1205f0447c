"""Dependencies the routes declare, so each signature reads as its data flow.

All ``async def``, though none awaits anything: FastAPI runs a plain ``def``
dependency in its thread pool, and the profile under load (``make profile``) had
the gateway's worker threads waking for every one of them on every request."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from services.gateway.api.errors import ApiError
from services.gateway.auth import Principal
from services.gateway.clients import ServiceClients
from services.gateway.paths.control import PathControl
from services.gateway.runs.conversations import ConversationStore
from services.gateway.runs.fanout import EventHub
from services.gateway.runs.feedback import FeedbackStore
from services.gateway.runs.store import RunStore
from services.gateway.settings import GatewaySettings
from services.gateway.streams import StreamSlots


async def _principal(request: Request) -> Principal:
    principal: Principal = request.state.principal  # set by ApiGuard
    return principal


async def _store(request: Request) -> RunStore:
    store: RunStore = request.app.state.store
    return store


async def _hub(request: Request) -> EventHub:
    hub: EventHub = request.app.state.hub
    return hub


async def _conversations(request: Request) -> ConversationStore:
    conversations: ConversationStore = request.app.state.conversations
    return conversations


async def _feedback(request: Request) -> FeedbackStore:
    feedback: FeedbackStore = request.app.state.feedback
    return feedback


async def _streams(request: Request) -> StreamSlots:
    streams: StreamSlots = request.app.state.streams
    return streams


async def _settings(request: Request) -> GatewaySettings:
    settings: GatewaySettings = request.app.state.settings
    return settings


async def _clients(request: Request) -> ServiceClients:
    clients: ServiceClients = request.app.state.clients
    return clients


async def _paths(request: Request) -> PathControl:
    paths: PathControl = request.app.state.paths
    return paths


async def _admin(request: Request) -> Principal:
    principal = await _principal(request)
    if principal.kind != "admin":
        raise ApiError(
            403, "admin_key_required", f"API key {principal.key_id!r} is not an admin key"
        )
    return principal


Caller = Annotated[Principal, Depends(_principal)]
Store = Annotated[RunStore, Depends(_store)]
Hub = Annotated[EventHub, Depends(_hub)]
Conversations = Annotated[ConversationStore, Depends(_conversations)]
Feedback = Annotated[FeedbackStore, Depends(_feedback)]
Settings = Annotated[GatewaySettings, Depends(_settings)]
Streams = Annotated[StreamSlots, Depends(_streams)]
Clients = Annotated[ServiceClients, Depends(_clients)]
Paths = Annotated[PathControl, Depends(_paths)]
AdminCaller = Annotated[Principal, Depends(_admin)]
