"""Checks of the Grafana dashboard and the Prometheus alert rules in deploy/k8s.

A dashboard panel or an alert over a metric the code does not export shows an
empty graph or never fires, silently; so every ``ragway_*`` name in a query must
be a metric the services register (``REGISTRY``, with the exposition's
``_total``/``_bucket``/``_count``/``_sum`` suffixes), and every label a selector
or a ``by (...)`` names must be one of that metric's labels.

``scripts/validate_deploy.py`` (``make deploy-check``) and
tests/unit/ragway_tools/test_deploy_observability.py run the same checks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
OBSERVABILITY = ROOT / "deploy" / "k8s" / "base" / "observability"
DASHBOARD = OBSERVABILITY / "ragway-dashboard.json"
ALERTS = OBSERVABILITY / "ragway-alerts.yaml"

_METRIC = re.compile(r"\bragway_[a-z0-9_]+")
_SUFFIXES = ("_total", "_bucket", "_count", "_sum", "_created")
# `name{label="…", other=~"…"}`: the labels of one selector.
_SELECTOR = re.compile(r"\b(ragway_[a-z0-9_]+)\{([^}]*)\}")
_SELECTOR_LABEL = re.compile(r"([a-z_][a-z0-9_]*)\s*(?:=~|!~|!=|=)")
# `by (a, b)` right before `(… ragway_x …)`: checked against every metric inside.
_BY = re.compile(r"\bby\s*\(([^)]*)\)")
# Labels Prometheus or the histogram add to every series.
_ALWAYS = {"le", "job", "instance", "namespace", "pod", "container", "service"}


def registered() -> dict[str, set[str]]:
    """family name -> label names, of every metric the services register."""
    # Imported for their side effect: each registers its service's metrics.
    import services.gateway.metrics
    import services.generator.metrics
    import services.retriever.metrics
    from ragway.metrics import REGISTRY

    assert services.gateway.metrics.RUNS is not None
    assert services.generator.metrics.REFUSALS is not None
    assert services.retriever.metrics.SEARCH_DURATION is not None
    families: dict[str, set[str]] = {}
    for family in REGISTRY.collect():
        families[family.name] = set()
    # Declared label names, which samples only show once observed.
    for collector in list(REGISTRY._collector_to_names):
        names = getattr(collector, "_labelnames", None)
        metric = getattr(collector, "_name", None)
        if names is not None and metric in families:
            families[metric] = set(names)
    return families


def family_of(name: str, families: dict[str, set[str]]) -> str | None:
    if name in families:
        return name
    for suffix in _SUFFIXES:
        if name.endswith(suffix) and name.removesuffix(suffix) in families:
            return name.removesuffix(suffix)
    return None


def check_query(where: str, expr: str, families: dict[str, set[str]]) -> list[str]:
    problems: list[str] = []
    used: dict[str, str] = {}
    for name in _METRIC.findall(expr):
        family = family_of(name, families)
        if family is None:
            problems.append(f"{where}: {name} is not a metric the services export")
        else:
            used[name] = family
    for name, inside in _SELECTOR.findall(expr):
        family = used.get(name)
        for label in _SELECTOR_LABEL.findall(inside):
            if family is not None and label not in families[family] | _ALWAYS:
                problems.append(f"{where}: {name} has no label {label!r}")
    labels_of_all = set().union(*(families[f] for f in used.values())) if used else set()
    for group in _BY.findall(expr):
        for label in (part.strip() for part in group.split(",")):
            if label and label not in labels_of_all | _ALWAYS:
                problems.append(f"{where}: no metric in the query has the label {label!r}")
    if not used:
        problems.append(f"{where}: the query uses no ragway metric")
    return problems


def dashboard_queries(dashboard: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for panel in dashboard.get("panels", []):
        for target in panel.get("targets", []):
            yield f"panel {panel.get('title')!r} {target.get('refId')}", str(target.get("expr", ""))


def check_dashboard(path: Path = DASHBOARD) -> list[str]:
    name = _shown(path)
    try:
        dashboard = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return [f"{name}: not valid JSON: {exc}"]
    problems = [
        f"{name}: missing {key!r}"
        for key in ("title", "uid", "schemaVersion", "panels")
        if key not in dashboard
    ]
    families = registered()
    graphs = [p for p in dashboard.get("panels", []) if p.get("type") != "row"]
    if not graphs:
        problems.append(f"{name}: no panels")
    ids = [p.get("id") for p in dashboard.get("panels", [])]
    if len(ids) != len(set(ids)):
        problems.append(f"{name}: panel ids repeat")
    for panel in graphs:
        if not panel.get("targets"):
            problems.append(f"{name}: panel {panel.get('title')!r} has no query")
    for where, expr in dashboard_queries(dashboard):
        problems += [f"{name}: {p}" for p in check_query(where, expr, families)]
    return problems


def check_alerts(path: Path = ALERTS) -> list[str]:
    name = _shown(path)
    try:
        rules_file = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        return [f"{name}: not valid YAML: {exc}"]
    families = registered()
    problems: list[str] = []
    groups = rules_file.get("groups") if isinstance(rules_file, dict) else None
    if not groups:
        return [f"{name}: no rule groups"]
    for group in groups:
        for rule in group.get("rules") or []:
            alert = rule.get("alert")
            where = f"alert {alert!r}"
            if not alert or not rule.get("expr"):
                problems.append(f"{name}: a rule without 'alert' and 'expr': {rule}")
                continue
            if "severity" not in (rule.get("labels") or {}):
                problems.append(f"{name}: {where} has no severity label")
            if "summary" not in (rule.get("annotations") or {}):
                problems.append(f"{name}: {where} has no summary")
            problems += [f"{name}: {p}" for p in check_query(where, rule["expr"], families)]
    return problems


def _shown(path: Path) -> Path:
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def check() -> list[str]:
    return check_dashboard() + check_alerts()
