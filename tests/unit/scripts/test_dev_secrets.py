"""The dev overlay's Secrets: generated dev-only values, and the check that finds a missing one."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from services.ingest.senders import load_senders
from tests.conftest import ROOT
from tests.unit.scripts.loading import load

dev_secrets = load("dev_secrets")
validate_deploy = load("validate_deploy")


def test_the_dev_secrets_are_random_private_files_kept_once_written(tmp_path: Path) -> None:
    written = dev_secrets.write(tmp_path)
    assert sorted(p.name for p in written) == [
        "redis-password",
        "service-token",
        "webhook-secrets.yaml",
    ]
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    token = (tmp_path / "service-token").read_text()
    assert len(token) == 64 and int(token, 16) >= 0 and "\n" not in token
    assert token != (tmp_path / "redis-password").read_text()
    [sender] = load_senders(tmp_path / "webhook-secrets.yaml")
    assert sender.tenants == frozenset({"demo"}) and len(sender.secret) == 64
    # A second run keeps what is there: re-rendering never rotates a secret.
    assert dev_secrets.write(tmp_path) == []
    assert (tmp_path / "service-token").read_text() == token
    # The folder is git-ignored and kept out of images.
    assert "/deploy/k8s/overlays/dev/secrets/" in (ROOT / ".gitignore").read_text()
    assert "deploy/k8s/overlays/dev/secrets" in (ROOT / ".dockerignore").read_text()


def deployment(env: list[dict[str, Any]], volumes: list[dict[str, Any]]) -> dict[str, Any]:
    pod = {"containers": [{"name": "c", "env": env}], "volumes": volumes}
    return {
        "kind": "Deployment",
        "metadata": {"name": "gateway"},
        "spec": {"template": {"spec": pod}},
    }


def secret(name: str, *keys: str) -> dict[str, Any]:
    return {"kind": "Secret", "metadata": {"name": name}, "data": dict.fromkeys(keys, "eA==")}


def ref(name: str, key: str, optional: bool = False) -> dict[str, Any]:
    key_ref: dict[str, Any] = {"name": name, "key": key}
    if optional:
        key_ref["optional"] = True
    return {"name": "X", "valueFrom": {"secretKeyRef": key_ref}}


@pytest.mark.parametrize(
    ("objects", "problems"),
    [
        ([deployment([ref("s", "token")], [])], ["Secret s, which the overlay lacks"]),
        (
            [deployment([ref("s", "token")], []), secret("s", "other")],
            ["key token of Secret s"],
        ),
        (
            [
                deployment(
                    [],
                    [
                        {
                            "name": "v",
                            "secret": {"secretName": "w", "items": [{"key": "f", "path": "f"}]},
                        }
                    ],
                )
            ],
            ["Secret w"],
        ),
        ([deployment([ref("s", "token", optional=True)], [])], []),
        ([deployment([ref("s", "token")], []), secret("s", "token")], []),
    ],
)
def test_a_required_secret_or_key_the_overlay_lacks_is_reported(
    objects: list[dict[str, Any]], problems: list[str]
) -> None:
    found = validate_deploy.missing_secrets(objects)
    assert len(found) == len(problems)
    for text, expected in zip(found, problems, strict=True):
        assert expected in text and text.startswith("Deployment/gateway: ")
