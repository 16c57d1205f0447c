"""gRPC ↔ backend translation for the Generator.

The checks every final answer gets, whichever backend wrote it, live in
services/generator/grounding.py (``review_final``); this module only calls them.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import AsyncIterator

import grpc

from ragway.question import asked
from ragway.v1 import generator_pb2 as pb
from ragway.v1 import generator_pb2_grpc as pb_grpc
from services.generator import metrics, tracing
from services.generator.backends.base import (
    Delta,
    Final,
    GenerationRequest,
    GeneratorBackend,
    Passage,
    RefusalReason,
    Reset,
    Verdict,
)
from services.generator.faults import FaultSwitch
from services.generator.grounding import review_final
from services.generator.settings import GeneratorSettings

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 4000
_VERDICT = {
    Verdict.GROUNDED: pb.GROUNDING_VERDICT_GROUNDED,
    Verdict.REFUSED: pb.GROUNDING_VERDICT_REFUSED,
}
_REASON = {
    None: pb.REFUSAL_REASON_UNSPECIFIED,
    RefusalReason.NO_EVIDENCE: pb.REFUSAL_REASON_NO_EVIDENCE,
    RefusalReason.WEAK_EVIDENCE: pb.REFUSAL_REASON_WEAK_EVIDENCE,
    RefusalReason.MODEL_ABSTAINED: pb.REFUSAL_REASON_MODEL_ABSTAINED,
}


class GeneratorServicer(pb_grpc.GeneratorServicer):
    def __init__(self, settings: GeneratorSettings, backend: GeneratorBackend) -> None:
        self._settings = settings
        self._backend = backend
        self._faults = FaultSwitch(settings.fault_file, settings.fault_delta_delay_ms)

    async def Generate(
        self, request: pb.GenerateRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.GenerateResponse]:
        problem = _validate(request, self._settings.max_passages)
        if problem:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
        other = _other_generator(request, self._settings.generator_backend, self._backend.name)
        if other:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, other)
        passages = [
            Passage(
                number=p.number,
                source_id=p.source_id,
                document_id=p.document_id,
                title=p.title,
                section=p.section,
                text=p.text,
                url=p.url,
                retrieval_score=p.retrieval_score,
                unit_vectors=p.unit_vectors,
            )
            for p in request.passages
        ]
        by_number = {p.number: p for p in passages}
        remaining = context.time_remaining()
        gen_request = GenerationRequest(
            # "What\u2019s" reads as "What's"; "Hi there! … Thanks!" as the question alone.
            question=asked(request.question),
            passages=passages,
            max_output_tokens=request.max_output_tokens or self._settings.default_max_output_tokens,
            deadline=time.monotonic() + remaining if remaining is not None else None,
            run_id=request.run_id,
            min_support=request.min_support if request.HasField("min_support") else None,
            question_vectors={asked(v.text): v.vector for v in request.question_vectors},
            embedding_model=request.embedding_model,
        )
        delay_s = self._faults.delta_delay_s()
        inference = tracing.Inference(
            self._settings.generator_backend, self._backend.name, gen_request.max_output_tokens
        )
        ended_by: BaseException | None = None
        try:
            async for event in self._backend.generate(gen_request):
                if isinstance(event, Delta):
                    inference.chunk()
                    if delay_s:
                        await asyncio.sleep(delay_s)
                    yield pb.GenerateResponse(
                        delta=pb.TextDelta(text=event.text, index=event.index)
                    )
                elif isinstance(event, Reset):
                    inference.reset()
                    yield pb.GenerateResponse(reset=pb.AnswerReset(reason=event.reason))
                elif isinstance(event, Final):
                    inference.final(event)
                    yield pb.GenerateResponse(final=_final(event, by_number, request.run_id))
                    return
        except asyncio.CancelledError as exc:
            # The caller went away or cancelled the run: stop generating.
            log.info("generation cancelled by the caller", extra={"run_id": request.run_id})
            ended_by = exc
            raise
        except Exception as exc:
            ended_by = exc
            raise
        finally:
            inference.end(ended_by)


def _other_generator(request: pb.GenerateRequest, backend: str, model: str) -> str | None:
    """Why this generator is not the one the request's path chose, if it is not."""
    if request.backend and request.backend != backend:
        return f"the path expects backend {request.backend!r}; this generator serves {backend!r}"
    if request.model and request.model != model:
        return f"the path expects model {request.model!r}; this generator serves {model!r}"
    return None


def _final(event: Final, by_number: dict[int, Passage], run_id: str) -> pb.GenerateFinal:
    final = review_final(event, by_number, run_id=run_id)
    metrics.ANSWERS.labels(final.verdict.value).inc()
    if final.refusal_reason is not None:
        metrics.REFUSALS.labels(final.refusal_reason.value).inc()
    return pb.GenerateFinal(
        answer=final.answer,
        cited_passages=final.cited_passages,
        cited_source_ids=[by_number[n].source_id for n in final.cited_passages],
        verdict=_VERDICT[final.verdict],
        refusal_reason=_REASON[final.refusal_reason],
        refusal_detail=final.refusal_detail,
        model=final.model,
        prompt_version=final.prompt_version,
        evidence_score=final.evidence_score,
        degraded=[pb.GeneratorDegradation(code=d.code, detail=d.detail) for d in final.degraded],
    )


def _validate(request: pb.GenerateRequest, max_passages: int) -> str | None:
    question = request.question.strip()
    if not question:
        return "question must not be empty"
    if len(question) > MAX_QUESTION_CHARS:
        return f"question has {len(question)} characters; the limit is {MAX_QUESTION_CHARS}"
    if len(request.passages) > max_passages:
        return f"{len(request.passages)} passages; the limit is {max_passages}"
    seen: set[int] = set()
    for p in request.passages:
        if p.number < 1:
            return f"passage numbers start at 1, got {p.number}"
        if p.number in seen:
            return f"passage number {p.number} appears twice"
        if not p.source_id:
            return f"passage {p.number} has no source_id"
        seen.add(p.number)
    return _vectors_problem(request)


MAX_QUESTION_VECTORS = 16
MAX_VECTOR_DIM = 4096


def _vectors_problem(request: pb.GenerateRequest) -> str | None:
    """What is wrong with the request's question vectors, if anything."""
    vectors = request.question_vectors
    if len(vectors) > MAX_QUESTION_VECTORS:
        return f"{len(vectors)} question vectors; the limit is {MAX_QUESTION_VECTORS}"
    if vectors and not request.embedding_model:
        return "question vectors need their embedding_model"
    for n, v in enumerate(vectors):
        if not v.text.strip():
            return f"question vector {n} has no text"
        if not 0 < len(v.vector) <= MAX_VECTOR_DIM:
            return f"question vector {n} has {len(v.vector)} values; 1 to {MAX_VECTOR_DIM} allowed"
        if not all(math.isfinite(x) for x in v.vector):
            return f"question vector {n} has a value that is not a finite number"
    return None
