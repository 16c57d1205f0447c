"""Builds the generator's gRPC server."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health

from ragway import spelling
from ragway.embedding import OnnxMiniLMEmbedder
from ragway.grpc_server import SERVER_OPTIONS, add_health_and_reflection, bind, serve
from ragway.service_auth import server_interceptors
from ragway.v1 import generator_pb2, generator_pb2_grpc
from services.generator.answerability import AnswerabilityModel
from services.generator.backends.base import GeneratorBackend
from services.generator.backends.chat import ChatModel, LLMError
from services.generator.backends.extractive import ExtractiveConfig, ExtractiveGenerator
from services.generator.backends.llm import LLMGenerator, LLMPolicy
from services.generator.backends.openai_compat import OpenAIChatModel, OpenAIConfig
from services.generator.prompts import PromptTemplate
from services.generator.servicer import GeneratorServicer
from services.generator.settings import GeneratorSettings
from services.generator.unit_ranker import UnitRanker

log = logging.getLogger(__name__)
SERVICE_NAME = generator_pb2.DESCRIPTOR.services_by_name["Generator"].full_name


@dataclass
class GeneratorServer:
    server: grpc.aio.Server
    port: int
    health: health.HealthServicer


def build_backend(settings: GeneratorSettings) -> GeneratorBackend:
    embedder = OnnxMiniLMEmbedder(threads=settings.inference_threads)
    embedder.embed(["warm-up"])  # the first inference allocates; keep it off a user's query
    spelling.english_words()  # the spelling repair's dictionary (~0.1 s): read before a query
    config = ExtractiveConfig(
        min_support=settings.min_support,
        max_sentences=settings.max_sentences,
        part_sentences=settings.part_sentences,
        delta_words=settings.extractive_delta_words,
    )
    answerability = (
        None
        if settings.answerability_model == "off"
        else AnswerabilityModel.load(settings.answerability_model)
    )
    ranker = None if settings.unit_ranker == "off" else UnitRanker.load(settings.unit_ranker)
    extractive = ExtractiveGenerator(embedder, config, answerability, ranker)
    if settings.generator_backend == "extractive":
        return extractive
    # LLM backends keep the extractive one: evidence gate and fallback answer.
    try:
        model = _chat_model(settings)
    except LLMError as exc:  # a configuration problem: one clear line at start-up
        raise ValueError(exc.message) from exc
    policy = LLMPolicy(
        first_token_timeout_s=settings.llm_first_token_timeout_s,
        total_timeout_s=settings.llm_total_timeout_s,
        fallback_reserve_s=settings.llm_fallback_reserve_s,
        max_output_tokens=settings.llm_max_output_tokens,
        max_sentences=settings.llm_max_sentences,
        max_prompt_passages=settings.llm_max_prompt_passages,
        number_policy=settings.llm_number_policy,
        evidence_gate=settings.llm_evidence_gate,
        attribute_coverage=settings.llm_attribute_coverage,
    )
    return LLMGenerator(model, PromptTemplate.load(settings.llm_prompt_file), extractive, policy)


def _chat_model(settings: GeneratorSettings) -> ChatModel:
    if settings.generator_backend == "openai":
        return OpenAIChatModel(
            OpenAIConfig(
                base_url=settings.llm_base_url,
                model=settings.llm_model,
                api_key=settings.llm_key(),
                connect_timeout_s=settings.llm_connect_timeout_s,
                read_timeout_s=settings.llm_total_timeout_s,
                attempts=settings.llm_attempts,
                backoff_s=settings.llm_backoff_s,
                max_backoff_s=settings.llm_max_backoff_s,
                temperature=settings.llm_temperature,
                seed=settings.llm_seed,
                repeat_penalty=settings.llm_repeat_penalty,
                extra_body=settings.llm_extra_body,
            )
        )
    from services.generator.backends.llama_local import LlamaChatModel, LlamaConfig, packaged_gguf

    model = LlamaChatModel(
        LlamaConfig(
            model_path=settings.llm_model_path or packaged_gguf(),
            context_tokens=settings.llm_context_tokens,
            threads=settings.inference_threads,
            temperature=settings.llm_temperature,
            seed=settings.llm_seed or 0,
            repeat_penalty=settings.llm_repeat_penalty or 1.2,
        )
    )
    if settings.llm_model:
        model.model = settings.llm_model
    return model


def create_server(settings: GeneratorSettings) -> GeneratorServer:
    backend = build_backend(settings)
    server = grpc.aio.server(
        options=SERVER_OPTIONS,
        interceptors=server_interceptors(settings.service_token_value(), "generator"),
    )
    generator_pb2_grpc.add_GeneratorServicer_to_server(GeneratorServicer(settings, backend), server)
    health_servicer = add_health_and_reflection(server, [SERVICE_NAME])
    port = bind(server, settings.generator_listen)
    log.info("generator ready to start", extra={"port": port, "backend": backend.name})
    return GeneratorServer(server, port, health_servicer)


async def run(settings: GeneratorSettings) -> None:
    gs = create_server(settings)
    await serve(gs.server, gs.health, [SERVICE_NAME], grace_s=settings.shutdown_grace_s)
