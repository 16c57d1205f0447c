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
PARTS = ("retriever", "generator", "gateway", "executor", "ingest", "worker")
REDIS_USERS = ("gateway", "executor", "ingest", "worker")


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
    manifests = ("retriever.yaml", "generator.yaml", "gateway.yaml", "executor.yaml", "ingest.yaml")
    for manifest in manifests:
        containers = _env_from_secrets(manifest)
        assert containers, manifest
        assert all("RAGWAY_SERVICE_TOKEN" in c for c in containers), manifest
    # The Redis users (ingest.yaml: the API and the worker).
    for manifest in ("gateway.yaml", "executor.yaml", "ingest.yaml"):
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
    callers = {"retriever": (7101, {"gateway", "executor", "worker", "ragway-tools"}),
               "generator": (7102, {"gateway", "executor"})}  # fmt: skip
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


EXECUTORS = ["python", "-m", "services.gateway.executors"]


def _deployment(manifest: str, name: str) -> dict[str, Any]:
    return next(
        d for d in _k8s(manifest) if d["kind"] == "Deployment" and d["metadata"]["name"] == name
    )


def test_runs_execute_apart_from_the_gateway_in_k8s_and_compose() -> None:
    """The gateway serves HTTP and streams only; an executor workload runs the runs.

    Measured (docs/performance.md): in the gateway's own process a run watched by 2,000
    streams took 1.16-1.18x an unobserved one; with the executors apart, 1.00x. A gateway
    with RAGWAY_RUN_EXECUTORS=false and no executor workload would leave every run queued.
    """
    assert "executor.yaml" in yaml.safe_load((K8S / "kustomization.yaml").read_text())["resources"]
    gateway = _deployment("gateway.yaml", "gateway")["spec"]["template"]["spec"]
    executor = _deployment("executor.yaml", "executor")["spec"]["template"]["spec"]
    [gw], [ex] = gateway["containers"], executor["containers"]
    assert {"name": "RAGWAY_RUN_EXECUTORS", "value": "false"} in gw["env"]
    assert ex["image"] == gw["image"] == "ragway-gateway"
    assert ex["command"] == EXECUTORS
    assert ex["envFrom"] == gw["envFrom"]
    assert ex["securityContext"] == gw["securityContext"]
    assert executor["securityContext"] == gateway["securityContext"]
    assert not executor.get("automountServiceAccountToken")
    # The runs' metrics are counted where they execute: its listener is on and scraped.
    env = {e["name"]: e.get("value") for e in ex["env"]}
    ports = {p["name"]: p["containerPort"] for p in ex["ports"]}
    assert env["RAGWAY_METRICS_PORT"] == str(ports["metrics"])
    assert env["RAGWAY_METRICS_HOST"] == "0.0.0.0"

    services = COMPOSE["services"]
    assert services["gateway"]["environment"]["RAGWAY_RUN_EXECUTORS"] == "false"
    assert services["executor"]["image"] == services["gateway"]["image"]
    assert services["executor"]["command"] == EXECUTORS
    assert services["executor"]["environment"]["RAGWAY_METRICS_PORT"] == "9103"
    assert services["executor"]["volumes"] == services["gateway"]["volumes"]  # the key file


def test_k8s_opens_no_port_of_the_executor_but_its_metrics_to_monitoring() -> None:
    policies = [
        p
        for p in _k8s("network-policies.yaml")
        if p["spec"]["podSelector"].get("matchLabels", {}).get("app.kubernetes.io/name")
        == "executor"
    ]
    rules = [rule for p in policies for rule in p["spec"].get("ingress", [])]
    assert rules == [
        {
            "from": [
                {
                    "namespaceSelector": {
                        "matchLabels": {"kubernetes.io/metadata.name": "monitoring"}
                    }
                }
            ],
            "ports": [{"port": 9103, "protocol": "TCP"}],
        }
    ]
