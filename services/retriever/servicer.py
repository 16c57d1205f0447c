"""gRPC ↔ domain translation for the Retriever service: search and writes.

No search or write logic lives here: the pipeline is services/retriever/search.py,
the write path services/retriever/writes.py, and the build-administration methods
come from the ``BuildAdmin`` mixin (services/retriever/admin.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import time
from collections.abc import Callable
from concurrent.futures import Executor
from typing import TypeVar

import grpc

from ragway.embedding import Embedder
from ragway.question import asked
from ragway.v1 import retriever_pb2 as pb
from ragway.v1 import retriever_pb2_grpc as pb_grpc
from ragway.v1.embeddings_pb2 import QueryVector
from services.retriever import metrics, writes
from services.retriever.activity import SearchActivity
from services.retriever.admin import BuildAdmin, abort
from services.retriever.catalog import BuildCatalog
from services.retriever.catalog_store import CatalogUnavailableError
from services.retriever.model import OPEN_END, AccessScope, ChunkRecord, Status
from services.retriever.rerank import Reranker
from services.retriever.search import (
    AllRetrieversFailedError,
    HybridSearcher,
    Mode,
    SearchOptions,
)
from services.retriever.settings import RetrieverSettings
from services.retriever.shelf import RerankerShelf, UnknownRerankerError
from services.retriever.writes import Origin

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_QUERY_CHARS = 4000
MAX_UPSERT_CHUNKS = 2000

_MODES = {
    pb.SEARCH_MODE_UNSPECIFIED: Mode.HYBRID,
    pb.SEARCH_MODE_HYBRID: Mode.HYBRID,
    pb.SEARCH_MODE_SPARSE: Mode.SPARSE,
    pb.SEARCH_MODE_DENSE: Mode.DENSE,
}
_MODE_TO_PB = {
    Mode.HYBRID: pb.SEARCH_MODE_HYBRID,
    Mode.SPARSE: pb.SEARCH_MODE_SPARSE,
    Mode.DENSE: pb.SEARCH_MODE_DENSE,
}
_ORIGIN = {
    pb.WRITE_ORIGIN_BULK: Origin.BULK,
    pb.WRITE_ORIGIN_INCREMENTAL: Origin.INCREMENTAL,
}
_STATUS = {
    pb.DOCUMENT_STATUS_CURRENT: Status.CURRENT,
    pb.DOCUMENT_STATUS_DEPRECATED: Status.DEPRECATED,
    pb.DOCUMENT_STATUS_DRAFT: Status.DRAFT,
}


class RetrieverServicer(BuildAdmin, pb_grpc.RetrieverServicer):
    def __init__(
        self,
        settings: RetrieverSettings,
        catalog: BuildCatalog,
        searcher: HybridSearcher,
        embedder: Embedder,
        executor: Executor,
        *,
        search_executor: Executor | None = None,
        bulk_embedder: Embedder | None = None,
        rerankers: RerankerShelf | None = None,
        activity: SearchActivity | None = None,
    ) -> None:
        """``embedder`` and ``executor`` serve the writes and build administration;
        searches run on the searcher's own embedder and on ``search_executor`` (the
        same executor when not given), so writes never queue a search behind them.
        Upserts with origin BULK embed with ``bulk_embedder`` (``embedder`` when not
        given): a bulk build runs on every core without taking the live writes'."""
        BuildAdmin.__init__(self, catalog, embedder, executor)
        self._bulk_embedder = bulk_embedder or embedder
        self._settings = settings
        self._searcher = searcher
        self._search_executor = search_executor or executor
        self._rerankers = rerankers or RerankerShelf()
        # Searches mark themselves here; a live write embeds on every core while
        # none runs (services/retriever/activity.py).
        self._activity = activity or SearchActivity(settings.write_quiet_s)

    async def Search(
        self, request: pb.SearchRequest, context: grpc.aio.ServicerContext
    ) -> pb.SearchResponse:
        with self._activity.searching():
            return await self._search(request, context)

    async def _search(
        self, request: pb.SearchRequest, context: grpc.aio.ServicerContext
    ) -> pb.SearchResponse:
        query = asked(request.query)
        if not query:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "query must not be empty")
        if len(query) > MAX_QUERY_CHARS:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"query has {len(query)} characters; the limit is {MAX_QUERY_CHARS}",
            )
        s = self._settings
        if request.reranker and request.rerank == pb.RERANK_MODE_OFF:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"reranker {request.reranker!r} is named with RERANK_MODE_OFF; name none or rerank",
            )
        named: Reranker | None = None  # None: the searcher's default for the tenant
        if request.reranker:
            try:
                named = self._rerankers.for_search(request.tenant, request.reranker)
            except UnknownRerankerError as exc:
                await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
        try:
            scope = (
                AccessScope(request.tenant, frozenset(request.access_groups), request.as_of_unix)
                if request.as_of_unix
                else AccessScope(request.tenant, frozenset(request.access_groups))
            )
            top_k = request.top_k or s.default_top_k
            budget = request.budget_ms or s.default_budget_ms
            remaining = context.time_remaining()
            if remaining is not None:  # the gRPC deadline caps the budget
                budget = max(10, min(budget, int(remaining * 1000)))
            options = SearchOptions(
                top_k=top_k,
                candidate_depth=request.candidate_depth or max(s.default_candidate_depth, top_k),
                mode=_MODES.get(request.mode, Mode.HYBRID),
                rerank={pb.RERANK_MODE_ON: True, pb.RERANK_MODE_OFF: False}.get(request.rerank),
                budget_ms=budget,
                reranker=named,
                # Absent: the searcher's settings. Out of range, not finite or with
                # RERANK_MODE_OFF: a ValueError, so INVALID_ARGUMENT.
                rerank_weight=(
                    request.rerank_weight if request.HasField("rerank_weight") else None
                ),
                skip_margin=(
                    request.rerank_skip_margin if request.HasField("rerank_skip_margin") else None
                ),
            )
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        if request.reranker and not self._rerankers.serves_named(request.tenant, request.reranker):
            # The named artifact was adapted on another tenant, so this search keeps its
            # default reranker, and with it the retriever's weight and skip margin: the
            # request's were fitted for the artifact it named.
            options = dataclasses.replace(options, rerank_weight=None, skip_margin=None)
        build = await self._open(request.build, context, self._search_executor)
        t0 = time.perf_counter()
        try:
            outcome = await self._searcher.search(build, query, scope, options)
        except AllRetrieversFailedError as exc:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, str(exc))
        metrics.observe_search(
            outcome.mode.value, time.perf_counter() - t0, outcome.timings_ms, outcome.degraded
        )
        metrics.observe_rerank(outcome.reranker, outcome.rerank_outcome)
        response = pb.SearchResponse(
            hits=[
                pb.SearchHit(
                    chunk_id=h.chunk.chunk_id,
                    document_id=h.chunk.document_id,
                    title=h.chunk.title,
                    text=h.chunk.text,
                    url=h.chunk.url,
                    version=h.chunk.version,
                    section=h.chunk.section,
                    score=h.score,
                    scores=pb.StageScores(
                        sparse=h.sparse[1] if h.sparse else 0.0,
                        sparse_rank=h.sparse[0] if h.sparse else 0,
                        dense=h.dense[1] if h.dense else 0.0,
                        dense_rank=h.dense[0] if h.dense else 0,
                        unit=h.units[1] if h.units else 0.0,
                        unit_rank=h.units[0] if h.units else 0,
                        fused=h.fused,
                        rerank=h.rerank or 0.0,
                        reranked=h.rerank is not None,
                    ),
                    unit_vectors=h.chunk.unit_vectors if request.unit_vectors else b"",
                )
                for h in outcome.hits
            ],
            degraded=[pb.Degradation(stage=s, reason=r) for s, r in outcome.degraded],
            timings=[pb.StageTiming(stage=k, ms=v) for k, v in outcome.timings_ms.items()],
            build_id=outcome.build_id,
            mode=_MODE_TO_PB[outcome.mode],
            reranker_model=outcome.reranker or "",
            rerank_skipped=outcome.rerank_outcome == "skipped",
        )
        if request.query_vectors and outcome.query_vectors:
            response.embedding_model = outcome.embedding_model
            response.query_vectors.extend(
                QueryVector(text=text, vector=vector.tolist())
                for text, vector in outcome.query_vectors.items()
            )
        return response

    async def ListRerankers(
        self, request: pb.ListRerankersRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListRerankersResponse:
        return pb.ListRerankersResponse(
            rerankers=[
                pb.RerankerInfo(
                    version=r.version,
                    model_id=r.reranker.model_id,
                    tenant=r.tenant,
                    role=r.role,
                    max_length=r.max_length,
                    created=r.created,
                )
                for r in self._rerankers.listed()
            ]
        )

    async def Upsert(
        self, request: pb.UpsertRequest, context: grpc.aio.ServicerContext
    ) -> pb.UpsertResponse:
        if len(request.chunks) > MAX_UPSERT_CHUNKS:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"{len(request.chunks)} chunks in one call; send at most {MAX_UPSERT_CHUNKS}",
            )
        try:
            records = [_record(c) for c in request.chunks]
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        build = await self._open(request.build, context)
        origin = _ORIGIN.get(request.origin, Origin.PLAIN)
        done = await self._write(
            functools.partial(
                writes.upsert,
                build,
                self._bulk_embedder if origin is Origin.BULK else self._embedder,
                records,
                origin,
                unit_vectors=self._settings.unit_vectors,
                replace_documents=request.replace_documents,
            ),
            context,
        )
        log.info("upserted", extra={"chunks": done.written, "build": build.build_id})
        return pb.UpsertResponse(
            upserted=done.written, build_id=build.build_id, skipped=done.skipped
        )

    async def Delete(
        self, request: pb.DeleteRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteResponse:
        if not request.tenant:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "tenant must not be empty")
        build = await self._open(request.build, context)
        origin = _ORIGIN.get(request.origin, Origin.PLAIN)
        done = await self._write(
            functools.partial(
                writes.delete, build, request.tenant, list(request.document_ids), origin
            ),
            context,
        )
        return pb.DeleteResponse(
            deleted_chunks=done.chunks,
            build_id=build.build_id,
            skipped_documents=done.skipped_documents,
        )

    async def UpdateAccess(
        self, request: pb.UpdateAccessRequest, context: grpc.aio.ServicerContext
    ) -> pb.UpdateAccessResponse:
        if not request.tenant or not request.document_id:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "tenant and document_id must not be empty"
            )
        status = _STATUS.get(request.status) if request.status else None
        if request.status and status is None:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "unknown status")
        if not request.access_groups and status is None:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "set access_groups, status or both"
            )
        build = await self._open(request.build, context)
        if not writes.can_read_back(build):
            await abort(
                context,
                grpc.StatusCode.UNIMPLEMENTED,
                "this sparse backend cannot read chunks back; resend the document instead",
            )

        def update() -> int:
            return writes.update_access(
                build,
                self._embedder,
                request.tenant,
                request.document_id,
                groups=list(request.access_groups),
                status=status,
                origin=_ORIGIN.get(request.origin, Origin.PLAIN),
                unit_vectors=self._settings.unit_vectors,
            )

        updated = await self._write(update, context)
        return pb.UpdateAccessResponse(updated_chunks=updated, build_id=build.build_id)

    async def _write(self, fn: Callable[[], T], context: grpc.aio.ServicerContext) -> T:
        """A write off the event loop. A shared catalog that does not answer (the touched
        set is in Redis) is UNAVAILABLE, which callers such as the ingest worker retry."""
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, fn)
        except CatalogUnavailableError as exc:
            await abort(context, grpc.StatusCode.UNAVAILABLE, str(exc))


def _record(c: pb.Chunk) -> ChunkRecord:
    status = _STATUS.get(c.status)
    if status is None:
        raise ValueError(f"chunk {c.chunk_id!r}: status must be set (current, deprecated or draft)")
    return ChunkRecord(
        chunk_id=c.chunk_id,
        document_id=c.document_id,
        tenant=c.tenant,
        access_groups=tuple(dict.fromkeys(c.access_groups)),
        status=status,
        effective_from=c.effective_from_unix,
        effective_to=c.effective_to_unix or OPEN_END,
        version=c.version,
        url=c.url,
        title=c.title,
        section=c.section,
        text=c.text,
    )
