"""Asking a QA set through the public API, and sweeping the refusal threshold.

Questions go to ``POST /v1/ask`` with the item's caller's API key, exactly as a
website client would send them; the response is scored by
``ragway_tools.evaluation.answers``. Without ``--gateway`` a private demo stack is
started (``ragway_tools.demo``) and stopped afterwards.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from ragway_tools.evaluation.answers import AnswerScore, score_answer
from ragway_tools.evaluation.qa import QASet


class AskError(RuntimeError):
    """The API did not answer a question with 200; the item and the response say why."""


@contextlib.contextmanager
def gateway(
    url: str | None, extra_env: dict[str, str] | None = None, qa: QASet | None = None
) -> Iterator[Any]:
    """Yield (url, stack-or-None): the given gateway, or a private stack's.

    The private stack serves the QA set's own knowledge base and keys when it
    names them, the demo knowledge base otherwise.
    """
    if url is not None:
        yield url, None
        return
    from ragway_tools.demo import demo_stack

    kb = qa.knowledge_base if qa is not None else ()
    keys = qa.api_keys if qa is not None else None
    with demo_stack(extra_env, kb=kb, api_keys=keys) as stack:
        yield stack.config.gateway_url, stack


def ask_all(url: str, qa: QASet, *, on_item: Callable[[], None] | None = None) -> list[AnswerScore]:
    scores = []
    with httpx.Client(base_url=url, timeout=120) as api:
        for item in qa.items:
            t0 = time.perf_counter()
            resp = api.post(
                "/v1/ask",
                json={"question": item.question},
                headers={"Authorization": f"Bearer {qa.callers[item.caller]}"},
            )
            elapsed = (time.perf_counter() - t0) * 1000
            if resp.status_code != 200:
                raise AskError(f"{item.id}: HTTP {resp.status_code}: {resp.text[:300]}")
            score = score_answer(item, resp.json(), qa)
            score.latency_ms = elapsed
            scores.append(score)
            if on_item is not None:
                on_item()
    return scores


# A wrong answer costs a website user more than a refusal (it is believed), so
# the threshold is chosen at the lowest cost with an answer to a question that
# must be refused counted as two needless refusals.
WRONG_ANSWER_COST = 2.0


@dataclass(frozen=True)
class SweepPoint:
    threshold: float
    correct_refusals: float  # share of must-refuse items refused
    false_refusals: float  # share of answerable items refused
    answered_correctly: float  # share of answerable items answered with the fact
    abstention_accuracy: float
    hallucination_rate: float  # answers that are unfaithful or should have been refusals
    cost: float  # WRONG_ANSWER_COST x answered must-refuse items + needless refusals


def sweep_point(threshold: float, scores: Sequence[AnswerScore]) -> SweepPoint:
    answerable = [s for s in scores if s.item.answerable]
    refuse = [s for s in scores if not s.item.answerable]
    answered = [s for s in scores if not s.refused]

    def share(items: Sequence[AnswerScore], pred: Callable[[AnswerScore], bool]) -> float:
        return sum(map(pred, items)) / len(items) if items else 0.0

    wrong_answers = sum(not s.refused for s in refuse)
    needless_refusals = sum(s.refused for s in answerable)
    return SweepPoint(
        threshold,
        share(refuse, lambda s: s.refused),
        share(answerable, lambda s: s.refused),
        share(answerable, lambda s: s.correct),
        share(scores, lambda s: s.abstention_correct),
        share(answered, lambda s: not s.faithful or not s.item.answerable),
        WRONG_ANSWER_COST * wrong_answers + needless_refusals,
    )


def sweep(
    qa: QASet,
    thresholds: Sequence[float],
    *,
    on_threshold: Callable[[float], None] | None = None,
) -> list[SweepPoint]:
    """Ask the QA set once per threshold, with the generator restarted at that threshold.

    The generator's threshold shapes both the refusal and which sentences make
    the answer, so each point is measured, not inferred from one run.
    """
    import signal

    from ragway_tools.demo import demo_stack

    points = []
    with demo_stack(kb=qa.knowledge_base, api_keys=qa.api_keys) as stack:
        for threshold in thresholds:
            stack.config.extra_env["RAGWAY_MIN_SUPPORT"] = f"{threshold:.4f}"
            stack.kill("generator", signal.SIGTERM)
            stack.start_service("generator")
            points.append(sweep_point(threshold, ask_all(stack.config.gateway_url, qa)))
            if on_threshold is not None:
                on_threshold(threshold)
    return points


def best_threshold(points: Sequence[SweepPoint]) -> SweepPoint:
    """The lowest cost; ties go to the higher abstention accuracy, then the lower threshold."""
    return min(points, key=lambda p: (p.cost, -p.abstention_accuracy, p.threshold))


def render_sweep(points: Sequence[SweepPoint], best: SweepPoint, current: float) -> str:
    lines = [
        "| min_support | correct refusals | false refusals | answered correctly "
        "| abstention accuracy | hallucination | cost |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p in points:
        marks = []
        if p == best:
            marks.append("best")
        if abs(p.threshold - current) < 1e-9:
            marks.append("default")
        mark = f" ({', '.join(marks)})" if marks else ""
        lines.append(
            f"| {p.threshold:.2f}{mark} | {p.correct_refusals:.3f} | {p.false_refusals:.3f} | "
            f"{p.answered_correctly:.3f} | {p.abstention_accuracy:.3f} | "
            f"{p.hallucination_rate:.3f} | {p.cost:g} |"
        )
    return "\n".join(lines) + "\n"
