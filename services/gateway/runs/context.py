"""Context packing: from ranked hits to the numbered passages the generator sees.

Drops exact and near-exact duplicates (the same text reached through two
documents or two versions), then keeps hits in rank order until the token
budget is spent. Passages are numbered 1..n in that order.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragway.v1 import retriever_pb2
from services.gateway.runs.models import Citation, Source

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class PackedPassage:
    number: int
    hit: retriever_pb2.SearchHit


def approx_tokens(text: str) -> int:
    """~1.3 tokens per word for English WordPiece/BPE; good enough for a bound."""
    return int(len(text.split()) * 1.3) + 1


def pack(
    hits: Sequence[retriever_pb2.SearchHit], token_budget: int, limit: int
) -> list[PackedPassage]:
    seen: set[str] = set()
    packed: list[PackedPassage] = []
    spent = 0
    for hit in hits:
        if len(packed) == limit:
            break
        fingerprint = hashlib.sha1(_SPACE.sub(" ", hit.text.lower()).strip().encode()).hexdigest()
        if fingerprint in seen:
            continue
        cost = approx_tokens(hit.text)
        if packed and spent + cost > token_budget:
            continue  # a shorter, lower-ranked passage may still fit
        seen.add(fingerprint)
        spent += cost
        packed.append(PackedPassage(number=len(packed) + 1, hit=hit))
    return packed


def known_citations(cited: Sequence[int], context: Sequence[Source]) -> list[Citation]:
    """The citations of an answer, keeping only numbers of passages in ``context``.

    The gateway's one guard for the rule that a citation names a passage it sent:
    the generator's grounding checks drop unknown ones already, and this keeps a
    run from ever showing a source it did not read, whatever a generator returns.
    """
    by_number = {source.number: source for source in context}
    return [Citation.model_validate(by_number[n].model_dump()) for n in cited if n in by_number]
