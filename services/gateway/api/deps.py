"""Dependencies the routes declare, so each signature reads as its data flow."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from services.gateway.api.errors import ApiError
from services.gateway.auth import Principal
from services.gateway.clients import ServiceClients
from services.gateway.paths.control import PathControl
from services.gateway.runs.conversations import ConversationStore
from services.gateway.runs.feedback import FeedbackStore
from services.gateway.runs.store import RunStore
from services.gateway.settings import GatewaySettings


def _principal(request: Request) -> Principal:
    principal: Principal = request.state.principal  # set by ApiGuard
    return principal


def _store(request: Request) -> RunStore:
    store: RunStore = request.app.state.store
    return store


def _conversations(request: Request) -> ConversationStore:
    conversations: ConversationStore = request.app.state.conversations
    return conversations


def _feedback(request: Request) -> FeedbackStore:
    feedback: FeedbackStore = request.app.state.feedback
    return feedback


def _settings(request: Request) -> GatewaySettings:
    settings: GatewaySettings = request.app.state.settings
    return settings


def _clients(request: Request) -> ServiceClients:
    clients: ServiceClients = request.app.state.clients
    return clients


def _paths(request: Request) -> PathControl:
    paths: PathControl = request.app.state.paths
    return paths


def _admin(request: Request) -> Principal:
    principal = _principal(request)
    if principal.kind != "admin":
        raise ApiError(
            403, "admin_key_required", f"API key {principal.key_id!r} is not an admin key"
        )
    return principal


Caller = Annotated[Principal, Depends(_principal)]
Store = Annotated[RunStore, Depends(_store)]
Conversations = Annotated[ConversationStore, Depends(_conversations)]
Feedback = Annotated[FeedbackStore, Depends(_feedback)]
Settings = Annotated[GatewaySettings, Depends(_settings)]
Clients = Annotated[ServiceClients, Depends(_clients)]
Paths = Annotated[PathControl, Depends(_paths)]
AdminCaller = Annotated[Principal, Depends(_admin)]
