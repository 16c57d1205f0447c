"""gRPC channels from operator tooling to ragway's services, with the service token.

A tool sends the token it is given (a stack it started itself knows its own), else
the one its environment names (RAGWAY_SERVICE_TOKEN or RAGWAY_SERVICE_TOKEN_FILE, as
the services read it), else none: a stack without a token accepts that.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc

from ragway.service_auth import insecure_channel, token_from_environment


def service_channel(
    addr: str, token: str | None = None, options: Sequence[tuple[str, Any]] | None = None
) -> grpc.Channel:
    return insecure_channel(addr, token if token is not None else token_from_environment(), options)
