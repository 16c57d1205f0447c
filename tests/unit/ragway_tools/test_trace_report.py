"""The trace report's trees, metric trimming and overhead quote, on made-up spans (no stack)."""

from __future__ import annotations

from pathlib import Path

from ragway_tools.otlp_receiver import ReceivedSpan
from ragway_tools.trace_report import build_tree, overhead_text, render_tree, trim

MS = 1_000_000


def span(
    span_id: str, parent: str, name: str, start_ms: float, dur_ms: float, **attributes: object
) -> ReceivedSpan:
    return ReceivedSpan(
        name=name,
        service="ragway-gateway" if not name.startswith("/") else "ragway-retriever",
        trace_id="t1",
        span_id=span_id,
        parent_id=parent,
        kind=1,
        attributes=dict(attributes),
        start_ns=int(start_ms * MS),
        end_ns=int((start_ms + dur_ms) * MS),
    )


SPANS = [
    span("c", "a", "retrieval", 5, 10, **{"gen_ai.request.top_k": 6, "net.peer.port": 1}),
    span("a", "", "POST /v1/ask", 0, 40, **{"http.route": "/v1/ask"}),
    span("r1", "a", "EVALSHA", 1, 1),
    span("r2", "a", "EVALSHA", 2, 2),
    span("s", "c", "/ragway.v1.Retriever/Search", 6, 8, **{"ragway.run_id": "run_1"}),
    span("r3", "a", "EVALSHA", 20, 1),
]


def test_the_tree_nests_by_parent_orders_by_start_and_folds_repeated_leaves() -> None:
    [root] = build_tree(SPANS)
    assert root.span.name == "POST /v1/ask"
    names = [(n.span.name, n.repeat) for n in root.children]
    # The two EVALSHA calls before retrieval fold; the one after it stays its own row.
    assert names == [("EVALSHA", 2), ("retrieval", 1), ("EVALSHA", 1)]
    assert root.children[0].total_ms == 3.0
    assert [n.span.name for n in root.children[1].children] == ["/ragway.v1.Retriever/Search"]


def test_the_rendered_tree_shows_offsets_durations_services_and_only_key_attributes() -> None:
    lines = render_tree(SPANS)
    assert lines[1].split() == ["0.0", "40.0", "POST", "/v1/ask", "[gateway]", "http.route=/v1/ask"]
    assert "EVALSHA x2 [gateway]" in lines[2] and "3.0" in lines[2]
    retrieval = next(line for line in lines if "retrieval [gateway]" in line)
    assert "gen_ai.request.top_k=6" in retrieval and "net.peer.port" not in retrieval
    search = next(line for line in lines if "Search" in line)
    # Indented one level under retrieval, two under the root.
    assert search.split("/ragway", 1)[0].endswith(" " * 6)
    assert "[retriever]  ragway.run_id=run_1" in search
    assert render_tree([]) == ["(no spans)"]


EXPOSITION = """\
# HELP ragway_runs_total Runs ended.
# TYPE ragway_runs_total counter
ragway_runs_total{outcome="completed"} 1.0
# HELP ragway_runs_created Runs ended.
# TYPE ragway_runs_created gauge
ragway_runs_created{outcome="completed"} 1.7e9
# TYPE ragway_stage_duration_seconds histogram
ragway_stage_duration_seconds_bucket{le="0.005",stage="retrieve"} 0.0
ragway_stage_duration_seconds_bucket{le="0.025",stage="retrieve"} 1.0 # {trace_id="ab"} 0.02
ragway_stage_duration_seconds_bucket{le="+Inf",stage="retrieve"} 1.0
ragway_stage_duration_seconds_count{stage="retrieve"} 1.0
ragway_stage_duration_seconds_sum{stage="retrieve"} 0.02
# TYPE python_gc_objects_collected_total counter
python_gc_objects_collected_total{generation="0"} 10.0
"""


def test_a_scrape_keeps_ragway_families_and_exemplars_not_buckets_created_or_help() -> None:
    s = trim("gateway", "http://127.0.0.1:1/metrics", EXPOSITION)
    assert s.kept == [
        "# TYPE ragway_runs_total counter",
        'ragway_runs_total{outcome="completed"} 1.0',
        "# TYPE ragway_stage_duration_seconds histogram",
        'ragway_stage_duration_seconds_bucket{le="0.025",stage="retrieve"} 1.0'
        ' # {trace_id="ab"} 0.02',
        'ragway_stage_duration_seconds_count{stage="retrieve"} 1.0',
        'ragway_stage_duration_seconds_sum{stage="retrieve"} 0.02',
    ]
    assert (s.lines, s.ragway_lines, s.buckets_left_out, s.other_families) == (14, 12, 3, 1)


def test_the_overhead_comes_from_the_bench_report_else_from_the_committed_figures(
    tmp_path: Path,
) -> None:
    bench = tmp_path / "tracing.md"
    performance = tmp_path / "performance.md"
    performance.write_text("# P\n\n## Tracing overhead\n\np50 1.21x\n\n## make profile\n\nx\n")
    fallback = overhead_text(bench, performance)
    assert fallback is not None
    assert fallback[0].endswith("#tracing-overhead") and fallback[1].strip() == "p50 1.21x"
    bench.write_text("# ragway bench-tracing\n\np50 1.05x\n")
    assert overhead_text(bench, performance) == (str(bench), "\np50 1.05x\n")
    bench.unlink()
    performance.write_text("# P\n")
    assert overhead_text(bench, performance) is None
