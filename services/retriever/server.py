"""Builds the retriever's gRPC server: ``create_server(settings) -> (server, port, ...)``."""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health

from ragway import spelling
from ragway.embedding import Embedder, OnnxMiniLMEmbedder, Widening, cpu_flags
from ragway.embedding_cache import CachedEmbedder, open_cache
from ragway.grpc_server import SERVER_OPTIONS, add_health_and_reflection, bind, serve
from ragway.service_auth import server_interceptors
from ragway.v1 import retriever_pb2, retriever_pb2_grpc
from services.retriever import metrics
from services.retriever.activity import SearchActivity
from services.retriever.backends import create_engines
from services.retriever.catalog import BuildCatalog
from services.retriever.catalog_redis import RedisCatalogStore
from services.retriever.catalog_store import (
    CatalogStore,
    CatalogUnavailableError,
    FileCatalogStore,
)
from services.retriever.query_vectors import QueryVectorCache
from services.retriever.rerank import (
    OnnxCrossEncoderReranker,
    Reranker,
    load_reranker,
    resolve_precision,
)
from services.retriever.search import HybridSearcher
from services.retriever.servicer import RetrieverServicer
from services.retriever.settings import RetrieverSettings
from services.retriever.shelf import RerankerShelf, Shelved

log = logging.getLogger(__name__)
SERVICE_NAME = retriever_pb2.DESCRIPTOR.services_by_name["Retriever"].full_name


@dataclass
class RetrieverServer:
    server: grpc.aio.Server
    port: int
    health: health.HealthServicer
    catalog: BuildCatalog
    executor: ThreadPoolExecutor  # searches
    write_executor: ThreadPoolExecutor  # writes and build administration

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.catalog.close)
        self.write_executor.shutdown(wait=True)
        self.executor.shutdown(wait=True)


def create_server(settings: RetrieverSettings) -> RetrieverServer:
    embedder = OnnxMiniLMEmbedder(threads=settings.inference_threads)
    embedder.embed(["warm-up"])  # the first inference allocates; keep it off a user's query
    spelling.english_words()  # the respelling's dictionary (~0.1 s): read before a query
    # Writes get their own embedder and threads: on the search path's, a bulk build's
    # embedding held the embedder and every search thread while queries waited.
    # Bulk loads are throughput work: a session of their own on every core, so they
    # neither take the live writes' thread nor the searches' (issue 19). Its threads
    # do not spin between operators: the cores are the searches' too.
    bulk_model = OnnxMiniLMEmbedder(threads=settings.bulk_threads(), spin=False)
    bulk_embedder: Embedder = bulk_model
    # A live write borrows the bulk session while no search runs; a search that
    # starts interrupts it (services/retriever/activity.py).
    widening = (
        Widening(bulk_model.session, lambda: activity.quiet(), metrics.observe_write_batch)
        if settings.write_widen_when_quiet
        else None
    )
    activity = SearchActivity(
        settings.write_quiet_s, on_search=widening.interrupt if widening else None
    )
    write_embedder: Embedder = OnnxMiniLMEmbedder(
        threads=settings.write_inference_threads, widening=widening
    )
    # Both write sessions share one cache of computed vectors: a rebuild, a re-sent
    # webhook or an access change embeds only texts it has not embedded before.
    cache = (
        open_cache(
            settings.index_dir / "embedding-cache.sqlite", max_rows=settings.embedding_cache_rows
        )
        if settings.embedding_cache_rows
        else None
    )
    if cache is not None:
        write_embedder = CachedEmbedder(write_embedder, cache, metrics.observe_embedding_cache)
        bulk_embedder = CachedEmbedder(bulk_embedder, cache, metrics.observe_embedding_cache)
    loaded: dict[Path, Reranker] = {}  # a folder named in two settings is loaded once

    def shelve(path: Path, role: str) -> Shelved:
        key = path.resolve()
        if key not in loaded:
            loaded[key] = _load(settings, path)
        return _shelved(loaded[key], path, role)

    shelf = RerankerShelf(
        shelve(settings.reranker_path, "shared") if settings.reranker_path else None,
        {t: shelve(p, "tenant") for t, p in settings.reranker_tenant_paths.items()},
        [shelve(p, "offered") for p in settings.reranker_offered_paths],
    )
    metrics.announce_rerankers(shelf.announced())
    executor = ThreadPoolExecutor(max_workers=settings.search_threads, thread_name_prefix="search")
    write_executor = ThreadPoolExecutor(
        max_workers=settings.write_threads, thread_name_prefix="write"
    )
    catalog = BuildCatalog(
        settings.index_dir,
        embedding_model=embedder.model_id,
        dim=embedder.dim,
        engines=create_engines(settings, dim=embedder.dim),
        store=create_store(settings),
    )
    try:
        live = catalog.ensure_live(settings.initial_build_id)
        catalog.open(live)  # open now: a broken index fails the start, not the first query
    except CatalogUnavailableError as exc:
        # One clear line and exit status 2 (ragway.grpc_server.main), not a traceback.
        raise ValueError(f"{exc} (RAGWAY_CATALOG_STORE=redis, RAGWAY_REDIS_URL)") from exc
    searcher = HybridSearcher(
        embedder,
        executor,
        default_for=shelf.default_for,
        rerank_depth=settings.rerank_depth,
        rrf_k=settings.rrf_k,
        skip_margin=settings.rerank_skip_margin,
        rerank_weight=settings.rerank_weight,
        unit_fusion=settings.unit_fusion,
        query_vectors=QueryVectorCache(
            settings.query_vector_cache_entries, metrics.observe_query_vector
        ),
    )
    server = grpc.aio.server(
        options=SERVER_OPTIONS,
        interceptors=server_interceptors(settings.service_token_value(), "retriever"),
    )
    retriever_pb2_grpc.add_RetrieverServicer_to_server(
        RetrieverServicer(
            settings,
            catalog,
            searcher,
            write_embedder,
            write_executor,
            search_executor=executor,
            bulk_embedder=bulk_embedder,
            rerankers=shelf,
            activity=activity,
        ),
        server,
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
            "catalog_store": settings.catalog_store,
        },
    )
    return RetrieverServer(server, port, health_servicer, catalog, executor, write_executor)


def create_store(settings: RetrieverSettings) -> CatalogStore:
    files = FileCatalogStore(settings.index_dir)
    if settings.catalog_store == "file":
        return files
    store = RedisCatalogStore.from_url(
        settings.redis_url,
        prefix=settings.catalog_redis_prefix,
        timeout_s=settings.catalog_redis_timeout_s,
    )
    if files.aliases():  # this data root had a file catalog: keep its builds known
        try:
            copied = store.adopt(files)
        except CatalogUnavailableError as exc:
            raise ValueError(f"{exc} (RAGWAY_CATALOG_STORE=redis, RAGWAY_REDIS_URL)") from exc
        if copied:
            log.info(
                "file catalog adopted into the shared catalog",
                extra={"builds": copied, "index_dir": str(settings.index_dir)},
            )
    return store


def _load(settings: RetrieverSettings, path: Path) -> Reranker:
    reranker = load_reranker(
        path,
        max_length=settings.rerank_max_length,
        threads=settings.rerank_threads or settings.inference_threads,
        batch_size=settings.rerank_batch_size,
        precision=resolve_precision(settings.rerank_precision, cpu_flags()),
    )
    reranker.score("warm-up", ["warm-up"])  # the first inference allocates
    log.info("reranker loaded", extra={"reranker": reranker.model_id, "path": str(path)})
    return reranker


def _shelved(reranker: Reranker, path: Path, role: str) -> Shelved:
    """A loaded reranker with what its ``artifact.json`` says of it (a CrossEncoder
    folder has none: its folder name is its version, and it names no tenant)."""
    if isinstance(reranker, OnnxCrossEncoderReranker):
        meta = reranker.meta
        return Shelved(
            version=str(meta["version"]),
            reranker=reranker,
            tenant=str(meta.get("tenant") or ""),
            role=role,
            max_length=reranker.max_length,
            created=str(meta.get("created", "")),
        )
    return Shelved(path.name, reranker, tenant="", role=role, max_length=0, created="")


async def run(settings: RetrieverSettings) -> None:
    rs = create_server(settings)
    await serve(
        rs.server, rs.health, [SERVICE_NAME], grace_s=settings.shutdown_grace_s, on_stop=rs.close
    )
