"""The generator's inference span, per the OpenTelemetry GenAI conventions.

    /ragway.v1.Generator/Generate      gRPC server span (the instrumentation's)
      └─ chat <model>                  gen_ai.operation.name, provider, model, max tokens,
                                       finish reasons, time to first chunk; ragway.* verdict,
                                       refusal reason, prompt version, degradations

The extractive backend is not a model call: its operation is ``ragway.extract``.
``gen_ai.usage.input_tokens``/``output_tokens`` are the provider's counts for an
LLM endpoint that reports them, the extractive backend's word counts
(``backends/extractive.py``, ``counted``), and absent when unknown; the same counts
feed the ``ragway_generator_usage_tokens`` histogram. The question, the passages
and the answer are never attributes.

The span is not made current: it would have to be attached and detached across
the stream's yields, which a caller that goes away interrupts in another context.
"""

from __future__ import annotations

import time

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind

from services.generator import metrics
from services.generator.backends.base import Final

tracer = trace.get_tracer("ragway.generator")

# gen_ai.provider.name per backend setting; OpenAI-compatible endpoints speak "openai".
PROVIDERS = {"extractive": "ragway", "llama": "llama_cpp", "openai": "openai"}


class Inference:
    """One Generate call's span: started with the request, ended with the stream."""

    def __init__(self, backend_setting: str, model: str, max_output_tokens: int) -> None:
        self._provider = PROVIDERS.get(backend_setting, backend_setting)
        self._model = model
        operation = "ragway.extract" if backend_setting == "extractive" else "chat"
        # In-process models are INTERNAL; an endpoint over HTTP is a CLIENT call.
        kind = SpanKind.CLIENT if backend_setting == "openai" else SpanKind.INTERNAL
        self._started = time.perf_counter()
        self._first: float | None = None
        self.span: Span = tracer.start_span(
            f"{operation} {model}",
            kind=kind,
            attributes={
                "gen_ai.operation.name": operation,
                "gen_ai.provider.name": self._provider,
                "gen_ai.request.model": model,
                "gen_ai.request.max_tokens": max_output_tokens,
            },
        )

    def chunk(self) -> None:
        if self._first is None:
            self._first = time.perf_counter()
            self.span.set_attribute(
                "gen_ai.response.time_to_first_chunk", self._first - self._started
            )

    def reset(self) -> None:
        self.span.add_event("ragway.answer_reset")

    def final(self, final: Final) -> None:
        span = self.span
        span.set_attribute("gen_ai.response.model", final.model)
        if final.finish_reason:
            span.set_attribute("gen_ai.response.finish_reasons", [final.finish_reason])
        span.set_attribute("ragway.grounding.verdict", final.verdict.value)
        if final.refusal_reason is not None:
            span.set_attribute("ragway.refusal.reason", final.refusal_reason.value)
        span.set_attribute("ragway.prompt.version", final.prompt_version)
        span.set_attribute("ragway.citations", len(final.cited_passages))
        if final.degraded:
            span.set_attribute("ragway.degradations", [d.code for d in final.degraded])
        if final.usage is not None:
            span.set_attribute("gen_ai.usage.input_tokens", final.usage.input_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", final.usage.output_tokens)
            for token_type, count in (
                ("input", final.usage.input_tokens),
                ("output", final.usage.output_tokens),
            ):
                metrics.TOKEN_USAGE.labels(token_type, self._provider, self._model).observe(count)

    def end(self, error: BaseException | None = None) -> None:
        if error is not None:
            self.span.set_status(trace.StatusCode.ERROR, type(error).__name__)
        self.span.end()
