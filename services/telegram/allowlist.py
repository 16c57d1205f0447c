"""Who may talk to the bot: Telegram user ids mapped to a gateway API key.

The key decides the tenant and access groups (the gateway's key registry is the one
source of truth); the allow-list only says which key a Telegram user acts with. Key
secrets live in files beside the allow-list, so the YAML itself holds no secret.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, Field, ValidationError


class AllowedUser(BaseModel):
    model_config = {"extra": "forbid"}

    telegram_id: int = Field(description="The Telegram user id (not the @name, which can change).")
    key_id: str = Field(min_length=1, description="The gateway API key this user acts with.")
    name: str = Field(default="", description="A note for the operator; never shown or logged.")


class KeyRef(BaseModel):
    model_config = {"extra": "forbid"}

    key_file: Path = Field(description="File holding the API key; relative to the allow-list.")


class AllowListFile(BaseModel):
    model_config = {"extra": "forbid"}

    keys: dict[str, KeyRef]
    users: list[AllowedUser]


@dataclass(frozen=True)
class Grant:
    """What an allowed user acts with; the key is a secret (repr hides it)."""

    telegram_id: int
    key_id: str
    api_key: str

    def __repr__(self) -> str:
        return f"Grant(telegram_id={self.telegram_id}, key_id={self.key_id!r})"


class AllowList:
    def __init__(self, grants: dict[int, Grant]) -> None:
        self._grants = grants

    def __len__(self) -> int:
        return len(self._grants)

    def grant(self, telegram_id: int | None) -> Grant | None:
        return None if telegram_id is None else self._grants.get(telegram_id)

    @classmethod
    def from_file(cls, path: Path) -> AllowList:
        """Read and check the file; every problem is a ValueError naming the file."""
        try:
            raw = yaml.safe_load(path.read_text())
        except OSError as exc:
            raise ValueError(
                f"cannot read the Telegram allow-list {path}: {exc.strerror}"
            ) from None
        except yaml.YAMLError as exc:
            raise ValueError(f"the Telegram allow-list {path} is not YAML: {exc}") from None
        try:
            parsed = AllowListFile.model_validate(raw)
        except ValidationError as exc:
            raise ValueError(f"the Telegram allow-list {path} is not valid:\n{exc}") from None
        secrets: dict[str, str] = {}
        for key_id, ref in parsed.keys.items():
            key_path = ref.key_file if ref.key_file.is_absolute() else path.parent / ref.key_file
            try:
                secret = key_path.read_text().strip()
            except OSError as exc:
                raise ValueError(
                    f"{path}: the key file of {key_id!r}, {key_path}, cannot be read: "
                    f"{exc.strerror}"
                ) from None
            if not secret:
                raise ValueError(f"{path}: the key file of {key_id!r}, {key_path}, is empty")
            secrets[key_id] = secret
        grants: dict[int, Grant] = {}
        for user in parsed.users:
            if user.key_id not in secrets:
                raise ValueError(
                    f"{path}: user {user.telegram_id} names key {user.key_id!r}, "
                    f"which is not under keys: ({', '.join(sorted(secrets)) or 'none'})"
                )
            if user.telegram_id in grants:
                raise ValueError(f"{path}: user {user.telegram_id} is listed twice")
            grants[user.telegram_id] = Grant(user.telegram_id, user.key_id, secrets[user.key_id])
        return cls(grants)
