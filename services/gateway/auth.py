"""API keys → who is calling: tenant, access groups, allowed browser origins.

Keys are stored as SHA-256 digests in a YAML file, never in clear:

    keys:
      - id: demo-web            # appears in logs and run records
        sha256: 5e88...         # sha256(key) in hex
        tenant: demo
        groups: [public]
        allowed_origins: ["*"]  # browser Origins that may use this key
        requests_per_minute: 600  # optional, this key's rate limits (gateway/ratelimit.py);
        runs_per_minute: 60       # without them the RAGWAY_* defaults apply
        kind: server            # server (default) | widget | admin (paths, canary)
        previous_sha256: 9f86...  # optional, during a rotation: the key this one replaces

Key ids are unique: an id names one key in logs, run records and rate limits. To
rotate a key, put the new key's digest in ``sha256`` and the old one's in
``previous_sha256``: both authenticate as the same key (same id, tenant, groups,
limits) until ``previous_sha256`` is removed.

A ``widget`` key is public (it sits in a web page), so it must name the origins
that may embed it (no ``"*"``), every call with it must carry one of them as
``Origin``, and it reaches only the routes a chat widget needs (api/scopes.py).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, Field, ValidationError, model_validator


class KeyEntry(BaseModel):
    id: str = Field(pattern=r"^[A-Za-z0-9._-]{1,64}$")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    # Rotation: the replaced key stays valid, as the same key, until this is removed.
    previous_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    tenant: str = Field(min_length=1, max_length=128)
    groups: list[str] = Field(min_length=1)
    allowed_origins: list[str] = Field(default_factory=lambda: ["*"])
    disabled: bool = False
    requests_per_minute: int | None = Field(default=None, ge=1)
    runs_per_minute: int | None = Field(default=None, ge=1)
    # Only admin keys may call /v1/admin (paths, canary); the others never can.
    kind: Literal["server", "widget", "admin"] = "server"

    @property
    def digests(self) -> tuple[str, ...]:
        return (
            (self.sha256,) if self.previous_sha256 is None else (self.sha256, self.previous_sha256)
        )

    @model_validator(mode="after")
    def _rotation(self) -> KeyEntry:
        if self.previous_sha256 == self.sha256:
            raise ValueError(f"key {self.id!r}: previous_sha256 is the same digest as sha256")
        return self

    @model_validator(mode="after")
    def _widget_origins(self) -> KeyEntry:
        # A widget key is published in page source: only the origins that embed it
        # may use it, so a copied key does not work from another site's pages.
        if self.kind == "widget":
            if "allowed_origins" not in self.model_fields_set or not self.allowed_origins:
                raise ValueError(f"widget key {self.id!r} must list its allowed_origins")
            if "*" in self.allowed_origins:
                raise ValueError(
                    f"widget key {self.id!r} may not allow every origin ('*'): "
                    "list the origins of the pages that embed it"
                )
        return self


class KeyFile(BaseModel):
    keys: list[KeyEntry]


@dataclass(frozen=True, slots=True)
class Principal:
    key_id: str
    tenant: str
    groups: frozenset[str]
    # The key's own rate limits; None: the settings' defaults.
    requests_per_minute: int | None = None
    runs_per_minute: int | None = None
    kind: str = "server"
    # The browser Origin the request came with (None: not a browser call); a widget
    # key's runs remember it, and only that origin may use them afterwards.
    origin: str | None = None


class AuthError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


class KeyRegistry:
    def __init__(self, entries: list[KeyEntry]) -> None:
        ids: set[str] = set()
        self._by_digest: dict[str, KeyEntry] = {}
        for e in entries:
            if e.id in ids:
                raise ValueError(f"{e.id!r} is the id of two API key entries; ids must be unique")
            ids.add(e.id)
            for d in e.digests:
                if d in self._by_digest:
                    raise ValueError("two API key entries share the same sha256")
                self._by_digest[d] = e

    @classmethod
    def from_file(cls, path: Path) -> KeyRegistry:
        if not path.is_file():
            raise FileNotFoundError(f"API key file not found: {path} (set RAGWAY_API_KEYS_FILE)")
        try:
            return cls(KeyFile.model_validate(yaml.safe_load(path.read_text())).keys)
        except ValidationError as exc:
            raise ValueError(f"invalid API key file {path}: {exc}") from exc

    def authenticate(self, presented: str | None, origin: str | None) -> Principal:
        if not presented:
            raise AuthError(
                401, "missing_api_key", "send an API key: 'Authorization: Bearer <key>'"
            )
        entry = self._by_digest.get(digest(presented))
        if entry is None:
            raise AuthError(401, "invalid_api_key", "the API key is not valid")
        if entry.disabled:
            raise AuthError(403, "key_disabled", f"API key {entry.id!r} is disabled")
        if entry.kind == "widget" and not origin:
            raise AuthError(
                403,
                "origin_required",
                f"API key {entry.id!r} is a widget key: it is used only from the web pages "
                "its allowed_origins list, and the request carries no Origin",
            )
        if origin and "*" not in entry.allowed_origins and origin not in entry.allowed_origins:
            raise AuthError(
                403, "origin_not_allowed", f"origin {origin!r} may not use API key {entry.id!r}"
            )
        return Principal(
            key_id=entry.id,
            tenant=entry.tenant,
            groups=frozenset(entry.groups),
            requests_per_minute=entry.requests_per_minute,
            runs_per_minute=entry.runs_per_minute,
            kind=entry.kind,
            origin=origin or None,
        )

    def origin_admitted(self, origin: str) -> bool:
        """Whether some enabled key admits the browser origin (CORS preflight carries no key)."""
        return any(
            not e.disabled and ("*" in e.allowed_origins or origin in e.allowed_origins)
            for e in self._by_digest.values()
        )


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()
