"""Builds the retriever's gRPC server: ``create_server(settings) -> (server, port, ...)``."""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health

from ragway.embedding import OnnxMiniLMEmbedder
from ragway.grpc_server import SERVER_OPTIONS, add_health_and_reflection, bind, serve
from ragway.service_auth import server_interceptors
from ragway.v1 import retriever_pb2, retriever_pb2_grpc
from services.retriever.backends import create_engines
from services.retriever.catalog import BuildCatalog
from services.retriever.rerank import Reranker, load_reranker
from services.retriever.search import HybridSearcher
from services.retriever.servicer import RetrieverServicer
from services.retriever.settings import RetrieverSettings

log = logging.getLogger(__name__)
SERVICE_NAME = retriever_pb2.DESCRIPTOR.services_by_name["Retriever"].full_name


@dataclass
class RetrieverServer:
    server: grpc.aio.Server
    port: int
    health: health.HealthServicer
    catalog: BuildCatalog
    executor: ThreadPoolExecutor

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.catalog.close)
        self.executor.shutdown(wait=True)


def create_server(settings: RetrieverSettings) -> RetrieverServer:
    embedder = OnnxMiniLMEmbedder(threads=settings.inference_threads)
    embedder.embed(["warm-up"])  # the first inference allocates; keep it off a user's query
    reranker: Reranker | None = None
    if settings.reranker_path is not None:
        reranker = load_reranker(
            settings.reranker_path,
            max_length=settings.rerank_max_length,
            threads=settings.inference_threads,
        )
        reranker.score("warm-up", ["warm-up"])
    executor = ThreadPoolExecutor(max_workers=settings.search_threads, thread_name_prefix="search")
    catalog = BuildCatalog(
        settings.index_dir,
        embedding_model=embedder.model_id,
        dim=embedder.dim,
        engines=create_engines(settings, dim=embedder.dim),
    )
    live = catalog.ensure_live(settings.initial_build_id)
    catalog.open(live)  # open now: a broken index fails the start, not the first query
    searcher = HybridSearcher(
        embedder,
        executor,
        reranker=reranker,
        rerank_depth=settings.rerank_depth,
        rrf_k=settings.rrf_k,
    )
    server = grpc.aio.server(
        options=SERVER_OPTIONS,
        interceptors=server_interceptors(settings.service_token_value(), "retriever"),
    )
    retriever_pb2_grpc.add_RetrieverServicer_to_server(
        RetrieverServicer(settings, catalog, searcher, embedder, executor), server
    )
    health_servicer = add_health_and_reflection(server, [SERVICE_NAME])
    port = bind(server, settings.retriever_listen)
    log.info(
        "retriever ready to start",
        extra={
            "port": port,
            "live_build": live,
            "sparse_backend": settings.sparse_backend,
            "dense_backend": settings.dense_backend,
        },
    )
    return RetrieverServer(server, port, health_servicer, catalog, executor)


async def run(settings: RetrieverSettings) -> None:
    rs = create_server(settings)
    await serve(
        rs.server, rs.health, [SERVICE_NAME], grace_s=settings.shutdown_grace_s, on_stop=rs.close
    )
