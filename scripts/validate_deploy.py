"""Validate the deployment files: docker-compose.yml and every kustomize overlay.

* ``docker compose config`` parses and interpolates docker-compose.yml (the
  client needs no engine for that).
* The Grafana dashboard and the Prometheus alert rules in deploy/k8s/base/observability
  parse, and query only metrics and labels the services export
  (ragway_tools/deploy_observability.py).
* Each of deploy/k8s/base and deploy/k8s/overlays/* is rendered by ``kustomize
  build`` and every object is validated, strictly (unknown fields are errors),
  against the Kubernetes OpenAPI schemas bundled in the kubernetes-validate
  package: nothing is downloaded at run time.
* The Prometheus Operator component (deploy/k8s/components/prometheus-operator) is
  rendered with the base and with each overlay. kubernetes-validate bundles no CRD
  schemas, so its PodMonitor is checked here instead: the fields ragway uses, by name
  and form, and that it scrapes every Deployment's pods but the worker's, on a port
  they declare (the one their prometheus.io/port annotation names, if any).
* An overlay that brings its own Secrets (``overlays/dev``) renders every Secret,
  and every key, that a container's env, envFrom or a volume takes without
  ``optional: true``: applied alone it starts. Its dev-only secret files come from
  scripts/dev_secrets.py (``make deploy-check`` writes them when missing).

Usage: python scripts/validate_deploy.py [--kustomize PATH] [--k8s-version 1.33.0]
Exit status 0 when everything validates; the failures are listed otherwise.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import kubernetes_validate
import yaml

ROOT = Path(__file__).resolve().parent.parent
K8S = ROOT / "deploy" / "k8s"
MONITORING = K8S / "components" / "prometheus-operator"
# Custom resources: kubernetes-validate has no schema for them; check_pod_monitors does.
CRD_KINDS = {("monitoring.coreos.com/v1", "PodMonitor")}
# Deployments whose pods serve no /metrics (the Celery worker has no HTTP listener).
NO_METRICS = {"worker"}


def render(kustomize: str, folder: Path) -> list[dict[str, Any]]:
    # The dev overlay takes the demo API keys from config/, outside its folder.
    out = subprocess.run(
        [kustomize, "build", "--load-restrictor", "LoadRestrictionsNone", str(folder)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def render_with_component(kustomize: str, folder: Path, component: Path) -> list[dict[str, Any]]:
    """``folder`` rendered with ``component`` added, as an overlay that opts in would be."""
    with tempfile.TemporaryDirectory(prefix="ragway-kustomize-") as tmp:
        # kustomize takes no absolute directory as a resource or component.
        (Path(tmp) / "kustomization.yaml").write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "kustomize.config.k8s.io/v1beta1",
                    "kind": "Kustomization",
                    "resources": [os.path.relpath(folder, tmp)],
                    "components": [os.path.relpath(component, tmp)],
                }
            )
        )
        return render(kustomize, Path(tmp))


_DURATION = re.compile(r"^([0-9]+(ms|s|m|h))+$")
_MONITOR_SPEC = {"selector", "podMetricsEndpoints", "namespaceSelector", "jobLabel"}
_ENDPOINT = {"port", "path", "interval", "scrapeTimeout", "scheme", "honorLabels"}
_OPERATORS = {"In", "NotIn", "Exists", "DoesNotExist"}


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """Whether a Kubernetes label selector matches ``labels``."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e.get("key"), e.get("operator"), e.get("values") or []
        if (op == "In" and labels.get(key) not in values) or (
            op == "NotIn" and labels.get(key) in values
        ):
            return False
        if (op == "Exists" and key not in labels) or (op == "DoesNotExist" and key in labels):
            return False
    return True


def _monitor_fields(label: str, monitor: dict[str, Any]) -> list[str]:
    """The PodMonitor fields ragway uses, checked as the CRD schema would."""
    problems: list[str] = []
    spec = monitor.get("spec") or {}
    if not monitor.get("metadata", {}).get("name"):
        problems.append(f"{label}: metadata.name is missing")
    problems += [f"{label}: spec.{k}: unknown field" for k in sorted(set(spec) - _MONITOR_SPEC)]
    selector = spec.get("selector")
    if not isinstance(selector, dict) or not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    ):
        problems.append(f"{label}: spec.selector selects nothing (it would select every pod)")
    else:
        problems += [
            f"{label}: spec.selector.{k}: unknown field"
            for k in sorted(set(selector) - {"matchLabels", "matchExpressions"})
        ]
        for e in selector.get("matchExpressions") or []:
            if e.get("operator") not in _OPERATORS or not e.get("key"):
                problems.append(f"{label}: spec.selector.matchExpressions: bad expression {e}")
            elif e["operator"] in {"In", "NotIn"} and not e.get("values"):
                problems.append(f"{label}: spec.selector.matchExpressions: {e['key']} needs values")
    endpoints = spec.get("podMetricsEndpoints")
    if not endpoints:
        problems.append(f"{label}: spec.podMetricsEndpoints is empty")
    for n, ep in enumerate(endpoints or []):
        where = f"{label}: spec.podMetricsEndpoints/{n}"
        problems += [f"{where}.{k}: unknown field" for k in sorted(set(ep) - _ENDPOINT)]
        if not isinstance(ep.get("port"), str) or not ep["port"]:
            problems.append(f"{where}.port: a container port's name is required")
        if not str(ep.get("path", "/metrics")).startswith("/"):
            problems.append(f"{where}.path: must start with /")
        for key in ("interval", "scrapeTimeout"):
            if key in ep and not _DURATION.match(str(ep[key])):
                problems.append(f"{where}.{key}: {ep[key]!r} is not a duration like 30s")
    return problems


def check_pod_monitors(objects: list[dict[str, Any]]) -> list[str]:
    """The PodMonitors' fields, and that they scrape every Deployment that serves metrics.

    Objects without a PodMonitor pass: their scraper reads the pod annotations.
    """
    monitors = [o for o in objects if (o.get("apiVersion"), o.get("kind")) in CRD_KINDS]
    if not monitors:
        return []
    problems: list[str] = []
    for m in monitors:
        problems += _monitor_fields(f"PodMonitor/{m.get('metadata', {}).get('name')}", m)
    for obj in objects:
        if obj.get("kind") != "Deployment" or obj["metadata"]["name"] in NO_METRICS:
            continue
        where = f"Deployment/{obj['metadata']['name']}"
        template = obj["spec"]["template"]
        labels = template.get("metadata", {}).get("labels") or {}
        annotated = (template.get("metadata", {}).get("annotations") or {}).get(
            "prometheus.io/port"
        )
        ports = {
            p["name"]: p["containerPort"]
            for c in template["spec"].get("containers", [])
            for p in c.get("ports", [])
            if "name" in p
        }
        scraped = [
            ep["port"]
            for m in monitors
            if selects(m.get("spec", {}).get("selector") or {}, labels)
            for ep in m.get("spec", {}).get("podMetricsEndpoints") or []
            if ep.get("port") in ports
        ]
        if not scraped:
            problems.append(
                f"{where}: no PodMonitor scrapes its pods (labels {labels}, ports {sorted(ports)})"
            )
        elif annotated is not None and str(ports[scraped[0]]) != str(annotated):
            problems.append(
                f"{where}: scraped on port {scraped[0]} ({ports[scraped[0]]}), "
                f"but prometheus.io/port says {annotated}"
            )
    return problems


# Overlays applied on their own to a cluster where the operator created nothing.
SELF_CONTAINED = {"overlays/dev"}


def secret_refs(objects: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    """(workload, Secret name, key or None for the whole Secret) of every required reference."""
    refs: list[tuple[str, str, str | None]] = []
    for obj in objects:
        pod = obj.get("spec", {}).get("template", {}).get("spec")
        if not isinstance(pod, dict):
            continue
        where = f"{obj.get('kind')}/{obj.get('metadata', {}).get('name')}"
        for c in [*pod.get("containers", []), *pod.get("initContainers", [])]:
            for env in c.get("env", []):
                ref = env.get("valueFrom", {}).get("secretKeyRef")
                if ref and not ref.get("optional"):
                    refs.append((where, ref["name"], ref["key"]))
            for source in c.get("envFrom", []):
                ref = source.get("secretRef")
                if ref and not ref.get("optional"):
                    refs.append((where, ref["name"], None))
        for volume in pod.get("volumes", []):
            ref = volume.get("secret")
            if ref and not ref.get("optional"):
                keys = [item["key"] for item in ref.get("items", [])] or [None]
                refs.extend((where, ref["secretName"], key) for key in keys)
    return refs


def missing_secrets(objects: list[dict[str, Any]]) -> list[str]:
    """The required Secret references the rendered objects do not satisfy."""
    secrets = {
        obj["metadata"]["name"]: {*obj.get("data", {}), *obj.get("stringData", {})}
        for obj in objects
        if obj.get("kind") == "Secret"
    }
    problems = []
    for where, name, key in secret_refs(objects):
        if name not in secrets:
            problems.append(f"{where}: references Secret {name}, which the overlay lacks")
        elif key is not None and key not in secrets[name]:
            problems.append(f"{where}: references key {key} of Secret {name}, which it lacks")
    return problems


def validate_k8s(kustomize: str, version: str) -> list[str]:
    problems: list[str] = []
    folders = [K8S / "base", *sorted(p for p in (K8S / "overlays").iterdir() if p.is_dir())]
    for folder in folders:
        name = folder.relative_to(K8S)
        try:
            objects = render(kustomize, folder)
        except subprocess.CalledProcessError as e:
            problems.append(f"{name}: kustomize build failed: {e.stderr.strip()}")
            continue
        if not objects:
            problems.append(f"{name}: rendered no objects")
        for obj in objects:
            label = f"{name}: {obj.get('kind')}/{obj.get('metadata', {}).get('name')}"
            if (obj.get("apiVersion"), obj.get("kind")) in CRD_KINDS:
                continue  # no schema bundled: check_pod_monitors below
            try:
                kubernetes_validate.validate(obj, version, strict=True)
            except kubernetes_validate.ValidationError as e:
                path = "/".join(str(p) for p in e.path)
                problems.append(f"{label}: {path}: {e.message}")
            except kubernetes_validate.SchemaNotFoundError as e:
                problems.append(f"{label}: no schema ({e})")
        sys.stdout.write(f"{name}: {len(objects)} objects checked against Kubernetes {version}\n")
        problems += [f"{name}: {p}" for p in check_pod_monitors(objects)]
        problems += _with_monitoring(kustomize, folder, str(name))
        if str(name) in SELF_CONTAINED:
            missing = missing_secrets(objects)
            problems += [f"{name}: {m}" for m in missing]
            if not missing:
                refs = len(secret_refs(objects))
                sys.stdout.write(f"{name}: all {refs} required Secret references are rendered\n")
    return problems


def _with_monitoring(kustomize: str, folder: Path, name: str) -> list[str]:
    """``folder`` with the Prometheus Operator component: its PodMonitor checked by hand."""
    shown = f"{name} + {MONITORING.relative_to(K8S)}"
    try:
        objects = render_with_component(kustomize, folder, MONITORING)
    except subprocess.CalledProcessError as e:
        return [f"{shown}: kustomize build failed: {e.stderr.strip()}"]
    monitors = sum((o.get("apiVersion"), o.get("kind")) in CRD_KINDS for o in objects)
    problems = [f"{shown}: {p}" for p in check_pod_monitors(objects)]
    if not monitors:
        problems.append(f"{shown}: rendered no PodMonitor")
    if not problems:
        sys.stdout.write(
            f"{shown}: {monitors} PodMonitor checked by hand (no CRD schema bundled); "
            "every Deployment serving metrics is scraped\n"
        )
    return problems


def validate_compose() -> list[str]:
    result = subprocess.run(
        ["docker", "compose", "-f", str(ROOT / "docker-compose.yml"), "config", "--quiet"],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        return [f"docker-compose.yml: {(result.stderr or result.stdout).strip()}"]
    sys.stdout.write("docker-compose.yml: docker compose config accepts it\n")
    return []


def validate_observability() -> list[str]:
    from ragway_tools.deploy_observability import check

    problems = check()
    if not problems:
        sys.stdout.write("dashboard and alert rules: every metric and label exists in the code\n")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kustomize", default=shutil.which("kustomize") or "kustomize")
    parser.add_argument("--k8s-version", default="1.33.0")
    args = parser.parse_args()
    problems = (
        validate_observability()
        + validate_compose()
        + validate_k8s(args.kustomize, args.k8s_version)
    )
    for p in problems:
        sys.stderr.write(f"error: {p}\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
