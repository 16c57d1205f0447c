"""Settings shared by every service. Each service extends ``ServiceSettings``.

All configuration comes from environment variables prefixed ``RAGWAY_``; this
module and the per-service settings modules are the only places that read them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class ServiceSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RAGWAY_", extra="ignore", frozen=True)

    log_level: str = Field(default="INFO", pattern=r"^(DEBUG|INFO|WARNING|ERROR)$")
    # ``text``: key=value lines for people; ``json``: one object a line for shippers.
    log_format: Literal["text", "json"] = "text"
    # One inference thread per process by default: two processes (retriever and
    # generator) share a small machine, and more threads only oversubscribe it.
    inference_threads: int = Field(default=1, ge=1, le=64)
    # The gRPC services' Prometheus listener (docs/observability.md); 0 serves none.
    # The gateway and the ingest API ignore these: they answer GET /metrics on their
    # own HTTP port.
    metrics_host: str = "127.0.0.1"
    metrics_port: int = Field(default=0, ge=0, le=65535)
