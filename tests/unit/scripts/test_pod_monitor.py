"""The PodMonitor check of make deploy-check, on made-up objects and on the real component."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.conftest import ROOT
from tests.unit.scripts.loading import load

validate_deploy = load("validate_deploy")
COMPONENT = ROOT / "deploy/k8s/components/prometheus-operator/podmonitor.yaml"


def deployment(name: str, ports: dict[str, int], annotated_port: int | None = None) -> Any:
    annotations = {} if annotated_port is None else {"prometheus.io/port": str(annotated_port)}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "metadata": {
                    "labels": {"app.kubernetes.io/name": name},
                    "annotations": annotations,
                },
                "spec": {
                    "containers": [
                        {
                            "name": name,
                            "ports": [{"name": n, "containerPort": p} for n, p in ports.items()],
                        }
                    ]
                },
            }
        },
    }


def monitor() -> Any:
    return yaml.safe_load(Path(COMPONENT).read_text())


def test_the_shipped_monitor_scrapes_each_service_on_the_port_it_serves_metrics_on() -> None:
    objects = [
        monitor(),
        deployment("gateway", {"http": 8000}, 8000),
        deployment("executor", {"metrics": 9103}, 9103),  # the runs' metrics
        deployment("retriever", {"grpc": 7101, "metrics": 9101}, 9101),
        deployment("generator", {"grpc": 7102, "metrics": 9102}, 9102),
        deployment("ingest", {"http": 7103}, 7103),
        deployment("worker", {}),  # serves none, and is not expected to
    ]
    assert validate_deploy.check_pod_monitors(objects) == []


def test_a_pod_left_unscraped_or_scraped_on_another_port_than_annotated_is_reported() -> None:
    objects = [
        monitor(),
        deployment("retriever", {"grpc": 7101}),  # no metrics port: unscraped
        deployment("generator", {"http": 8080, "metrics": 9102}, 9102),  # 'http' comes first
        deployment("tools", {"http": 8000}),  # not selected
    ]
    problems = validate_deploy.check_pod_monitors(objects)
    assert len(problems) == 3, problems
    assert problems[0].startswith("Deployment/retriever: no PodMonitor scrapes its pods")
    assert "Deployment/generator: scraped on port http (8080)" in problems[1]
    assert problems[2].startswith("Deployment/tools: no PodMonitor")


def test_the_monitor_fields_are_checked_as_the_crd_schema_would() -> None:
    bad = monitor()
    bad["spec"]["podMetricsEndpoints"][0] |= {"interval": "half a minute", "targetPort": 1}
    bad["spec"]["selector"] = {}
    bad["spec"]["relabelings"] = []
    problems = validate_deploy.check_pod_monitors([bad])
    assert any("spec.relabelings: unknown field" in p for p in problems)
    assert any("podMetricsEndpoints/0.targetPort: unknown field" in p for p in problems)
    assert any("'half a minute' is not a duration" in p for p in problems)
    assert any("spec.selector selects nothing" in p for p in problems)


def test_without_a_pod_monitor_nothing_is_required_the_annotations_serve() -> None:
    assert validate_deploy.check_pod_monitors([deployment("gateway", {"grpc": 1})]) == []


def test_label_selectors_match_as_kubernetes_matches_them() -> None:
    selects = validate_deploy.selects
    labels = {"app": "retriever", "track": "canary"}
    assert selects({"matchLabels": {"app": "retriever"}}, labels)
    assert not selects({"matchLabels": {"app": "gateway"}}, labels)
    assert selects(
        {"matchExpressions": [{"key": "app", "operator": "In", "values": ["retriever"]}]}, labels
    )
    assert not selects(
        {"matchExpressions": [{"key": "track", "operator": "NotIn", "values": ["canary"]}]}, labels
    )
    assert selects({"matchExpressions": [{"key": "track", "operator": "Exists"}]}, labels)
    assert not selects({"matchExpressions": [{"key": "track", "operator": "DoesNotExist"}]}, labels)
    assert selects({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, labels)
