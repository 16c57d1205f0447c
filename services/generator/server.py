"""Builds the generator's gRPC server."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health

from ragway.embedding import OnnxMiniLMEmbedder
from ragway.grpc_server import SERVER_OPTIONS, add_health_and_reflection, bind, serve
from ragway.v1 import generator_pb2, generator_pb2_grpc
from services.generator.backends.base import GeneratorBackend
from services.generator.backends.extractive import ExtractiveConfig, ExtractiveGenerator
from services.generator.servicer import GeneratorServicer
from services.generator.settings import GeneratorSettings

log = logging.getLogger(__name__)
SERVICE_NAME = generator_pb2.DESCRIPTOR.services_by_name["Generator"].full_name


@dataclass
class GeneratorServer:
    server: grpc.aio.Server
    port: int
    health: health.HealthServicer


def build_backend(settings: GeneratorSettings) -> GeneratorBackend:
    # Only "extractive" exists today; the settings pattern rejects other names.
    embedder = OnnxMiniLMEmbedder(threads=settings.inference_threads)
    embedder.embed(["warm-up"])  # the first inference allocates; keep it off a user's query
    config = ExtractiveConfig(
        min_support=settings.min_support, max_sentences=settings.max_sentences
    )
    return ExtractiveGenerator(embedder, config)


def create_server(settings: GeneratorSettings) -> GeneratorServer:
    backend = build_backend(settings)
    server = grpc.aio.server(options=SERVER_OPTIONS)
    generator_pb2_grpc.add_GeneratorServicer_to_server(GeneratorServicer(settings, backend), server)
    health_servicer = add_health_and_reflection(server, [SERVICE_NAME])
    port = bind(server, settings.generator_listen)
    log.info("generator ready to start", extra={"port": port, "backend": backend.name})
    return GeneratorServer(server, port, health_servicer)


async def run(settings: GeneratorSettings) -> None:
    gs = create_server(settings)
    await serve(gs.server, gs.health, [SERVICE_NAME], grace_s=settings.shutdown_grace_s)
