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
        forbidden_text: hunter2   # optional: text an answer must never contain (an
                                  # injected instruction's payload, a secret)
      - id: two-documents         # a multi-part question: every part's fact is required
        question: How many seats does Business include and how long is the trash kept?
        parts:
          - {fact: 25 seats, sources: [plans]}
          - {fact: [30 days, thirty days], sources: [trash]}
        segment: multi-part

A QA set over its own knowledge base names it (paths relative to the QA file);
``ragway eval answers`` then starts a private stack with those documents and keys::

    knowledge_base: [kb]
    api_keys: api-keys.yaml

An item with ``fact: null`` must be refused (unanswerable for this caller).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
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
    # A multi-part item: each part's alternatives; every part must be answered.
    parts: tuple[tuple[str, ...], ...] = ()
    forbidden_text: str | None = None

    @property
    def answerable(self) -> bool:
        return bool(self.facts) or bool(self.parts)


@dataclass(frozen=True)
class QASet:
    name: str
    items: tuple[QAItem, ...]
    callers: dict[str, str] = field(default_factory=dict)
    deprecated_documents: frozenset[str] = frozenset()
    # The set's own knowledge base and API keys (absolute paths); empty: the demo's.
    knowledge_base: tuple[Path, ...] = ()
    api_keys: Path | None = None


def load_qa(path: Path) -> QASet:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise QAFileError(f"{path}: cannot read: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise QAFileError(f"{path}: invalid YAML: {exc}") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("items"), list) or not raw["items"]:
        raise QAFileError(f"{path}: needs a non-empty 'items' list")
    shell = set_options(path, raw)
    items, seen = [], set()
    for n, entry in enumerate(raw["items"], start=1):
        item = _item(path, n, entry, shell.callers)
        if item.id in seen:
            raise QAFileError(f"{path}: item {n}: duplicate id {item.id!r}")
        seen.add(item.id)
        items.append(item)
    return replace(shell, items=tuple(items))


def set_options(path: Path, raw: dict[str, Any]) -> QASet:
    """The set-level keys of a QA file (callers, knowledge base, keys), with no items;
    shared with the dialogue files of evaluation/conversations.py."""
    callers = raw.get("callers") or {"public": "rgw-demo-public-key"}
    if not isinstance(callers, dict) or not all(isinstance(v, str) for v in callers.values()):
        raise QAFileError(f"{path}: 'callers' maps caller names to API keys")
    kb = raw.get("knowledge_base") or []
    if isinstance(kb, str):
        kb = [kb]
    if not isinstance(kb, list) or not all(isinstance(k, str) for k in kb):
        raise QAFileError(f"{path}: 'knowledge_base' is a list of folders")
    folders = tuple((path.parent / k).resolve() for k in kb)
    for folder in folders:
        if not folder.exists():
            raise QAFileError(f"{path}: knowledge_base folder {folder} does not exist")
    keys = raw.get("api_keys")
    api_keys = (path.parent / str(keys)).resolve() if keys else None
    if api_keys is not None and not api_keys.is_file():
        raise QAFileError(f"{path}: api_keys file {api_keys} does not exist")
    return QASet(
        name=path.stem,
        items=(),
        callers={str(k): str(v) for k, v in callers.items()},
        deprecated_documents=frozenset(str(d) for d in raw.get("deprecated_documents") or []),
        knowledge_base=folders,
        api_keys=api_keys,
    )


def parse_item(path: Path, n: int, entry: Any, callers: dict[str, str]) -> QAItem:
    """One QA item (the ``items`` entry format), e.g. a turn of a dialogue file."""
    return _item(path, n, entry, callers)


def _alternatives(where: str, fact: Any) -> tuple[str, ...]:
    if fact is None:
        return ()
    if isinstance(fact, str | int | float):
        return (str(fact),)
    if isinstance(fact, list) and fact and all(isinstance(f, str | int | float) for f in fact):
        return tuple(str(f) for f in fact)
    raise QAFileError(f"{where}: 'fact' must be a string, a list of strings or null")


def _item(path: Path, n: int, entry: Any, callers: dict[str, str]) -> QAItem:
    where = f"{path}: item {n}"
    if not isinstance(entry, dict):
        raise QAFileError(f"{where}: must be a mapping")
    question = entry.get("question")
    if not isinstance(question, str) or not question.strip():
        raise QAFileError(f"{where}: 'question' must be a non-empty string")
    raw_parts = entry.get("parts")
    part_facts: list[tuple[str, ...]] = []
    sources: list[Any] = []
    if raw_parts is not None:
        if not isinstance(raw_parts, list) or len(raw_parts) < 2:
            raise QAFileError(f"{where}: 'parts' is a list of at least two {{fact, sources}}")
        for k, part in enumerate(raw_parts, start=1):
            if not isinstance(part, dict) or part.get("fact") is None:
                raise QAFileError(f"{where}: part {k} needs a 'fact'")
            part_facts.append(_alternatives(f"{where}: part {k}", part["fact"]))
            part_sources = part.get("sources") or []
            sources += [part_sources] if isinstance(part_sources, str) else list(part_sources)
        facts: tuple[str, ...] = ()
    elif "fact" not in entry:
        raise QAFileError(f"{where}: 'fact' is required (null for a question that must be refused)")
    else:
        facts = _alternatives(where, entry["fact"])
        sources = entry.get("sources") or []
        if isinstance(sources, str):
            sources = [sources]
    if (facts or part_facts) and not sources:
        raise QAFileError(f"{where}: an answerable item needs gold 'sources'")
    caller = str(entry.get("caller") or "public")
    if caller not in callers:
        raise QAFileError(f"{where}: caller {caller!r} is not in 'callers' ({sorted(callers)})")
    trap = entry.get("trap")
    forbidden = entry.get("forbidden_text")
    return QAItem(
        id=str(entry.get("id") or f"item-{n}"),
        question=question.strip(),
        facts=facts,
        sources=tuple(str(s) for s in sources),
        segment=str(entry.get("segment") or ""),
        caller=caller,
        trap=str(trap) if trap is not None else None,
        parts=tuple(part_facts),
        forbidden_text=str(forbidden) if forbidden is not None else None,
    )
