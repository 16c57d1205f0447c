"""A Generate call is one GenAI inference span: model, provider, finish reason, verdict."""

from __future__ import annotations

import asyncio
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

from ragway.metrics import REGISTRY
from ragway.v1 import generator_pb2 as pb
from services.generator.backends.base import Degradation, Final, RefusalReason, Usage, Verdict
from tests.unit.services.generator.test_servicer import (
    PASSAGES,
    ScriptedBackend,
    final_of,
)
from tests.unit.services.generator.test_servicer import generator as generator  # the fixture
from tests.unit.spans import memory_exporter


async def inference_span(prefix: str) -> ReadableSpan:
    """The one finished span named so: the server ends it after the client has its final."""
    for _ in range(200):
        found = [s for s in memory_exporter().get_finished_spans() if s.name.startswith(prefix)]
        if found:
            [span] = found
            return span
        await asyncio.sleep(0.01)
    raise AssertionError(f"no finished span {prefix!r}")


async def test_a_grounded_answer_is_an_inference_span_with_its_model_and_finish_reason(
    generator: tuple[Any, ScriptedBackend],
) -> None:
    exporter = memory_exporter()
    exporter.clear()
    stub, backend = generator
    backend.final = Final(
        answer="Hotels cost up to 180 euros per night [1].",
        verdict=Verdict.GROUNDED,
        model="smollm2-q4",
        prompt_version="grounded-v3",
        cited_passages=[1],
        degraded=[Degradation("llm_retry", "one retry")],
        finish_reason="stop",
    )
    await final_of(stub, pb.GenerateRequest(question="hotel limit?", passages=PASSAGES))
    span = await inference_span("ragway.extract scripted")
    assert span.kind is SpanKind.INTERNAL
    attributes = dict(span.attributes or {})
    assert attributes["gen_ai.operation.name"] == "ragway.extract"
    assert attributes["gen_ai.provider.name"] == "ragway"
    assert attributes["gen_ai.request.model"] == "scripted"
    assert attributes["gen_ai.response.model"] == "smollm2-q4"
    assert attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert isinstance(attributes["gen_ai.response.time_to_first_chunk"], float)
    assert attributes["ragway.grounding.verdict"] == "grounded"
    assert attributes["ragway.prompt.version"] == "grounded-v3"
    assert attributes["ragway.degradations"] == ("llm_retry",)
    assert not any("hotel" in str(v).lower() for v in attributes.values())


async def test_a_refusal_names_its_reason_and_has_no_finish_reason_of_a_model(
    generator: tuple[Any, ScriptedBackend],
) -> None:
    exporter = memory_exporter()
    exporter.clear()
    stub, backend = generator
    backend.final = Final(
        answer="I cannot answer that from the sources.",
        verdict=Verdict.REFUSED,
        model="extractive",
        prompt_version="p",
        refusal_reason=RefusalReason.NO_EVIDENCE,
    )
    await final_of(stub, pb.GenerateRequest(question="q", passages=PASSAGES))
    span = await inference_span("ragway.extract")
    attributes = dict(span.attributes or {})
    assert attributes["ragway.grounding.verdict"] == "refused"
    assert attributes["ragway.refusal.reason"] == "no_evidence"
    assert "gen_ai.response.finish_reasons" not in attributes


def usage_count(token_type: str, model: str = "scripted") -> float:
    labels = {"token_type": token_type, "provider": "ragway", "model": model}
    return REGISTRY.get_sample_value("ragway_generator_usage_tokens_count", labels) or 0.0


def usage_sum(token_type: str, model: str = "scripted") -> float:
    labels = {"token_type": token_type, "provider": "ragway", "model": model}
    return REGISTRY.get_sample_value("ragway_generator_usage_tokens_sum", labels) or 0.0


async def test_token_usage_is_on_the_span_and_in_the_histogram(
    generator: tuple[Any, ScriptedBackend],
) -> None:
    exporter = memory_exporter()
    exporter.clear()
    stub, backend = generator
    backend.final = Final(
        answer="Hotels cost up to 180 euros per night [1].",
        verdict=Verdict.GROUNDED,
        model="m",
        prompt_version="p",
        cited_passages=[1],
        usage=Usage(input_tokens=321, output_tokens=12),
    )
    before = {t: (usage_count(t), usage_sum(t)) for t in ("input", "output")}
    await final_of(stub, pb.GenerateRequest(question="hotel limit?", passages=PASSAGES))
    span = await inference_span("ragway.extract")
    attributes = dict(span.attributes or {})
    assert attributes["gen_ai.usage.input_tokens"] == 321
    assert attributes["gen_ai.usage.output_tokens"] == 12
    assert (usage_count("input"), usage_sum("input")) == (
        before["input"][0] + 1,
        before["input"][1] + 321,
    )
    assert (usage_count("output"), usage_sum("output")) == (
        before["output"][0] + 1,
        before["output"][1] + 12,
    )


async def test_unknown_usage_sets_no_attribute_and_observes_nothing(
    generator: tuple[Any, ScriptedBackend],
) -> None:
    exporter = memory_exporter()
    exporter.clear()
    stub, backend = generator
    backend.final = Final(answer="A [1].", verdict=Verdict.GROUNDED, model="m", prompt_version="p")
    before = usage_count("input")
    await final_of(stub, pb.GenerateRequest(question="q", passages=PASSAGES))
    span = await inference_span("ragway.extract")
    assert not any(k.startswith("gen_ai.usage.") for k in dict(span.attributes or {}))
    assert usage_count("input") == before
