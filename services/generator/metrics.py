"""The generator's Prometheus metrics (names and labels in docs/observability.md)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

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
QUESTION_VECTORS = Counter(
    "ragway_generator_question_vectors",
    "Question texts embedded for scoring, by where their vectors came from: retriever "
    "(handed on by the gateway, the same text and model) or embedded (here).",
    ["source"],
    registry=REGISTRY,
)

# The GenAI conventions' gen_ai.client.token.usage, in Prometheus terms: its
# explicit bucket boundaries (powers of 4), one series per token type.
TOKEN_BUCKETS = tuple(float(4**n) for n in range(14))  # 1 … 67,108,864
TOKEN_USAGE = Histogram(
    "ragway_generator_usage_tokens",
    "Tokens per answer, by token_type (input, output), provider (gen_ai.provider.name) and "
    "model: the LLM endpoint's reported usage, or for the extractive backend (provider "
    "ragway) the words it read and wrote. Answers whose usage is unknown are not observed.",
    ["token_type", "provider", "model"],
    buckets=TOKEN_BUCKETS,
    registry=REGISTRY,
)
