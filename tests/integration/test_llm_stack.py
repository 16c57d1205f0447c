"""LLM backends inside the running services: generator process, gateway, run record, events.

Each stack here has its own Redis server, generator and gateway, and shares the
session's retriever (and its loaded knowledge base).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragway.v1 import generator_pb2, generator_pb2_grpc
from ragway_tools.channels import service_channel
from ragway_tools.launcher import LaunchError, Stack, StackConfig
from services.generator.grounding import check_answer
from services.generator.prompts import PromptTemplate
from tests.conftest import FIXTURES
from tests.integration.conftest import auth
from tests.integration.runs import QUESTION
from tests.integration.sse import Sse, read_events, start_run
from tests.llm_servers import Endpoint, Script, Stall, require_llama_cpp

MODEL = "scripted-model"
PROMPT_VERSION = PromptTemplate.load().version


def _stack(stack: Stack, data: Path, env: dict[str, str]) -> Stack:
    config = StackConfig.on_free_ports(
        data,
        retriever_port=stack.config.retriever_port,
        service_token=stack.config.service_token,
        api_keys_file=FIXTURES / "api-keys.yaml",
        extra_env=env,
    )
    s = Stack(config)
    s.logs_dir.mkdir(parents=True, exist_ok=True)
    return s


def _no_tracebacks(s: Stack) -> None:
    for part in ("gateway", "generator"):
        log = s.logs_dir / f"{part}.log"
        if log.exists():
            text = log.read_text()
            assert "Traceback" not in text, f"{part} logged a traceback:\n{text[-4000:]}"


@pytest.fixture(scope="module")
def llm_stack(
    stack: Stack, llm_endpoint: Endpoint, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """A generator with the openai backend, pointed at the scripted endpoint, and a gateway."""
    s = _stack(
        stack,
        tmp_path_factory.mktemp("llm-stack"),
        {
            "RAGWAY_GENERATOR_BACKEND": "openai",
            "RAGWAY_LLM_BASE_URL": llm_endpoint.base_url,
            "RAGWAY_LLM_MODEL": MODEL,
            "RAGWAY_LLM_FIRST_TOKEN_TIMEOUT_S": "1",
            # Every retrieved passage is shown, so the scripted "[1]" is always known.
            "RAGWAY_LLM_MAX_PROMPT_PASSAGES": "20",
        },
    )
    try:
        s.start_redis()
        s.start_service("generator")
        s.start_gateway()
        yield s
    finally:
        s.stop()
    _no_tracebacks(s)


def _ask(s: Stack) -> tuple[list[Sse], dict[str, Any]]:
    with httpx.Client(base_url=s.config.gateway_url, timeout=30) as api:
        run_id = start_run(api, QUESTION, auth("demo"))
        events = read_events(api, run_id, auth("demo"))
        record = api.get(f"/v1/runs/{run_id}", headers=auth("demo")).json()
    assert events[-1].event == "run.completed", events[-1]
    return events, record


def _streamed_answer(events: list[Sse]) -> str:
    """What a client shows: the deltas after the last answer.reset."""
    text = ""
    for e in events:
        if e.event == "answer.reset":
            text = ""
        elif e.event == "answer.delta":
            text += e.json["text"]
    return text


def test_a_checked_llm_answer_is_recorded_with_model_and_prompt_version(
    llm_stack: Stack, llm_endpoint: Endpoint
) -> None:
    llm_endpoint.then(Script(("Reconnect with the Last-Event-ID header ", "to resume [1].")))
    events, record = _ask(llm_stack)
    answer = next(e.json for e in events if e.event == "answer.completed")
    assert record["answer"] == answer["answer"] == _streamed_answer(events)
    assert record["answer"] == "Reconnect with the Last-Event-ID header to resume [1]."
    assert record["model"] == answer["model"] == MODEL
    assert record["prompt_version"] == answer["prompt_version"] == PROMPT_VERSION
    assert [c["number"] for c in record["citations"]] == [1]
    assert not [d for d in record["degraded"] if d["stage"] == "generator"]
    assert answer["degraded"] == []
    # The model was shown the question and the retrieved passages, as data.
    (seen,) = llm_endpoint.requests
    assert seen.body["model"] == MODEL
    user = seen.body["messages"][1]["content"]  # type: ignore[index]
    assert user.endswith(f"Question: {QUESTION}")
    assert re.search(r'<passage-[0-9a-f]{16} id="1"', user)


def test_no_first_token_gives_the_extractive_answer_recorded_as_degraded(
    llm_stack: Stack, llm_endpoint: Endpoint
) -> None:
    llm_endpoint.then(Stall())
    events, record = _ask(llm_stack)
    answer = next(e.json for e in events if e.event == "answer.completed")
    assert record["model"] == answer["model"] == "extractive-v2"
    assert not record["refused"]
    assert record["answer"] == _streamed_answer(events)
    generator = [d for d in record["degraded"] if d["stage"] == "generator"]
    assert [d["reason"].split(":")[0] for d in generator] == ["llm_no_first_token"]
    assert answer["degraded"] == generator
    assert "answer.reset" not in [e.event for e in events]


def test_an_invented_number_resets_the_stream_and_the_record_says_why(
    llm_stack: Stack, llm_endpoint: Endpoint
) -> None:
    llm_endpoint.then(
        Script(("Reconnect to resume the stream [1]. ", "Events are kept 987654 hours [1]. ", "x"))
    )
    events, record = _ask(llm_stack)
    names = [e.event for e in events]
    # The checked first sentence streamed, then was voided; the extractive answer followed.
    reset_at = names.index("answer.reset")
    assert names[reset_at - 1] == "answer.delta"
    assert events[reset_at - 1].json["text"] == "Reconnect to resume the stream [1]."
    assert events[reset_at].json["reason"].startswith("unsupported_number: number(s) 987654")
    assert names[reset_at + 1] == "answer.delta"
    assert events[reset_at + 1].json["index"] == 0
    assert record["model"] == "extractive-v2"
    assert "987654" not in record["answer"]
    assert record["answer"] == _streamed_answer(events)
    reasons = [d["reason"] for d in record["degraded"] if d["stage"] == "generator"]
    assert len(reasons) == 1
    assert reasons[0].startswith("unsupported_number: ")


def test_an_openai_backend_without_an_endpoint_stops_the_generator_with_a_clear_line(
    stack: Stack, tmp_path: Path
) -> None:
    s = _stack(stack, tmp_path, {"RAGWAY_GENERATOR_BACKEND": "openai", "RAGWAY_LLM_MODEL": "m"})
    try:
        with pytest.raises(LaunchError, match="exited with status 2") as err:
            s.start_service("generator")
        assert "RAGWAY_GENERATOR_BACKEND=openai needs RAGWAY_LLM_BASE_URL" in str(err.value)
    finally:
        s.stop()


@pytest.fixture(scope="module")
def llama_generator(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The generator as 'ragway up --generator llama' starts it: the packaged model in-process."""
    require_llama_cpp()
    s = _stack(stack, tmp_path_factory.mktemp("llama-gen"), {"RAGWAY_GENERATOR_BACKEND": "llama"})
    try:
        s.start_service("generator")
        yield s
    finally:
        s.stop()
    _no_tracebacks(s)


PASSAGES = [
    generator_pb2.Passage(
        number=1,
        source_id="streaming#resume",
        document_id="streaming",
        title="Streaming",
        section="Resuming a stream",
        text="Reconnect with the Last-Event-ID header to replay every event after that id. "
        "Events are kept for 24 hours after the run ends.",
    ),
    generator_pb2.Passage(
        number=2,
        source_id="streaming#heartbeats",
        document_id="streaming",
        title="Streaming",
        section="Heartbeats",
        text="The gateway sends a heartbeat comment every 15 seconds while a stream is idle.",
    ),
]


def test_the_local_model_answers_over_grpc_held_to_the_evidence(llama_generator: Stack) -> None:
    from services.generator.backends.base import Passage

    with service_channel(llama_generator.config.generator_addr) as channel:
        stub = generator_pb2_grpc.GeneratorStub(channel)
        request = generator_pb2.GenerateRequest(question=QUESTION, passages=PASSAGES, run_id="t")
        replies = list(stub.Generate(request, timeout=60))
    final = replies[-1].final
    text = ""
    for r in replies[:-1]:
        text = "" if r.HasField("reset") else text + r.delta.text
    assert text == final.answer
    if final.model == "SmolLM2-135M-Instruct.Q4_1":
        assert final.prompt_version == PROMPT_VERSION
        if final.verdict == generator_pb2.GROUNDING_VERDICT_REFUSED:
            assert final.refusal_reason == generator_pb2.REFUSAL_REASON_MODEL_ABSTAINED
            return
        assert final.verdict == generator_pb2.GROUNDING_VERDICT_GROUNDED
        by_number = {
            p.number: Passage(p.number, p.source_id, p.document_id, p.title, p.section, p.text)
            for p in PASSAGES
        }
        assert all(c.grounded and not c.unknown for c in check_answer(final.answer, by_number))
    else:
        assert final.model == "extractive-v2"
        assert final.verdict == generator_pb2.GROUNDING_VERDICT_GROUNDED
        assert final.degraded, "a fallback says why"
