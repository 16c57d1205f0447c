"""Service-to-service authentication: one shared token in gRPC metadata.

The retriever and the generator trust what a request says (tenant, access groups)
and offer writes (upsert, delete, promote, delete-build), so only ragway's own parts
may call them. Every client sends ``authorization: Bearer <token>``; the servers'
``ServiceTokenInterceptor`` compares it in constant time and answers UNAUTHENTICATED
otherwise. The health service and reflection stay open: probes and load balancers
carry no token.

The token is ``RAGWAY_SERVICE_TOKEN``, or better a file holding it
(``RAGWAY_SERVICE_TOKEN_FILE``, a mounted secret), which wins. Unset, the check is
off and the servers log a warning at start: the embedded demo still runs without
one, and ``ragway up`` (the launcher) always sets a random one per stack.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import grpc

from ragway.settings import ServiceTokenSettings

log = logging.getLogger(__name__)

METADATA_KEY = "authorization"
_SCHEME = "Bearer "
# Open without a token: health checks (kubelet, compose, the launcher) and reflection.
EXEMPT_PREFIXES = (
    "/grpc.health.v1.Health/",
    "/grpc.reflection.v1alpha.ServerReflection/",
    "/grpc.reflection.v1.ServerReflection/",
)
MISSING = (
    "missing service token: this service requires 'authorization: Bearer <token>' metadata; "
    "set RAGWAY_SERVICE_TOKEN or RAGWAY_SERVICE_TOKEN_FILE on the caller"
)
WRONG = "wrong service token: the caller's RAGWAY_SERVICE_TOKEN differs from this service's"


def token_from_environment() -> str | None:
    """For operator tools: the token their environment names, None when none."""
    return ServiceTokenSettings().service_token_value()


def metadata(token: str | None) -> tuple[tuple[str, str], ...]:
    return () if token is None else ((METADATA_KEY, _SCHEME + token),)


# -- server ---------------------------------------------------------------


class ServiceTokenInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]  # grpc ships no types
    """Refuses every call but health and reflection that lacks the token."""

    def __init__(self, token: str) -> None:
        if not token:
            raise ValueError("the service token must not be empty")
        self._expected = (_SCHEME + token).encode()

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        method: str = handler_call_details.method
        if method.startswith(EXEMPT_PREFIXES):
            return await continuation(handler_call_details)
        presented = _presented(handler_call_details.invocation_metadata)
        if presented is not None and hmac.compare_digest(presented, self._expected):
            return await continuation(handler_call_details)
        handler = await continuation(handler_call_details)
        if handler is None:  # an unknown method: let gRPC answer UNIMPLEMENTED
            return handler
        reason = "missing" if presented is None else "wrong"
        log.warning("service call refused", extra={"method": method, "token": reason})
        return _refusal(handler, MISSING if presented is None else WRONG)


def _presented(invocation_metadata: Sequence[tuple[str, Any]] | None) -> bytes | None:
    for key, value in invocation_metadata or ():
        if key == METADATA_KEY:
            return value.encode() if isinstance(value, str) else bytes(value)
    return None


def _refusal(handler: grpc.RpcMethodHandler, message: str) -> grpc.RpcMethodHandler:
    """A handler of the same shape as ``handler`` that only answers UNAUTHENTICATED."""

    async def refuse(_request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)

    codecs: dict[str, Any] = {
        "request_deserializer": handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(refuse, **codecs)
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(refuse, **codecs)
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(refuse, **codecs)
    return grpc.stream_stream_rpc_method_handler(refuse, **codecs)


def server_interceptors(token: str | None, service: str) -> list[grpc.aio.ServerInterceptor]:
    """The interceptors a server installs; none (and a warning) without a token."""
    if token is None:
        log.warning(
            "service authentication is off: RAGWAY_SERVICE_TOKEN is unset, anyone who can "
            "reach this port may call it",
            extra={"service": service},
        )
        return []
    return [ServiceTokenInterceptor(token)]


# -- clients --------------------------------------------------------------


def _with_token(metadata_in: Any, token: str) -> list[tuple[str, str]]:
    kept = [(k, v) for k, v in (metadata_in or ()) if k != METADATA_KEY]
    return [*kept, (METADATA_KEY, _SCHEME + token)]


def _aio_details(d: grpc.aio.ClientCallDetails, token: str) -> grpc.aio.ClientCallDetails:
    return grpc.aio.ClientCallDetails(
        method=d.method,
        timeout=d.timeout,
        metadata=grpc.aio.Metadata(*_with_token(d.metadata, token)),
        credentials=d.credentials,
        wait_for_ready=d.wait_for_ready,
    )


# Two classes, not one with both bases: grpc.aio files each interceptor under the
# first kind it matches only, so a combined one would never see the streaming calls.
class _AioUnaryUnaryToken(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]  # grpc ships no types
    def __init__(self, token: str) -> None:
        self._token = token

    async def intercept_unary_unary(
        self, continuation: Any, client_call_details: grpc.aio.ClientCallDetails, request: Any
    ) -> Any:
        return await continuation(_aio_details(client_call_details, self._token), request)


class _AioUnaryStreamToken(grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[misc]  # grpc ships no types
    def __init__(self, token: str) -> None:
        self._token = token

    async def intercept_unary_stream(
        self, continuation: Any, client_call_details: grpc.aio.ClientCallDetails, request: Any
    ) -> Any:
        return await continuation(_aio_details(client_call_details, self._token), request)


class _Details(grpc.ClientCallDetails):  # type: ignore[misc]  # grpc ships no types
    def __init__(self, d: grpc.ClientCallDetails, token: str) -> None:
        self.method = d.method
        self.timeout = d.timeout
        self.metadata = _with_token(d.metadata, token)
        self.credentials = d.credentials
        self.wait_for_ready = getattr(d, "wait_for_ready", None)
        self.compression = getattr(d, "compression", None)


class _SyncTokenInterceptor(  # grpc ships no types: its bases are Any
    grpc.UnaryUnaryClientInterceptor,  # type: ignore[misc]
    grpc.UnaryStreamClientInterceptor,  # type: ignore[misc]
    grpc.StreamUnaryClientInterceptor,  # type: ignore[misc]
    grpc.StreamStreamClientInterceptor,  # type: ignore[misc]
):
    """Adds the token to every call of a blocking channel (ingest worker, tools)."""

    def __init__(self, token: str) -> None:
        self._token = token

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(_Details(details, self._token), request)

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(_Details(details, self._token), request)

    def intercept_stream_unary(self, continuation: Any, details: Any, requests: Any) -> Any:
        return continuation(_Details(details, self._token), requests)

    def intercept_stream_stream(self, continuation: Any, details: Any, requests: Any) -> Any:
        return continuation(_Details(details, self._token), requests)


def insecure_channel(
    addr: str, token: str | None, options: Sequence[tuple[str, Any]] | None = None
) -> grpc.Channel:
    """A blocking channel that sends the token (when there is one) with every call."""
    channel = grpc.insecure_channel(addr, options=options)
    if token is None:
        return channel
    return grpc.intercept_channel(channel, _SyncTokenInterceptor(token))


def aio_insecure_channel(
    addr: str, token: str | None, options: Sequence[tuple[str, Any]] | None = None
) -> grpc.aio.Channel:
    """An asyncio channel that sends the token (when there is one) with every call."""
    interceptors: list[grpc.aio.ClientInterceptor] = []
    if token is not None:  # the services offer unary and server-streaming calls only
        interceptors = [_AioUnaryUnaryToken(token), _AioUnaryStreamToken(token)]
    return grpc.aio.insecure_channel(addr, options=options, interceptors=interceptors)
