"""Follow-up dialogues through the public API: correctness per turn, with and without rewriting.

A dialogue file is a QA file whose ``items`` are replaced by ``dialogues``:

    knowledge_base: [kb]            # as in a QA set: the private stack serves these
    api_keys: api-keys.yaml
    callers: {northwind: hc-northwind-public-key}
    dialogues:
      - id: nw-huddle-size-plans
        caller: northwind
        split: tuning               # tuning | heldout
        turns:
          - {question: "How many people can be in a huddle on Starter?", fact: "12",
             sources: [northwind/plans-and-pricing]}
          - {question: "what about Business?", fact: "50",
             sources: [northwind/plans-and-pricing], kind: contrast}

Each turn is scored like a QA item (``answers.score_answer``). With rewriting, a
dialogue's turns go to ``POST /v1/ask`` in one conversation (``conversation_id``);
the baseline asks every turn alone, as ragway answered before conversations.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import yaml

from ragway_tools.evaluation.answer_run import AskError
from ragway_tools.evaluation.answers import score_answer
from ragway_tools.evaluation.qa import QAFileError, QAItem, QASet, parse_item, set_options

SPLITS = ("tuning", "heldout")
KINDS = ("contrast", "ellipsis", "pronoun", "correction", "topic", "refusal")


@dataclass(frozen=True)
class Dialogue:
    id: str
    caller: str
    split: str
    turns: tuple[QAItem, ...]  # item.segment is the turn's kind ("" for the first)


@dataclass(frozen=True)
class DialogueSet:
    qa: QASet  # callers, knowledge base and keys; its items are every turn
    dialogues: tuple[Dialogue, ...]


@dataclass
class TurnResult:
    dialogue: Dialogue
    index: int  # 0 = the opening question
    item: QAItem
    correct: bool
    refused: bool
    answer: str
    rewritten_query: str | None = None
    foreign_words: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return self.item.segment or "first"


def load_dialogues(path: Path) -> DialogueSet:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise QAFileError(f"{path}: cannot read: {exc}") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("dialogues"), list):
        raise QAFileError(f"{path}: needs a 'dialogues' list")
    shell = set_options(path, raw)
    callers = shell.callers
    dialogues, seen = [], set()
    for n, entry in enumerate(raw["dialogues"], start=1):
        where = f"{path}: dialogue {n}"
        if not isinstance(entry, dict) or not isinstance(entry.get("turns"), list):
            raise QAFileError(f"{where}: needs 'turns'")
        did = str(entry.get("id") or f"dialogue-{n}")
        if did in seen:
            raise QAFileError(f"{where}: duplicate id {did!r}")
        seen.add(did)
        split = str(entry.get("split") or "")
        if split not in SPLITS:
            raise QAFileError(f"{where}: 'split' is one of {SPLITS}")
        if len(entry["turns"]) < 2:
            raise QAFileError(f"{where}: a dialogue has at least two turns")
        turns = []
        for k, turn in enumerate(entry["turns"]):
            if not isinstance(turn, dict):
                raise QAFileError(f"{where}: turn {k} is not a mapping")
            kind = str(turn.get("kind") or "")
            if k > 0 and kind not in KINDS:
                raise QAFileError(f"{where}: turn {k}: 'kind' is one of {KINDS}")
            spec = {**turn, "id": f"{did}#{k}", "caller": entry.get("caller"), "segment": kind}
            spec.pop("kind", None)
            turns.append(parse_item(path, n, spec, callers))
        dialogues.append(Dialogue(did, turns[0].caller, split, tuple(turns)))
    if not dialogues:
        raise QAFileError(f"{path}: 'dialogues' is empty")
    qa = replace(shell, items=tuple(t for d in dialogues for t in d.turns))
    return DialogueSet(qa, tuple(dialogues))


_WORDS = re.compile(r"[a-z0-9][a-z0-9'.,-]*[a-z0-9]|[a-z0-9]")
# Words a rewrite may add without adding a fact: the joins of the rewriter's rules.
_JOINS = frozenset({"the", "on", "for", "in", "with", "at", "'s"})


def foreign_words(rewritten: str, said: Sequence[str]) -> list[str]:
    """Words of the rewrite that none of the user's turns so far contains."""
    mine = {w for text in said for w in _WORDS.findall(text.lower())}
    return sorted({w for w in _WORDS.findall(rewritten.lower()) if w not in mine | _JOINS})


def ask_dialogues(
    url: str,
    data: DialogueSet,
    *,
    rewrite: bool,
    on_dialogue: Callable[[], None] | None = None,
) -> list[TurnResult]:
    """Ask every dialogue; with ``rewrite`` in one conversation each, else turn by turn alone."""
    results: list[TurnResult] = []
    with httpx.Client(base_url=url, timeout=120) as api:
        for dialogue in data.dialogues:
            conversation_id: str | None = None
            key = data.qa.callers[dialogue.caller]
            for index, item in enumerate(dialogue.turns):
                body: dict[str, Any] = {"question": item.question}
                if rewrite and conversation_id is not None:
                    body["conversation_id"] = conversation_id
                resp = api.post("/v1/ask", json=body, headers={"Authorization": f"Bearer {key}"})
                if resp.status_code != 200:
                    raise AskError(f"{item.id}: HTTP {resp.status_code}: {resp.text[:300]}")
                reply = resp.json()
                conversation_id = reply.get("conversation_id")
                score = score_answer(item, reply, data.qa)
                rewritten = reply.get("rewritten_query") if rewrite else None
                said = [t.question for t in dialogue.turns[: index + 1]]
                results.append(
                    TurnResult(
                        dialogue=dialogue,
                        index=index,
                        item=item,
                        correct=score.correct,
                        refused=score.refused,
                        answer=score.answer,
                        rewritten_query=rewritten,
                        foreign_words=foreign_words(rewritten, said) if rewritten else [],
                    )
                )
            if on_dialogue is not None:
                on_dialogue()
    return results


def summarize(with_rewrite: Sequence[TurnResult], baseline: Sequence[TurnResult]) -> dict[str, Any]:
    """Follow-up correctness per split and per kind, both ways; opening turns apart."""

    def share(results: Sequence[TurnResult]) -> dict[str, Any]:
        n = len(results)
        correct = sum(r.correct for r in results)
        return {"correct": correct, "total": n, "rate": round(correct / n, 4) if n else None}

    def cut(results: Sequence[TurnResult], pred: Callable[[TurnResult], bool]) -> dict[str, Any]:
        return share([r for r in results if pred(r)])

    out: dict[str, Any] = {}
    for label, results in (("rewrite", with_rewrite), ("no_rewrite", baseline)):
        follow = [r for r in results if r.index > 0]
        out[label] = {
            "opening_turns": cut(results, lambda r: r.index == 0),
            "follow_ups": share(follow),
            "splits": {s: share([r for r in follow if r.dialogue.split == s]) for s in SPLITS},
            "kinds": {k: share([r for r in follow if r.kind == k]) for k in KINDS},
        }
    out["rewrites_with_foreign_words"] = [
        {"turn": r.item.id, "rewritten_query": r.rewritten_query, "words": r.foreign_words}
        for r in with_rewrite
        if r.foreign_words
    ]
    return out


def render(summary: dict[str, Any]) -> str:
    def cell(s: dict[str, Any]) -> str:
        return f"{s['correct']}/{s['total']} ({s['rate']:.0%})" if s["total"] else "-"

    rows: list[tuple[str, str, str | None]] = [("follow-ups, all", "follow_ups", None)]
    rows += [(f"follow-ups, {s}", "splits", s) for s in SPLITS]
    rows += [(f"kind: {k}", "kinds", k) for k in KINDS]
    rows += [("opening turns", "opening_turns", None)]
    lines = ["| turns | with rewriting | without (asked alone) |", "|---|---:|---:|"]
    for label, part, sub in rows:
        got = []
        for mode in ("rewrite", "no_rewrite"):
            value = summary[mode][part]
            got.append(cell(value if sub is None else value[sub]))
        lines.append(f"| {label} | {got[0]} | {got[1]} |")
    foreign = summary["rewrites_with_foreign_words"]
    lines.append("")
    lines.append(f"rewrites with a word the user did not say: {len(foreign)}")
    for entry in foreign:
        lines.append(
            f"- {entry['turn']}: {entry['rewritten_query']!r} ({', '.join(entry['words'])})"
        )
    return "\n".join(lines) + "\n"


def turn_rows(results: Sequence[TurnResult]) -> list[dict[str, Any]]:
    return [
        {
            "turn": r.item.id,
            "split": r.dialogue.split,
            "kind": r.kind,
            "question": r.item.question,
            "rewritten_query": r.rewritten_query,
            "correct": r.correct,
            "refused": r.refused,
            "answer": r.answer,
        }
        for r in results
    ]
