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
* An overlay that brings its own Secrets (``overlays/dev``) renders every Secret,
  and every key, that a container's env, envFrom or a volume takes without
  ``optional: true``: applied alone it starts. Its dev-only secret files come from
  scripts/dev_secrets.py (``make deploy-check`` writes them when missing).

Usage: python scripts/validate_deploy.py [--kustomize PATH] [--k8s-version 1.33.0]
Exit status 0 when everything validates; the failures are listed otherwise.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import yaml

ROOT = Path(__file__).resolve().parent.parent
K8S = ROOT / "deploy" / "k8s"


def render(kustomize: str, folder: Path) -> list[dict[str, Any]]:
    # The dev overlay takes the demo API keys from config/, outside its folder.
    out = subprocess.run(
        [kustomize, "build", "--load-restrictor", "LoadRestrictionsNone", str(folder)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


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
            try:
                kubernetes_validate.validate(obj, version, strict=True)
            except kubernetes_validate.ValidationError as e:
                path = "/".join(str(p) for p in e.path)
                problems.append(f"{label}: {path}: {e.message}")
            except kubernetes_validate.SchemaNotFoundError as e:
                problems.append(f"{label}: no schema ({e})")
        sys.stdout.write(f"{name}: {len(objects)} objects checked against Kubernetes {version}\n")
        if str(name) in SELF_CONTAINED:
            missing = missing_secrets(objects)
            problems += [f"{name}: {m}" for m in missing]
            if not missing:
                refs = len(secret_refs(objects))
                sys.stdout.write(f"{name}: all {refs} required Secret references are rendered\n")
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
