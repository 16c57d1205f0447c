"""A Generate call is one GenAI inference span: model, provider, finish reason, verdict."""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import SpanKind

from ragway.v1 import generator_pb2 as pb
from services.generator.backends.base import Degradation, Final, RefusalReason, Verdict
from tests.unit.services.generator.test_servicer import (
    PASSAGES,
    ScriptedBackend,
    final_of,
)
from tests.unit.services.generator.test_servicer import generator as generator  # the fixture
from tests.unit.spans import memory_exporter


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
    [span] = [s for s in exporter.get_finished_spans() if s.name == "ragway.extract scripted"]
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
    [span] = [s for s in exporter.get_finished_spans() if s.name.startswith("ragway.extract")]
    attributes = dict(span.attributes or {})
    assert attributes["ragway.grounding.verdict"] == "refused"
    assert attributes["ragway.refusal.reason"] == "no_evidence"
    assert "gen_ai.response.finish_reasons" not in attributes
