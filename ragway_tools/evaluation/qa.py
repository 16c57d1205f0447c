"""QA sets for answer evaluation: questions with the fact, the sources and who asks.

A QA file is YAML::

    callers:                      # caller name -> API key (the default caller is "public")
      public: rgw-demo-public-key
      sre: rgw-demo-sre-key
    deprecated_documents: [archive/heartbeats-2025]
    items:
      - id: stream-resume
        question: How do I resume a stream after a disconnect?
        fact: Last-Event-ID       # a string or a list of alternatives; null = must refuse
        sources: [streaming]      # gold document ids (any one cited is correct)
        segment: exact            # exact, paraphrase, typo, keyword, identifier,
                                  # unanswerable, forbidden, deprecated-trap, ...
        caller: public
        trap: 45 seconds          # optional: a stale fact from a deprecated page

An item with ``fact: null`` must be refused (unanswerable for this caller).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml


class QAFileError(ValueError):
    """A QA file that cannot be used, with the file and the item."""


@dataclass(frozen=True)
class QAItem:
    id: str
    question: str
    facts: tuple[str, ...]  # alternatives; empty = the question must be refused
    sources: tuple[str, ...]
    segment: str = ""
    caller: str = "public"
    trap: str | None = None

    @property
    def answerable(self) -> bool:
        return bool(self.facts)


@dataclass(frozen=True)
class QASet:
    name: str
    items: tuple[QAItem, ...]
    callers: dict[str, str] = field(default_factory=dict)
    deprecated_documents: frozenset[str] = frozenset()


def load_qa(path: Path) -> QASet:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise QAFileError(f"{path}: cannot read: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise QAFileError(f"{path}: invalid YAML: {exc}") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("items"), list) or not raw["items"]:
        raise QAFileError(f"{path}: needs a non-empty 'items' list")
    callers = raw.get("callers") or {"public": "rgw-demo-public-key"}
    if not isinstance(callers, dict) or not all(isinstance(v, str) for v in callers.values()):
        raise QAFileError(f"{path}: 'callers' maps caller names to API keys")
    items, seen = [], set()
    for n, entry in enumerate(raw["items"], start=1):
        item = _item(path, n, entry, callers)
        if item.id in seen:
            raise QAFileError(f"{path}: item {n}: duplicate id {item.id!r}")
        seen.add(item.id)
        items.append(item)
    return QASet(
        name=path.stem,
        items=tuple(items),
        callers={str(k): str(v) for k, v in callers.items()},
        deprecated_documents=frozenset(str(d) for d in raw.get("deprecated_documents") or []),
    )


def _item(path: Path, n: int, entry: Any, callers: dict[str, str]) -> QAItem:
    where = f"{path}: item {n}"
    if not isinstance(entry, dict):
        raise QAFileError(f"{where}: must be a mapping")
    question = entry.get("question")
    if not isinstance(question, str) or not question.strip():
        raise QAFileError(f"{where}: 'question' must be a non-empty string")
    if "fact" not in entry:
        raise QAFileError(f"{where}: 'fact' is required (null for a question that must be refused)")
    fact = entry["fact"]
    if fact is None:
        facts: tuple[str, ...] = ()
    elif isinstance(fact, str | int | float):
        facts = (str(fact),)
    elif isinstance(fact, list) and fact and all(isinstance(f, str | int | float) for f in fact):
        facts = tuple(str(f) for f in fact)
    else:
        raise QAFileError(f"{where}: 'fact' must be a string, a list of strings or null")
    sources = entry.get("sources") or []
    if isinstance(sources, str):
        sources = [sources]
    if facts and not sources:
        raise QAFileError(f"{where}: an answerable item needs gold 'sources'")
    caller = str(entry.get("caller") or "public")
    if caller not in callers:
        raise QAFileError(f"{where}: caller {caller!r} is not in 'callers' ({sorted(callers)})")
    trap = entry.get("trap")
    return QAItem(
        id=str(entry.get("id") or f"item-{n}"),
        question=question.strip(),
        facts=facts,
        sources=tuple(str(s) for s in sources),
        segment=str(entry.get("segment") or ""),
        caller=caller,
        trap=str(trap) if trap is not None else None,
    )
