"""The generator's Prometheus metrics (names and labels in docs/observability.md)."""

from __future__ import annotations

from prometheus_client import Counter

from ragway.metrics import REGISTRY

ANSWERS = Counter(
    "ragway_generator_answers",
    "Final answers sent, by verdict (grounded, refused).",
    ["verdict"],
    registry=REGISTRY,
)
REFUSALS = Counter(
    "ragway_generator_refusals",
    "Refusals sent, by reason (no_evidence, weak_evidence, model_abstained).",
    ["reason"],
    registry=REGISTRY,
)
UNITS = Counter(
    "ragway_generator_units",
    "Answer units scored, by where their vectors came from: stored (embedded by the "
    "retriever at write time) or embedded (here, per question: a build without unit "
    "vectors, or a retriever of another model or version).",
    ["source"],
    registry=REGISTRY,
)
