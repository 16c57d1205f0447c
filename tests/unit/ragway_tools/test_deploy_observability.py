"""The committed dashboard and alert rules query only metrics and labels the code exports."""

from __future__ import annotations

import json
from pathlib import Path

from ragway_tools import deploy_observability as obs


def test_the_committed_dashboard_and_alert_rules_check_clean() -> None:
    assert obs.check_dashboard() == []
    assert obs.check_alerts() == []


def test_the_dashboard_covers_the_main_panels() -> None:
    dashboard = json.loads(obs.DASHBOARD.read_text())
    queries = " ".join(expr for _, expr in obs.dashboard_queries(dashboard))
    for metric in (
        "ragway_http_requests_total",
        "ragway_http_request_duration_seconds_bucket",
        "ragway_stage_duration_seconds_bucket",
        "ragway_retriever_stage_duration_seconds_bucket",
        "ragway_queue_depth",
        "ragway_generator_refusals_total",
        "ragway_breaker_state",
    ):
        assert metric in queries, metric


def test_a_metric_the_code_does_not_export_is_reported() -> None:
    families = obs.registered()
    problems = obs.check_query("panel 'x' A", "rate(ragway_runs_typo_total[5m])", families)
    assert "panel 'x' A: ragway_runs_typo_total is not a metric the services export" in problems


def test_a_label_the_metric_does_not_have_is_reported_in_selectors_and_by() -> None:
    families = obs.registered()
    selector = obs.check_query("a", 'sum(rate(ragway_runs_total{tenant="acme"}[5m]))', families)
    assert selector == ["a: ragway_runs_total has no label 'tenant'"]
    grouped = obs.check_query("b", "sum by (tenant) (rate(ragway_runs_total[5m]))", families)
    assert grouped == ["b: no metric in the query has the label 'tenant'"]
    fine = 'sum by (outcome) (rate(ragway_runs_total{outcome="refused"}[5m]))'
    assert obs.check_query("c", fine, families) == []


def test_a_dashboard_that_is_not_json_is_one_problem(tmp_path: Path) -> None:
    broken = tmp_path / "dashboard.json"
    broken.write_text("{not json")
    [problem] = obs.check_dashboard(broken)
    assert "not valid JSON" in problem
