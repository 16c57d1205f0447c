"""Who may sign webhooks for which tenants: the webhook secrets file.

One secret for every tenant let any sender that holds it write any tenant's
documents, since the tenant comes from the body. The secrets file
(``RAGWAY_WEBHOOK_SECRETS_FILE``, a mounted secret) gives each sender its own
secrets, bound to its tenants::

    senders:
      - id: acme-cms
        tenants: [acme]
        secrets: [new-secret, old-secret]   # rotation: both verify until the old one goes
      - id: globex-wiki
        tenants: [globex]
        secrets: [globex-secret]

A delivery verified by a sender's secret may only name one of that sender's
tenants (403 otherwise). ``RAGWAY_WEBHOOK_SECRET``, when set, stays a sender bound
to every tenant, as before the file existed; a deployment with several tenants
sets the file only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

ANY_TENANT = "*"
_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"


class SenderEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=_NAME)
    tenants: list[str] = Field(min_length=1)
    # Two at once during a rotation: the new one and the one it replaces.
    secrets: list[SecretStr] = Field(min_length=1, max_length=2)


class SendersFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    senders: list[SenderEntry] = Field(min_length=1)


@dataclass(frozen=True, slots=True)
class SigningKey:
    sender: str
    secret: str
    tenants: frozenset[str]

    def allows(self, tenant: str) -> bool:
        return ANY_TENANT in self.tenants or tenant in self.tenants


def load_senders(path: Path) -> list[SigningKey]:
    """Every sender's secrets from the file; ValueError naming the file and the problem."""
    try:
        raw = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ValueError(f"RAGWAY_WEBHOOK_SECRETS_FILE {path}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ValueError(f"RAGWAY_WEBHOOK_SECRETS_FILE {path} is not YAML: {exc}") from exc
    try:
        entries = SendersFile.model_validate(raw).senders
    except ValidationError as exc:
        raise ValueError(f"RAGWAY_WEBHOOK_SECRETS_FILE {path} is not valid:\n{exc}") from None
    keys: list[SigningKey] = []
    for entry in entries:
        for secret in entry.secrets:
            value = secret.get_secret_value()
            if not value:
                raise ValueError(
                    f"RAGWAY_WEBHOOK_SECRETS_FILE {path}: {entry.id} has an empty secret"
                )
            keys.append(SigningKey(entry.id, value, frozenset(entry.tenants)))
    if len({e.id for e in entries}) != len(entries):
        raise ValueError(f"RAGWAY_WEBHOOK_SECRETS_FILE {path}: two senders share an id")
    if len({k.secret for k in keys}) != len(keys):
        # One secret for two senders would make the tenant binding ambiguous.
        raise ValueError(f"RAGWAY_WEBHOOK_SECRETS_FILE {path}: a secret is listed twice")
    return keys


def signing_keys(shared_secret: str, senders_file: Path | None) -> list[SigningKey]:
    """The keys a delivery may be signed with; ValueError when there is none."""
    keys = load_senders(senders_file) if senders_file is not None else []
    if shared_secret:
        if any(k.secret == shared_secret for k in keys):
            raise ValueError(
                "RAGWAY_WEBHOOK_SECRET is also a sender's secret in RAGWAY_WEBHOOK_SECRETS_FILE"
            )
        keys.append(SigningKey("shared", shared_secret, frozenset({ANY_TENANT})))
    if not keys:
        raise ValueError(
            "no webhook secret: set RAGWAY_WEBHOOK_SECRETS_FILE (per sender) "
            "or RAGWAY_WEBHOOK_SECRET"
        )
    return keys
