"""Settings shared by every service. Each service extends ``ServiceSettings``.

All configuration comes from environment variables prefixed ``RAGWAY_``; this
module and the per-service settings modules are the only places that read them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote, urlsplit, urlunsplit

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# RAGWAY_MAX_HEADER_BYTES of the gateway and the ingest API (ragway/http_limits.py).
DEFAULT_MAX_HEADER_BYTES = 16 * 1024


class ServiceTokenSettings(BaseSettings):
    """The service token alone (ragway/service_auth.py), for every process that speaks
    gRPC: the services, and operator tools that have no settings of their own."""

    model_config = SettingsConfigDict(env_prefix="RAGWAY_", extra="ignore", frozen=True)

    service_token: SecretStr | None = None
    service_token_file: Path | None = None

    def service_token_value(self) -> str | None:
        """The token: from the file when one is named (stripped), else the variable; None off."""
        if self.service_token_file is not None:
            return read_secret_file(self.service_token_file, "RAGWAY_SERVICE_TOKEN_FILE")
        if self.service_token is None:
            return None
        return self.service_token.get_secret_value() or None


class EmbeddingSettings(BaseSettings):
    """The embedding network's arithmetic and where a derived network is kept
    (ragway/embedding.py), for every process that embeds."""

    model_config = SettingsConfigDict(env_prefix="RAGWAY_", extra="ignore", frozen=True)

    # fp32: the packaged graph (int8 weights, fp32 products). int8: a graph derived
    # from it with int8 products, 1.8x faster on a question and 1.5x on a passage,
    # whose vectors differ (cosine 0.9956): the retriever and the generator must
    # agree, and builds written in one are rebuilt for the other.
    embedding_arithmetic: Literal["fp32", "int8"] = "fp32"
    # None: $XDG_CACHE_HOME/ragway/models, else ~/.cache/ragway/models.
    model_cache: Path | None = None


class ServiceSettings(ServiceTokenSettings, EmbeddingSettings):
    log_level: str = Field(default="INFO", pattern=r"^(DEBUG|INFO|WARNING|ERROR)$")
    # ``text``: key=value lines for people; ``json``: one object a line for shippers.
    log_format: Literal["text", "json"] = "text"
    # One inference thread per process by default: two processes (retriever and
    # generator) share a small machine, and more threads only oversubscribe it.
    inference_threads: int = Field(default=1, ge=1, le=64)
    # The gRPC services' and the run executors process's Prometheus listener
    # (docs/observability.md); 0 serves none. The gateway and the ingest API ignore
    # these: they answer GET /metrics on their own HTTP port.
    metrics_host: str = "127.0.0.1"
    metrics_port: int = Field(default=0, ge=0, le=65535)


def read_secret_file(path: Path, variable: str) -> str:
    """A mounted secret's value, stripped; a missing or empty file is a ValueError naming it."""
    try:
        value = path.read_text().strip()
    except OSError as exc:
        raise ValueError(f"{variable} {path}: {exc.strerror}") from exc
    if not value:
        raise ValueError(f"{variable} {path} is empty")
    return value


def with_redis_password(url: str, password: str | None) -> str:
    """``url`` carrying ``password`` (URL-quoted), replacing any it had; unchanged when None.

    Deployments keep the password in a Secret (RAGWAY_REDIS_PASSWORD or
    RAGWAY_REDIS_PASSWORD_FILE) and the URL in plain configuration.
    """
    if password is None:
        return url
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    user = parts.username or ""
    return urlunsplit(
        parts._replace(netloc=f"{quote(user, safe='')}:{quote(password, safe='')}@{host}")
    )


class RedisClientSettings(ServiceSettings):
    """A service that talks to Redis: its URL, and the password kept apart from it.

    After validation ``redis_url`` carries the password (never log it; ragway.logs
    masks URL passwords in every line anyway).
    """

    redis_url: str = "redis://127.0.0.1:6379/0"
    redis_password: SecretStr | None = None
    # A file holding the password (a mounted secret); wins over the variable.
    redis_password_file: Path | None = None

    @model_validator(mode="before")
    @classmethod
    def _password_into_url(cls, data: Any) -> Any:
        # Before validation: a frozen model's own fields cannot change after it.
        if not isinstance(data, dict):
            return data
        password_file = data.get("redis_password_file")
        password = data.get("redis_password")
        if password_file:
            password = read_secret_file(Path(password_file), "RAGWAY_REDIS_PASSWORD_FILE")
        elif isinstance(password, SecretStr):
            password = password.get_secret_value()
        if not password:
            return data
        url = data.get("redis_url") or cls.model_fields["redis_url"].default
        return {**data, "redis_url": with_redis_password(str(url), str(password))}
