"""The deployment files keep the internals closed (issue 16).

The retriever's gRPC port took tenant and groups from the request and offered
writes to anyone who reached it, k8s had no NetworkPolicy and Redis no password.
These check what compose and the k8s base declare, so a later edit that drops a
secret or opens a port fails here, not in production. `make deploy-check` checks
that the same files are valid for docker compose and kustomize.
"""

from __future__ import annotations

from typing import Any

import yaml

from tests.conftest import ROOT

K8S = ROOT / "deploy/k8s/base"
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
PARTS = ("retriever", "generator", "gateway", "ingest", "worker")
REDIS_USERS = ("gateway", "ingest", "worker")


def test_compose_redis_requires_its_password_and_every_part_has_it_and_the_token() -> None:
    services = COMPOSE["services"]
    command = " ".join(services["redis"]["command"])
    assert "requirepass" in command and "/run/secrets/redis_password" in command
    assert set(COMPOSE["secrets"]) >= {"service_token", "redis_password"}
    for name in PARTS:
        env, secrets = services[name]["environment"], services[name]["secrets"]
        assert env["RAGWAY_SERVICE_TOKEN_FILE"] == "/run/secrets/service_token", name
        assert "service_token" in secrets, name
    for name in REDIS_USERS:
        env, secrets = services[name]["environment"], services[name]["secrets"]
        assert env["RAGWAY_REDIS_PASSWORD_FILE"] == "/run/secrets/redis_password", name
        assert "redis_password" in secrets, name
        assert "@" not in env["RAGWAY_REDIS_URL"], name  # the password is not in the URL


def _k8s(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((K8S / name).read_text()) if d]


def _env_from_secrets(manifest: str) -> list[set[str]]:
    """Per container of the manifest's Deployments: the variables read from a Secret."""
    out = []
    for doc in _k8s(manifest):
        if doc["kind"] != "Deployment":
            continue
        for container in doc["spec"]["template"]["spec"]["containers"]:
            out.append(
                {
                    e["name"]
                    for e in container.get("env", [])
                    if "secretKeyRef" in e.get("valueFrom", {})
                }
            )
    return out


def test_every_k8s_part_reads_the_service_token_and_redis_users_the_password_from_secrets() -> None:
    for manifest in ("retriever.yaml", "generator.yaml", "gateway.yaml", "ingest.yaml"):
        containers = _env_from_secrets(manifest)
        assert containers, manifest
        assert all("RAGWAY_SERVICE_TOKEN" in c for c in containers), manifest
    for manifest in ("gateway.yaml", "ingest.yaml"):  # ingest.yaml: the API and the worker
        assert all("RAGWAY_REDIS_PASSWORD" in c for c in _env_from_secrets(manifest)), manifest


def test_k8s_denies_ingress_by_default_and_opens_the_grpc_ports_only_to_their_callers() -> None:
    assert (
        "network-policies.yaml"
        in yaml.safe_load((K8S / "kustomization.yaml").read_text())["resources"]
    )
    policies = _k8s("network-policies.yaml")
    deny = next(p for p in policies if p["metadata"]["name"] == "default-deny-ingress")
    assert deny["spec"]["podSelector"] == {} and deny["spec"]["policyTypes"] == ["Ingress"]
    assert not deny["spec"].get("ingress")
    callers = {"retriever": (7101, {"gateway", "worker", "ragway-tools"}),
               "generator": (7102, {"gateway"})}  # fmt: skip
    for app, (port, allowed) in callers.items():
        rules = [
            rule
            for p in policies
            if p["spec"]["podSelector"].get("matchLabels", {}).get("app.kubernetes.io/name") == app
            for rule in p["spec"].get("ingress", [])
            if any(pt["port"] == port for pt in rule.get("ports", []))
        ]
        assert rules, app
        # Every rule that opens the gRPC port names who may come: none is open to all.
        assert all(rule.get("from") for rule in rules), app
        peers = {
            peer["podSelector"]["matchLabels"]["app.kubernetes.io/name"]
            for rule in rules
            for peer in rule["from"]
        }
        assert peers == allowed, app
