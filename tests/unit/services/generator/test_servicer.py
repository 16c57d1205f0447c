"""The Generator servicer in-process (grpc.aio on port 0) with a scripted backend.

Whatever a backend claims in its final message, the caller gets only citations
of passages in the context, and every check that changed the answer as a
degradation.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from ragway.v1 import generator_pb2 as pb
from ragway.v1 import generator_pb2_grpc as pb_grpc
from ragway.v1.embeddings_pb2 import QueryVector
from services.generator.backends.base import (
    Degradation,
    Delta,
    Final,
    GenerationEvent,
    GenerationRequest,
    RefusalReason,
    Verdict,
)
from services.generator.servicer import GeneratorServicer
from services.generator.settings import GeneratorSettings

PASSAGES = [
    pb.Passage(number=1, source_id="s-hotel", document_id="hotel", title="Hotels",
               text="Hotels cost up to 180 euros per night."),
    pb.Passage(number=2, source_id="s-train", document_id="train", title="Trains",
               text="Book second class trains."),
]  # fmt: skip


class ScriptedBackend:
    name = "scripted"

    def __init__(self) -> None:
        self.final = Final(answer="", verdict=Verdict.GROUNDED, model="m", prompt_version="p")
        self.requests: list[GenerationRequest] = []

    async def generate(self, request: GenerationRequest) -> AsyncIterator[GenerationEvent]:
        self.requests.append(request)
        yield Delta(text=self.final.answer, index=0)
        yield self.final


@pytest.fixture
async def generator() -> AsyncIterator[tuple[Any, ScriptedBackend]]:
    backend = ScriptedBackend()
    server = grpc.aio.server()
    pb_grpc.add_GeneratorServicer_to_server(GeneratorServicer(GeneratorSettings(), backend), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield pb_grpc.GeneratorStub(channel), backend
    finally:
        await server.stop(None)


async def final_of(stub: Any, request: pb.GenerateRequest) -> tuple[list[str], pb.GenerateFinal]:
    deltas: list[str] = []
    async for message in stub.Generate(request):
        if message.HasField("delta"):
            deltas.append(message.delta.text)
        elif message.HasField("final"):
            return deltas, message.final
    raise AssertionError("the stream ended without a final message")


async def test_a_grounded_answer_passes_unchanged(
    generator: tuple[Any, ScriptedBackend],
) -> None:
    stub, backend = generator
    answer = "Hotels cost up to 180 euros per night [1]."
    backend.final = Final(
        answer=answer, verdict=Verdict.GROUNDED, model="m", prompt_version="p", cited_passages=[1]
    )
    deltas, final = await final_of(
        stub, pb.GenerateRequest(question="  hotel limit? ", passages=PASSAGES, run_id="r-1")
    )
    assert deltas == [answer] and final.answer == answer
    assert list(final.cited_passages) == [1] and list(final.cited_source_ids) == ["s-hotel"]
    assert final.verdict == pb.GROUNDING_VERDICT_GROUNDED and not final.degraded
    assert backend.requests[0].question == "hotel limit?"
    assert [p.source_id for p in backend.requests[0].passages] == ["s-hotel", "s-train"]
    assert backend.requests[0].question_vectors == {} and not backend.requests[0].embedding_model


async def test_question_vectors_reach_the_backend(generator: tuple[Any, ScriptedBackend]) -> None:
    stub, backend = generator
    backend.final = Final(answer="", verdict=Verdict.REFUSED, model="m", prompt_version="p")
    vectors = [QueryVector(text="hotel limit?", vector=[0.6, 0.8])]
    await final_of(
        stub,
        pb.GenerateRequest(
            question="hotel limit?",
            passages=PASSAGES,
            question_vectors=vectors,
            embedding_model="e",
        ),
    )
    got = backend.requests[0]
    assert got.embedding_model == "e"
    assert {t: list(v) for t, v in got.question_vectors.items()} == {
        "hotel limit?": pytest.approx([0.6, 0.8])
    }


@pytest.mark.parametrize(
    ("typed", "vector_text"),
    [
        # A caller other than the gateway may send "What\u2019s"; the vectors embedded
        # for that text still match what the backend reads.
        ("What\u2019s the hotel limit?", "What\u2019s the hotel limit?"),
        # The retriever searched and embedded the question without the greeting.
        ("Hi there! What's the hotel limit? Thanks!", "What's the hotel limit?"),
    ],
)
async def test_the_backend_reads_the_question_as_asked_in_ascii_and_without_pleasantries(
    generator: tuple[Any, ScriptedBackend], typed: str, vector_text: str
) -> None:
    stub, backend = generator
    backend.final = Final(answer="", verdict=Verdict.REFUSED, model="m", prompt_version="p")
    vectors = [QueryVector(text=vector_text, vector=[0.6, 0.8])]
    await final_of(
        stub,
        pb.GenerateRequest(
            question=typed, passages=PASSAGES, question_vectors=vectors, embedding_model="e"
        ),
    )
    got = backend.requests[0]
    assert got.question == "What's the hotel limit?"
    assert list(got.question_vectors) == ["What's the hotel limit?"]


async def test_unknown_citations_are_dropped_and_unsupported_numbers_reported(
    generator: tuple[Any, ScriptedBackend],
) -> None:
    stub, backend = generator
    backend.final = Final(
        answer="Hotels cost up to 250 euros [1]. Trains are free [7].",
        verdict=Verdict.GROUNDED,
        model="m",
        prompt_version="p",
        cited_passages=[1, 7],
        degraded=[Degradation("llm_retry", "one retry")],
    )
    _, final = await final_of(stub, pb.GenerateRequest(question="q", passages=PASSAGES))
    assert list(final.cited_passages) == [1] and list(final.cited_source_ids) == ["s-hotel"]
    codes = {d.code: d.detail for d in final.degraded}
    assert list(codes) == ["llm_retry", "unknown_citation", "unsupported_number"]
    assert "[7]" in codes["unknown_citation"] and "250" in codes["unsupported_number"]


async def test_a_refusal_keeps_its_reason(generator: tuple[Any, ScriptedBackend]) -> None:
    stub, backend = generator
    backend.final = Final(
        answer="I cannot answer that from the sources.",
        verdict=Verdict.REFUSED,
        model="m",
        prompt_version="p",
        refusal_reason=RefusalReason.WEAK_EVIDENCE,
        refusal_detail="nothing relevant",
    )
    _, final = await final_of(stub, pb.GenerateRequest(question="q", passages=PASSAGES))
    assert final.verdict == pb.GROUNDING_VERDICT_REFUSED
    assert final.refusal_reason == pb.REFUSAL_REASON_WEAK_EVIDENCE
    assert final.refusal_detail == "nothing relevant" and not final.cited_passages


@pytest.mark.parametrize(
    "request_",
    [
        pb.GenerateRequest(question="   ", passages=PASSAGES),
        pb.GenerateRequest(question="q", passages=[PASSAGES[0], PASSAGES[0]]),
        pb.GenerateRequest(question="q", passages=[pb.Passage(number=0, source_id="s")]),
        pb.GenerateRequest(question="q", passages=[pb.Passage(number=1)]),
        pb.GenerateRequest(question="q", question_vectors=[QueryVector(text="q", vector=[1.0])]),
        pb.GenerateRequest(
            question="q",
            question_vectors=[QueryVector(text=" ", vector=[1.0])],
            embedding_model="m",
        ),
        pb.GenerateRequest(
            question="q", question_vectors=[QueryVector(text="q")], embedding_model="m"
        ),
        pb.GenerateRequest(
            question="q",
            question_vectors=[QueryVector(text="q", vector=[0.5, float("nan")])],
            embedding_model="m",
        ),
        pb.GenerateRequest(
            question="q",
            question_vectors=[QueryVector(text=f"q{n}", vector=[1.0]) for n in range(17)],
            embedding_model="m",
        ),
    ],
    ids=[
        "empty question",
        "repeated number",
        "number 0",
        "no source id",
        "vector without model",
        "vector without text",
        "empty vector",
        "vector not finite",
        "too many vectors",
    ],
)
async def test_bad_requests_are_invalid_arguments(
    generator: tuple[Any, ScriptedBackend], request_: pb.GenerateRequest
) -> None:
    stub, backend = generator
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await final_of(stub, request_)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert not backend.requests


async def test_a_request_for_another_backend_or_model_is_refused_not_answered(
    generator: tuple[Any, ScriptedBackend],
) -> None:
    stub, backend = generator
    wrong = (
        pb.GenerateRequest(question="q", passages=PASSAGES, backend="openai"),
        pb.GenerateRequest(question="q", passages=PASSAGES, model="gpt-x"),
    )
    for request in wrong:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await final_of(stub, request)
        assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "this generator serves" in (caught.value.details() or "")
    assert backend.requests == []  # nothing was generated
    served = pb.GenerateRequest(
        question="q", passages=PASSAGES, backend="extractive", model="scripted"
    )
    _, final = await final_of(stub, served)  # what it serves: answered
    assert final.model == "m"
