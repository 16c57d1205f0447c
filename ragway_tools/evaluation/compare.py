"""The offline twin of the canary report: two sides answer the same QA set, item by item.

Each side is a set of answer outcomes per QA item: from a report of
``ragway eval answers`` (``report.json``), or asked live through a private
stack serving a build or a path (``ragway eval compare``). Because both sides
answer the *same* questions, the comparison is paired: per metric and segment,
the items one side gets right and the other wrong (the discordant pairs) decide
it, with an exact McNemar test (a two-sided binomial test on them). Side B is
``worse`` on a metric when it loses significantly; the command exits 1 then,
like the release gate.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ragway.stats import percentile
from ragway_tools.evaluation.answers import AnswerScore
from ragway_tools.evaluation.qa import QAItem, QASet


class CompareError(ValueError):
    """A side cannot be read or does not answer the QA set."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one side did with one QA item."""

    refused: bool
    correct: bool
    faithful: bool | None
    verdict: str
    latency_ms: float = 0.0


def outcome_of(score: AnswerScore) -> Outcome:
    return Outcome(score.refused, score.correct, score.faithful, score.verdict, score.latency_ms)


def load_report(path: Path) -> dict[str, Outcome]:
    """The per-item outcomes of an ``ragway eval answers`` report.json."""
    try:
        raw = json.loads(path.read_text())
        return {
            str(i["id"]): Outcome(
                bool(i["refused"]),
                bool(i["correct"]),
                i.get("faithful"),
                str(i.get("verdict") or ""),
                float(i.get("latency_ms") or 0.0),
            )
            for i in raw["items"]
        }
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CompareError(f"{path}: not an answers report ({exc})") from None


# Per item, pass/fail; ``higher`` says which way is better.
MetricFn = Callable[[QAItem, Outcome], bool]
METRICS: tuple[tuple[str, MetricFn, bool], ...] = (
    ("correct", lambda _, o: o.correct, True),
    ("abstention_correct", lambda item, o: o.refused != item.answerable, True),
    (
        "hallucinated",
        lambda item, o: not o.refused and (o.faithful is False or not item.answerable),
        False,
    ),
)

Direction = Literal["better", "worse", "same"]


def mcnemar_p(a_only: int, b_only: int) -> float:
    """Exact two-sided McNemar p-value: the discordant pairs, binomial(n, 1/2)."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    k = min(a_only, b_only)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / float(2**n)
    return min(1.0, 2 * tail)


@dataclass
class Delta:
    metric: str
    segment: str
    pairs: int
    a_rate: float | None
    b_rate: float | None
    delta: float | None  # b - a
    a_only: int  # items where only A has the metric true
    b_only: int
    p_value: float
    direction: Direction


Pair = tuple[QAItem, Outcome, Outcome]


def _delta(
    metric: str, fn: MetricFn, higher: bool, segment: str, pairs: Sequence[Pair], alpha: float
) -> Delta:
    a = [fn(item, x) for item, x, _ in pairs]
    b = [fn(item, y) for item, _, y in pairs]
    a_only = sum(x and not y for x, y in zip(a, b, strict=True))
    b_only = sum(y and not x for x, y in zip(a, b, strict=True))
    p = mcnemar_p(a_only, b_only)
    n = len(pairs)
    a_rate = round(sum(a) / n, 4) if n else None
    b_rate = round(sum(b) / n, 4) if n else None
    direction: Direction = "same"
    if p < alpha and a_only != b_only:
        b_ahead = b_only > a_only
        direction = "better" if b_ahead == higher else "worse"
    return Delta(
        metric,
        segment,
        n,
        a_rate,
        b_rate,
        None if a_rate is None or b_rate is None else round(b_rate - a_rate, 4),
        a_only,
        b_only,
        round(p, 6),
        direction,
    )


@dataclass
class Comparison:
    a: str
    b: str
    alpha: float
    deltas: list[Delta]
    latency_p50_ms: tuple[float | None, float | None]
    missing: list[str] = field(default_factory=list)  # QA items a side did not answer

    @property
    def worse(self) -> list[Delta]:
        return [d for d in self.deltas if d.segment == "all" and d.direction == "worse"]


def compare(
    qa: QASet,
    a: Mapping[str, Outcome],
    b: Mapping[str, Outcome],
    *,
    a_name: str,
    b_name: str,
    alpha: float = 0.05,
) -> Comparison:
    """Paired per-metric, per-segment deltas of B against A on the items both answered."""
    pairs: list[Pair] = [
        (item, a[item.id], b[item.id]) for item in qa.items if item.id in a and item.id in b
    ]
    missing = sorted(item.id for item in qa.items if item.id not in a or item.id not in b)
    if not pairs:
        raise CompareError("the two sides have no QA item in common")
    segments = ["all", *sorted({item.segment for item, _, _ in pairs if item.segment})]
    deltas = [
        _delta(
            name, fn, higher, segment,
            [p for p in pairs if segment == "all" or p[0].segment == segment], alpha,
        )
        for segment in segments
        for name, fn, higher in METRICS
    ]  # fmt: skip

    def p50(side: int) -> float | None:
        chosen = [x if side == 1 else y for _, x, y in pairs]
        values = [o.latency_ms for o in chosen if o.latency_ms > 0]
        return round(percentile(values, 50), 1) if values else None

    return Comparison(a_name, b_name, alpha, deltas, (p50(1), p50(2)), missing)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def render(comparison: Comparison) -> str:
    c = comparison
    lines = [
        f"# A = {c.a}, B = {c.b}",
        "",
        f"Paired on the same questions; exact McNemar test, alpha {c.alpha:g}. "
        "`A only` / `B only`: items where only that side has the metric.",
        "",
        "| segment | metric | pairs | A | B | B - A | A only | B only | p | B is |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for d in c.deltas:
        mark = {"worse": "**worse**", "better": "better"}.get(d.direction, "same")
        lines.append(
            f"| {d.segment} | {d.metric} | {d.pairs} | {_fmt(d.a_rate)} | {_fmt(d.b_rate)} | "
            f"{_fmt(d.delta)} | {d.a_only} | {d.b_only} | {d.p_value:.4f} | {mark} |"
        )
    a_ms, b_ms = c.latency_p50_ms
    lines += ["", f"latency p50: A {_fmt(a_ms)} ms, B {_fmt(b_ms)} ms"]
    if c.missing:
        lines.append(f"not compared (a side has no answer): {', '.join(c.missing)}")
    verdict = (
        "B is worse: " + ", ".join(d.metric for d in c.worse)
        if c.worse
        else "B is not significantly worse than A"
    )
    lines += ["", f"**{verdict}**", ""]
    return "\n".join(lines)


def to_json(comparison: Comparison) -> dict[str, Any]:
    return {
        "a": comparison.a,
        "b": comparison.b,
        "alpha": comparison.alpha,
        "verdict": "worse" if comparison.worse else "not_worse",
        "deltas": [d.__dict__ for d in comparison.deltas],
        "latency_p50_ms": {"a": comparison.latency_p50_ms[0], "b": comparison.latency_p50_ms[1]},
        "missing": comparison.missing,
    }


@dataclass(frozen=True, slots=True)
class Side:
    """One side of ``ragway eval compare``: a finished report, or options to serve live."""

    name: str
    report: Path | None = None
    options: dict[str, Any] | None = None  # the private stack's baseline path (PathOptions)


def parse_side(spec: str) -> Side:
    """``report.json`` | ``build:ID_OR_ALIAS`` | ``path:FILE.yaml`` (path options)."""
    kind, sep, value = spec.partition(":")
    if sep and kind == "build" and value:
        return Side(spec, options={"build": value})
    if sep and kind == "path" and value:
        import yaml

        try:
            loaded = yaml.safe_load(Path(value).read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise CompareError(f"{spec}: cannot read the path file ({exc})") from None
        if not isinstance(loaded, dict):
            raise CompareError(f"{spec}: the path file is not a mapping of path options")
        return Side(spec, options=loaded)
    path = Path(spec)
    if path.suffix == ".json" and path.is_file():
        return Side(spec, report=path)
    raise CompareError(
        f"{spec!r}: expected a report.json of `ragway eval answers`, build:ID or path:FILE.yaml"
    )
