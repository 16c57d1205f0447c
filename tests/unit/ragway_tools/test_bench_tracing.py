"""The tracing bench's arithmetic and report, on made-up phases (no stack, no timing)."""

from __future__ import annotations

import math

from ragway_tools.bench_tracing import Phase, ratios, render


def phase(mode: str, latencies: list[float], duration_s: float, spans: int) -> Phase:
    return Phase(mode, duration_s=duration_s, latencies_ms=latencies, spans_received=spans)


def test_the_ratios_are_tracing_on_over_off_for_latency_and_throughput() -> None:
    off = phase("off", [100.0] * 18 + [200.0] * 2, duration_s=10.0, spans=0)
    on = phase("on", [110.0] * 18 + [300.0] * 2, duration_s=20.0, spans=1234)
    r = ratios([off, on])
    assert math.isclose(r["p50"], 1.1) and math.isclose(r["p95"], 1.5)
    assert math.isclose(r["runs_per_s"], 0.5)  # the same 20 runs in twice the time
    report = render([off, on], concurrency=4, n=37, slice_s=5)
    assert "| off | 20 | 0 | 0 | 2.00 | 100.0 | 200.0 |" in report
    assert "| on | 20 | 0 | 0 | 1.00 | 110.0 | 300.0 |" in report and "1234" in report
    assert "p50 1.100x, p95 1.500x, runs/s 0.500x" in report


def test_a_phase_without_runs_reports_no_throughput_instead_of_failing() -> None:
    empty = phase("off", [], duration_s=0.0, spans=0)
    assert empty.runs_per_s == 0.0 and math.isnan(empty.p(50))
    assert math.isnan(ratios([empty, phase("on", [1.0], 1.0, 1)])["runs_per_s"])
