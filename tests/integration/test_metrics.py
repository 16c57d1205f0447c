"""The services' Prometheus metrics on the real processes: scraped, parsed, and moving."""

from __future__ import annotations

import httpx

from ragway.embedding import OnnxMiniLMEmbedder
from ragway.v1 import retriever_pb2_grpc as pbg
from ragway_tools.channels import service_channel
from ragway_tools.launcher import Stack
from ragway_tools.training.qa_passages import packed_passages
from services.gateway.auth import KeyRegistry
from services.generator.backends.extractive import ExtractiveGenerator
from tests.integration.conftest import KEYS, auth
from tests.integration.prometheus import scrape, value
from tests.integration.sse import read_events, start_run


def service_url(stack: Stack, name: str) -> str:
    url = stack.metrics_url(name)
    assert url is not None, f"the test stack serves no metrics for the {name}"
    return url


def vectorless_units(stack: Stack, questions: tuple[str, ...], key: str) -> int:
    """The units the generator must embed itself for these questions: those of the
    passages a run gets (searched and packed as the gateway does) that came without
    stored vectors. Only the dense engine's records carry them, so a passage that BM25
    alone found has none (services/retriever/fusion.py)."""
    who = KeyRegistry.from_file(stack.config.api_keys_file).authenticate(key, None)
    scorer = ExtractiveGenerator(OnnxMiniLMEmbedder())  # counts units, embeds nothing
    total = 0
    with service_channel(stack.config.retriever_addr, stack.config.service_token) as channel:
        stub = pbg.RetrieverStub(channel)
        for question in questions:
            for p in packed_passages(stub, question, who.tenant, sorted(who.groups)):
                if not p.unit_vectors:
                    total += len(scorer._passage_units(p))
    return total


def test_a_grounded_and_a_refused_run_move_the_counters_of_every_service(
    api: httpx.Client, stack: Stack
) -> None:
    gateway_url = f"{stack.config.gateway_url}/metrics"
    before = {
        "gateway": scrape(gateway_url),
        "retriever": scrape(service_url(stack, "retriever")),
        "generator": scrape(service_url(stack, "generator")),
    }
    questions = (
        "How do I resume a stream after a disconnect?",
        "What is the capital of France?",
    )
    for question in questions:
        run_id = start_run(api, question, auth("demo"))
        assert read_events(api, run_id, auth("demo"))[-1].event == "run.completed"
    after = {
        "gateway": scrape(gateway_url),
        "retriever": scrape(service_url(stack, "retriever")),
        "generator": scrape(service_url(stack, "generator")),
    }

    def moved(service: str, name: str, **labels: str) -> float:
        return value(after[service], name, **labels) - value(before[service], name, **labels)

    assert moved("gateway", "ragway_runs_total", outcome="completed") >= 1
    assert moved("gateway", "ragway_runs_total", outcome="refused") >= 1
    posts = dict(route="/v1/runs", method="POST", status="202")
    assert moved("gateway", "ragway_http_requests_total", **posts) >= 2
    events = dict(route="/v1/runs/{run_id}/events", method="GET", status="200")
    assert moved("gateway", "ragway_http_requests_total", **events) >= 2
    for outcome in ("completed", "refused"):
        count = "ragway_run_duration_seconds_count"
        assert moved("gateway", count, path="baseline", outcome=outcome) >= 1
    for stage in ("retrieve", "generate"):
        assert moved("gateway", "ragway_stage_duration_seconds_count", stage=stage) >= 2
    # Only the grounded answer streams deltas, so only it has a first token.
    assert moved("gateway", "ragway_stage_duration_seconds_count", stage="first_token") >= 1
    assert ("ragway_queue_depth", frozenset()) in after["gateway"]

    search = "ragway_retriever_search_duration_seconds_count"
    assert moved("retriever", search, mode="hybrid") >= 2
    for stage in ("sparse", "dense", "embed"):
        assert moved("retriever", "ragway_retriever_stage_duration_seconds_count", stage=stage) >= 2
    # Each question's text was looked up among the kept vectors (a hit when another
    # test on this stack asked it before, else a miss), at least once.
    kept = "ragway_retriever_query_vector_cache_texts_total"
    looked_up = moved("retriever", kept, outcome="hit") + moved("retriever", kept, outcome="miss")
    assert looked_up >= len(questions)

    assert moved("generator", "ragway_generator_answers_total", verdict="grounded") >= 1
    # The demo build stores every chunk's unit vectors, and the generator uses them: it
    # embeds only the units of passages that came without (found by BM25 alone).
    assert moved("generator", "ragway_generator_units_total", source="stored") >= 1
    expected = vectorless_units(stack, questions, KEYS["demo"])
    assert moved("generator", "ragway_generator_units_total", source="embedded") == expected
    assert moved("generator", "ragway_generator_refusals_total", reason="weak_evidence") >= 1
    # Both questions are one part, spelt as the passages spell them: the generator
    # scores with the vector the retriever embedded each with, and embeds neither.
    question_vectors = "ragway_generator_question_vectors_total"
    assert moved("generator", question_vectors, source="retriever") == len(questions)
    assert moved("generator", question_vectors, source="embedded") == 0
