"""Dependencies the routes declare, so each signature reads as its data flow."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from services.gateway.auth import Principal
from services.gateway.clients import ServiceClients
from services.gateway.runs.conversations import ConversationStore
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


def _settings(request: Request) -> GatewaySettings:
    settings: GatewaySettings = request.app.state.settings
    return settings


def _clients(request: Request) -> ServiceClients:
    clients: ServiceClients = request.app.state.clients
    return clients


Caller = Annotated[Principal, Depends(_principal)]
Store = Annotated[RunStore, Depends(_store)]
Conversations = Annotated[ConversationStore, Depends(_conversations)]
Settings = Annotated[GatewaySettings, Depends(_settings)]
Clients = Annotated[ServiceClients, Depends(_clients)]
