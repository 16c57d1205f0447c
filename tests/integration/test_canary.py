"""Paths, canary and shadow on the real processes: routing, records, report, rollback.

On the session stack; every test ends any experiment it started, so the other
tests keep being served by the baseline.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis
from typer.testing import CliRunner

from ragway.kb import Defaults
from ragway_tools import build_client as b
from ragway_tools.cli import app
from ragway_tools.launcher import Stack, free_port
from services.gateway.paths.routing import BUCKETS, bucket
from tests.conftest import ROOT
from tests.integration.conftest import auth
from tests.integration.sse import read_events, start_run

ADMIN = {"Authorization": "Bearer key-demo-admin"}
PUBLIC = auth("demo")
QUESTION = "How do I resume a stream after a disconnect?"
HALF_BUILD = "b-canary-demo-only"  # kb/demo alone: none of the docs/ pages
GONE_BUILD = "b-canary-gone"  # exists when its path is set, deleted afterwards


def cli(stack: Stack, *args: str) -> Any:
    return CliRunner().invoke(
        app, [*args, "--url", stack.config.gateway_url, "--key", "key-demo-admin"]
    )


def users(percent: float) -> tuple[str, str]:
    """A user the demo key's hash puts inside ``percent``, and one outside it."""
    inside = [
        f"u{n}"
        for n in range(500)
        if bucket("demo", "demo-public", f"u{n}") < percent * BUCKETS / 100
    ]
    outside = [
        f"u{n}"
        for n in range(500)
        if bucket("demo", "demo-public", f"u{n}") >= percent * BUCKETS / 100
    ]
    return inside[0], outside[0]


def ask(api: httpx.Client, user: str | None, question: str = QUESTION) -> dict[str, Any]:
    body: dict[str, Any] = {"question": question}
    if user is not None:
        body["user_id"] = user
    resp = api.post("/v1/ask", json=body, headers=PUBLIC)
    assert resp.status_code == 200, resp.text
    record = api.get(f"/v1/runs/{resp.json()['run_id']}", headers=PUBLIC).json()
    assert isinstance(record, dict)
    return record


def state(api: httpx.Client) -> dict[str, Any]:
    s: dict[str, Any] = api.get("/v1/admin/canary", headers=ADMIN).json()["state"]
    return s


def wait_for(check: Any, timeout_s: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


# Loose gates, so that a candidate as good as the baseline passes a step within a few
# runs a side (alpha 0.5 over four gates: 7 clean runs a side pass a 0.5-point limit).
QUICK = {
    "min_samples": 3, "alpha": 0.5, "max_error_rate_increase": 0.5,
    "max_refusal_rate_increase": 0.5, "max_citation_validity_drop": 0.5,
    "max_p95_latency_ratio": 20, "max_latency_exceedance_increase": 0.5,
}  # fmt: skip


def metric(api: httpx.Client, line_start: str) -> float:
    text = api.get("/metrics").text
    values = [float(x.rsplit(" ", 1)[1]) for x in text.splitlines() if x.startswith(line_start)]
    return sum(values)


@pytest.fixture(scope="module")
def builds(stack: Stack) -> Iterator[None]:
    addr = stack.config.retriever_addr
    defaults = Defaults(tenant="demo", groups=("public",))
    b.create_build(addr, [ROOT / "kb/demo"], defaults, build_id=HALF_BUILD, candidate=False)
    b.create_build(
        addr, [ROOT / "kb/demo/sre-runbook.md"], defaults, build_id=GONE_BUILD, candidate=False
    )
    yield
    b.delete_build(addr, HALF_BUILD)


@pytest.fixture
def api(stack: Stack, builds: None) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.config.gateway_url, timeout=30) as client:
        yield client
        client.post("/v1/admin/canary/stop", headers=ADMIN)  # 409 when none runs: fine


def test_only_admin_keys_reach_the_admin_api(api: httpx.Client) -> None:
    for who in ("demo", "demo-sre"):
        resp = api.get("/v1/admin/paths", headers=auth(who))
        assert resp.status_code == 403
        assert resp.json()["error"]["code"] == "admin_key_required"
    assert api.get("/v1/admin/paths").status_code == 401


def test_a_path_is_validated_on_write_versioned_and_listed(api: httpx.Client, stack: Stack) -> None:
    before = api.get("/v1/admin/paths", headers=ADMIN).json()
    resp = api.put("/v1/admin/paths/candidate", json={"build": "no-such-build"}, headers=ADMIN)
    assert resp.status_code == 422 and resp.json()["error"]["code"] == "unknown_build"
    bad = api.put("/v1/admin/paths/Bad Name", json={}, headers=ADMIN)
    assert bad.status_code == 422
    # The demo retriever loads no reranker artifact, so a path can name none.
    assert api.get("/v1/admin/rerankers", headers=ADMIN).json() == []
    nope = api.put("/v1/admin/paths/candidate", json={"reranker": "reranker-x"}, headers=ADMIN)
    assert nope.status_code == 422 and nope.json()["error"]["code"] == "unknown_reranker"
    assert "offers no reranker 'reranker-x' (offered: none)" in nope.json()["error"]["message"]
    both = {"reranker": "reranker-x", "rerank": "off"}
    off = api.put("/v1/admin/paths/candidate", json=both, headers=ADMIN)
    assert off.status_code == 422 and "rerank off" in off.json()["error"]["message"]
    assert api.get("/v1/admin/paths", headers=ADMIN).json() == before  # nothing changed

    result = cli(stack, "paths", "set", "candidate", "--build", HALF_BUILD, "--rerank", "off",
                 "--prompt-label", "v2-test", "--note", "demo KB only")  # fmt: skip
    assert result.exit_code == 0, result.output
    shown = api.get("/v1/admin/paths/candidate", headers=ADMIN).json()
    assert (shown["build"], shown["build_id"], shown["rerank"]) == (HALF_BUILD, HALF_BUILD, "off")
    again = cli(stack, "paths", "set", "candidate", "--build", HALF_BUILD, "--rerank", "off")
    assert again.exit_code == 0, again.output
    newer = api.get("/v1/admin/paths/candidate", headers=ADMIN).json()
    assert newer["version"] == shown["version"] + 1
    old = api.get(f"/v1/admin/paths/candidate?version={shown['version']}", headers=ADMIN).json()
    assert old["prompt_label"] == "v2-test"

    listed = cli(stack, "paths", "list", "--json")
    assert listed.exit_code == 0, listed.output
    names = {p["name"]: p for p in json.loads(listed.output)}
    assert names["baseline"]["version"] >= 0 and names["candidate"]["version"] == newer["version"]
    missing = cli(stack, "paths", "show", "nope")
    assert missing.exit_code == 1 and "unknown_path" in missing.output


def test_a_canary_keeps_each_user_on_one_path_and_every_record_names_it(
    api: httpx.Client, stack: Stack
) -> None:
    api.put("/v1/admin/paths/candidate", json={"build": HALF_BUILD}, headers=ADMIN)
    version = api.get("/v1/admin/paths/candidate", headers=ADMIN).json()["version"]
    inside, outside = users(50)
    started = cli(stack, "canary", "start", "--percent", "50")
    assert started.exit_code == 0, started.output
    live = b.live_build(stack.config.retriever_addr)
    for _ in range(2):
        served = ask(api, inside)
        assert (served["path"], served["path_version"]) == ("candidate", version)
        assert served["build_id"] == HALF_BUILD and served["user_id"] == inside
        other = ask(api, outside)
        assert (other["path"], other["build_id"]) == ("baseline", live)
        assert other["experiment"] == served["experiment"] is not None

    # Bad commands are refused and change nothing.
    second = cli(stack, "canary", "start", "--percent", "10")
    assert second.exit_code == 1 and "canary_running" in second.output
    assert api.post("/v1/admin/canary", json={"percent": 150}, headers=ADMIN).status_code == 422
    unknown = api.post("/v1/admin/canary", json={"percent": 5, "candidate": "nope"}, headers=ADMIN)
    assert unknown.status_code == 404
    assert state(api)["percent"] == 50

    # A report over these runs: too few for any verdict.
    report = cli(stack, "canary", "report", "--json")
    assert report.exit_code == 0, report.output
    body = json.loads(report.output)
    assert (body["baseline"]["runs"], body["candidate"]["runs"]) == (2, 2)
    assert body["verdict"] == "inconclusive"
    assert body["candidate"]["versions"] == [version]
    table = cli(stack, "canary", "status")
    assert table.exit_code == 0 and "error_rate" in table.output, table.output

    stopped = cli(stack, "canary", "stop")
    assert stopped.exit_code == 0, stopped.output
    assert ask(api, inside)["path"] == "baseline"
    assert cli(stack, "canary", "stop").exit_code == 1  # no canary: a clear error


def test_percentages_of_0_and_100_serve_no_one_and_everyone(api: httpx.Client) -> None:
    api.put("/v1/admin/paths/candidate", json={"build": HALF_BUILD}, headers=ADMIN)
    api.post("/v1/admin/canary", json={"percent": 0}, headers=ADMIN).raise_for_status()
    assert {ask(api, u)["path"] for u in ("a", "b", None)} == {"baseline"}
    api.post("/v1/admin/canary/stop", headers=ADMIN).raise_for_status()
    api.post("/v1/admin/canary", json={"percent": 100}, headers=ADMIN).raise_for_status()
    assert {ask(api, u)["path"] for u in ("a", "b", None)} == {"candidate"}


def _answer_events(api: httpx.Client, user: str) -> tuple[str, list[tuple[str, Any]]]:
    run_id = start_run(api, QUESTION, PUBLIC, user_id=user)
    events = read_events(api, run_id, PUBLIC)
    # What the user receives, less what differs between any two runs (ids, timings).
    kept = [
        (e.event, {k: v for k, v in e.json.items() if k not in ("run_id", "timings_ms")})
        for e in events
    ]
    return run_id, kept


def test_shadow_runs_the_candidate_unseen_and_the_served_events_are_unchanged(
    api: httpx.Client, stack: Stack
) -> None:
    api.put("/v1/admin/paths/candidate", json={"build": HALF_BUILD}, headers=ADMIN)
    _, without = _answer_events(api, "shadowed-user")
    started = api.post("/v1/admin/canary", json={"mode": "shadow", "percent": 100}, headers=ADMIN)
    assert started.status_code == 201, started.text
    run_id, with_shadow = _answer_events(api, "shadowed-user")
    assert with_shadow == without
    record = api.get(f"/v1/runs/{run_id}", headers=PUBLIC).json()
    assert (record["path"], record["shadow"]) == ("baseline", True)

    def paired() -> dict[str, Any] | None:
        report: dict[str, Any] = api.get("/v1/admin/canary/report", headers=ADMIN).json()
        return report if report["shadow"]["pairs"] >= 1 else None

    report = wait_for(paired)
    assert report, "the shadow run never finished"
    assert report["candidate"]["runs"] == 1 and report["baseline"]["runs"] == 1
    r = redis.Redis.from_url(stack.config.redis_url, decode_responses=True)
    try:
        key = f"ragway:exp:{report['experiment']}:candidate"
        (shadow_id,) = [str(i) for i in r.zrange(key, 0, -1)]
        shadow = json.loads(str(r.get(f"ragway:run:{shadow_id}")))
        assert r.exists(f"ragway:run:{shadow_id}:events") == 0  # never streamed
    finally:
        r.close()
    assert (shadow["shadow_of"], shadow["path"], shadow["build_id"]) == (
        run_id, "candidate", HALF_BUILD,
    )  # fmt: skip
    assert 0 <= report["shadow"]["top_k_overlap"] <= 1


def test_a_breached_gate_rolls_the_canary_back_on_its_own(api: httpx.Client, stack: Stack) -> None:
    # A planted regression: the candidate's build vanishes after its path was set.
    resp = api.put("/v1/admin/paths/broken", json={"build": GONE_BUILD}, headers=ADMIN)
    assert resp.status_code == 200, resp.text
    b.delete_build(stack.config.retriever_addr, GONE_BUILD)
    inside, outside = users(50)
    rollbacks = metric(api, 'ragway_canary_rollbacks_total{reason="gate_breach"}')
    gates = {"min_samples": 3, "max_error_rate_increase": 0.2}
    started = api.post(
        "/v1/admin/canary",
        json={"candidate": "broken", "percent": 50, "gates": gates},
        headers=ADMIN,
    )
    assert started.status_code == 201, started.text
    experiment = started.json()["experiment"]
    # The sequential gate needs enough runs to be sure (alpha 0.05 however often it
    # looks): a candidate that fails every run is rolled back within 200 requests.
    sent = 0
    while sent < 200 and state(api)["mode"] != "off":
        ask(api, outside)
        resp = api.post("/v1/ask", json={"question": QUESTION, "user_id": inside}, headers=PUBLIC)
        assert resp.status_code in (200, 502), resp.text  # 200: rolled back, baseline served
        sent += 2
    ended = wait_for(lambda: (s := state(api))["mode"] == "off" and s)
    assert ended, "the canary was not rolled back"
    assert ended["experiment"] == experiment and ended["rolled_back"] is True
    assert "error_rate" in ended["stopped_reason"]
    assert ask(api, inside)["path"] == "baseline"
    history = api.get("/v1/admin/canary/history", headers=ADMIN).json()
    assert history[0]["experiment"] == experiment
    report = cli(stack, "canary", "report")
    assert report.exit_code == 1, report.output  # the last experiment breached
    log = (stack.config.data_dir / "logs" / "gateway.log").read_text()
    assert "canary rolled back" in log
    assert metric(api, 'ragway_canary_rollbacks_total{reason="gate_breach"}') == rollbacks + 1


def test_a_candidate_is_widened_step_by_step_then_promoted_to_baseline(
    api: httpx.Client, stack: Stack
) -> None:
    api.put("/v1/admin/paths/candidate", json={"build": HALF_BUILD, "note": "ok"}, headers=ADMIN)
    before = api.get("/v1/admin/paths/baseline", headers=ADMIN).json()
    started = cli(stack, "canary", "start", "--percent", "5")
    assert started.exit_code == 0, started.output
    on_candidate: set[str] = set()
    for step in ("25", "50", "100"):
        stepped = cli(stack, "canary", "percent", step)
        assert stepped.exit_code == 0, stepped.output
        now = {u for u in ("a", "b", "c", "d", "e", "f") if ask(api, u)["path"] == "candidate"}
        assert on_candidate <= now  # widening never moves a user back
        on_candidate = now
    assert len(on_candidate) == 6
    promoted = cli(stack, "canary", "promote")
    assert promoted.exit_code == 0, promoted.output
    baseline = api.get("/v1/admin/paths/baseline", headers=ADMIN).json()
    try:
        assert baseline["version"] > before["version"] and baseline["build"] == HALF_BUILD
        assert state(api)["mode"] == "off" and state(api)["stopped_reason"] == "promoted"
        served = ask(api, "a")
        assert (served["path"], served["path_version"], served["build_id"]) == (
            "baseline", baseline["version"], HALF_BUILD,
        )  # fmt: skip
        assert cli(stack, "canary", "promote").exit_code == 1  # no canary: a clear error
    finally:
        # The other tests are served by the live build: the baseline goes back to it.
        api.put("/v1/admin/paths/baseline", json={}, headers=ADMIN).raise_for_status()
    assert ask(api, "a")["build_id"] == b.live_build(stack.config.retriever_addr)


def test_a_user_stays_on_the_candidate_across_gateway_replicas(
    api: httpx.Client, stack: Stack
) -> None:
    api.put("/v1/admin/paths/candidate", json={"build": HALF_BUILD}, headers=ADMIN)
    inside, outside = users(30)
    api.post("/v1/admin/canary", json={"percent": 30}, headers=ADMIN).raise_for_status()
    port = free_port()
    stack.start_gateway("gateway-replica", port=port)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as replica:
            for client in (api, replica, api, replica):
                assert ask(client, inside)["path"] == "candidate"
                assert ask(client, outside)["path"] == "baseline"
    finally:
        stack.kill("gateway-replica", signal.SIGTERM)


def test_a_candidate_that_refuses_too_often_is_rolled_back(api: httpx.Client) -> None:
    # A planted regression of the refusal threshold: nothing reaches 0.999 support.
    resp = api.put("/v1/admin/paths/strict", json={"min_support": 0.999}, headers=ADMIN)
    assert resp.status_code == 200 and resp.json()["min_support"] == 0.999, resp.text
    inside, outside = users(50)
    gates = {"min_samples": 3}
    api.post(
        "/v1/admin/canary", json={"candidate": "strict", "percent": 50, "gates": gates},
        headers=ADMIN,
    ).raise_for_status()  # fmt: skip
    first = ask(api, inside)
    assert first["refused"] and first["path"] == "strict"
    assert "< 0.999" in first["refusal_detail"]
    sent = 1
    while sent < 200 and state(api)["mode"] != "off":
        assert ask(api, outside)["refused"] is False
        served = ask(api, inside)
        assert served["refused"] or served["path"] == "baseline"
        sent += 2
    ended = wait_for(lambda: (s := state(api))["mode"] == "off" and s)
    assert ended and ended["rolled_back"] and "refusal_rate" in ended["stopped_reason"]


def test_a_retrieval_only_shadow_compares_sources_without_a_second_answer(
    api: httpx.Client,
) -> None:
    api.put("/v1/admin/paths/candidate", json={"build": HALF_BUILD}, headers=ADMIN)
    body = {"mode": "shadow", "percent": 100, "retrieval_only": True}
    api.post("/v1/admin/canary", json=body, headers=ADMIN).raise_for_status()
    served = ask(api, "retrieval-only-user")
    assert served["answer"] and served["shadow"] is True

    def paired() -> dict[str, Any] | None:
        report: dict[str, Any] = api.get("/v1/admin/canary/report", headers=ADMIN).json()
        return report if report["shadow"]["pairs"] >= 1 else None

    report = wait_for(paired)
    assert report, "the shadow run never finished"
    assert report["retrieval_only"] is True
    assert [g["metric"] for g in report["gates"]] == ["error_rate", "top_k_overlap"]
    assert report["candidate"]["refusal_rate"] is None  # no answer was generated
    assert report["shadow"]["top_k_overlap"] is not None


def test_pause_resume_and_a_manual_rollback(api: httpx.Client, stack: Stack) -> None:
    api.put("/v1/admin/paths/candidate", json={"build": HALF_BUILD}, headers=ADMIN)
    assert cli(stack, "canary", "pause").exit_code == 1  # nothing runs: a clear error
    api.post("/v1/admin/canary", json={"percent": 100}, headers=ADMIN).raise_for_status()
    assert cli(stack, "canary", "pause").exit_code == 0
    paused = ask(api, "p")
    assert (paused["path"], paused["experiment"]) == ("baseline", None)
    assert cli(stack, "canary", "resume").exit_code == 0
    assert ask(api, "p")["path"] == "candidate"
    rolled = cli(stack, "canary", "rollback")
    assert rolled.exit_code == 0, rolled.output
    s = state(api)
    assert s["mode"] == "off" and s["rolled_back"] and "operator" in s["stopped_reason"]
    assert ask(api, "p")["path"] == "baseline"


def test_a_path_names_its_generator_model_and_the_generator_refuses_another(
    api: httpx.Client,
) -> None:
    model = ask(api, "model-user")["model"]  # what the stack's generator serves
    resp = api.put(
        "/v1/admin/paths/candidate",
        json={"generator_backend": "extractive", "generator_model": model}, headers=ADMIN,
    )  # fmt: skip
    assert resp.status_code == 200 and resp.json()["generator_model"] == model, resp.text
    api.post("/v1/admin/canary", json={"percent": 100}, headers=ADMIN).raise_for_status()
    served = ask(api, "model-user")
    assert (served["path"], served["model"]) == ("candidate", model)
    api.post("/v1/admin/canary/stop", headers=ADMIN).raise_for_status()

    api.put("/v1/admin/paths/candidate", json={"generator_model": "gpt-x"}, headers=ADMIN)
    api.post("/v1/admin/canary", json={"percent": 100}, headers=ADMIN).raise_for_status()
    resp = api.post("/v1/ask", json={"question": QUESTION, "user_id": "model-user"},
                    headers=PUBLIC)  # fmt: skip
    assert resp.status_code == 502, resp.text
    assert "this generator serves" in resp.text


def test_bad_steps_are_refused_and_change_nothing(api: httpx.Client, stack: Stack) -> None:
    api.put("/v1/admin/paths/candidate", json={"build": HALF_BUILD}, headers=ADMIN)
    before = state(api)
    for body, code in (
        ({"steps": [25, 5]}, "invalid_steps"),
        ({"steps": [0, 50]}, "invalid_steps"),
        ({"steps": [5, 25], "percent": 10}, "invalid_steps"),
        ({"steps": [5, 25], "mode": "shadow"}, "invalid_steps"),
        ({"steps": list(range(1, 13))}, "invalid_steps"),
        ({}, "invalid_request"),
    ):
        resp = api.post("/v1/admin/canary", json=body, headers=ADMIN)
        assert (resp.status_code, resp.json()["error"]["code"]) == (422, code), resp.text
    bad = cli(stack, "canary", "start", "--steps", "5,x")
    assert bad.exit_code == 2 and "comma-separated" in bad.output
    assert state(api) == before  # nothing started

    started = cli(stack, "canary", "start", "--steps", "5,25,50")
    assert started.exit_code == 0 and "steps 5 → 25 → 50" in started.output, started.output
    moved = cli(stack, "canary", "percent", "30")
    assert moved.exit_code == 1 and "canary_stepping" in moved.output
    assert state(api)["percent"] == 5


def test_a_good_candidate_is_promoted_through_its_steps_on_its_own(
    api: httpx.Client, stack: Stack
) -> None:
    # As good as the baseline: the same live build, another version of the path.
    api.put("/v1/admin/paths/candidate", json={"note": "same as baseline"}, headers=ADMIN)
    version = api.get("/v1/admin/paths/candidate", headers=ADMIN).json()["version"]
    before = api.get("/v1/admin/paths/baseline", headers=ADMIN).json()
    promotions = metric(api, 'ragway_canary_promotions_total{how="steps"}')
    inside, _ = users(30)  # inside 30 %, so inside 60 % too
    _, outside = users(60)
    body = {"steps": [30, 60], "gates": QUICK}
    api.post("/v1/admin/canary", json=body, headers=ADMIN).raise_for_status()
    sent = 0
    seen_percents = set()
    try:
        while sent < 120 and state(api)["mode"] != "off":
            seen_percents.add(state(api)["percent"])
            assert ask(api, inside)["path"] in ("candidate", "baseline")
            ask(api, outside)
            sent += 2
        ended = wait_for(lambda: (s := state(api))["mode"] == "off" and s)
        assert ended, f"not promoted after {sent} requests"
        assert ended["stopped_reason"] == "promoted after steps 30,60 passed"
        assert ended["rolled_back"] is False and seen_percents == {30, 60}
        first, second = ended["step_history"]
        assert (first["percent"], first["verdict"], second["percent"], second["verdict"]) == (
            30, "pass", 60, "pass",
        )  # fmt: skip
        assert first["ended_at_ms"] <= second["started_at_ms"] <= second["ended_at_ms"]
        assert min(first["baseline_runs"], first["candidate_runs"]) >= QUICK["min_samples"]
        baseline = api.get("/v1/admin/paths/baseline", headers=ADMIN).json()
        assert baseline["version"] > before["version"]
        assert f"candidate v{version}" in baseline["note"]
        status = cli(stack, "canary", "status")
        assert status.exit_code == 0 and "steps 30 → 60 %" in status.output, status.output
        assert metric(api, 'ragway_canary_promotions_total{how="steps"}') == promotions + 1
        log = (stack.config.data_dir / "logs" / "gateway.log").read_text()
        assert "canary step" in log
    finally:
        api.put("/v1/admin/paths/baseline", json={}, headers=ADMIN).raise_for_status()


def test_a_breach_at_a_step_rolls_the_stepped_canary_back_at_once(api: httpx.Client) -> None:
    api.put("/v1/admin/paths/strict", json={"min_support": 0.999}, headers=ADMIN)
    inside, outside = users(50)
    body = {"candidate": "strict", "steps": [50, 75], "gates": {"min_samples": 3}}
    api.post("/v1/admin/canary", json=body, headers=ADMIN).raise_for_status()
    paused = api.post("/v1/admin/canary/pause", headers=ADMIN).json()
    assert paused["paused"] and paused["step"] == 0  # a pause keeps the step
    api.post("/v1/admin/canary/resume", headers=ADMIN).raise_for_status()
    sent = 0
    while sent < 200 and state(api)["mode"] != "off":
        ask(api, inside)
        ask(api, outside)
        sent += 2
    ended = wait_for(lambda: (s := state(api))["mode"] == "off" and s)
    assert ended and ended["rolled_back"], f"not rolled back after {sent} requests"
    assert "refusal_rate" in ended["stopped_reason"] and "at step 1 of 2" in ended["stopped_reason"]
    (step,) = ended["step_history"]
    assert (step["percent"], step["verdict"]) == (50, "breach") and step["ended_at_ms"]
