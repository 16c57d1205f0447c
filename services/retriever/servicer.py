"""gRPC ↔ domain translation for the Retriever service. No search logic lives here."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import replace
from typing import Any, NoReturn, TypeVar

import grpc

from ragway.embedding import Embedder
from ragway.v1 import retriever_pb2 as pb
from ragway.v1 import retriever_pb2_grpc as pb_grpc
from services.retriever.builds import (
    CANDIDATE,
    LIVE,
    Build,
    BuildCatalog,
    BuildStateError,
    UnknownBuildError,
)
from services.retriever.indexes import ChunkSource
from services.retriever.model import OPEN_END, AccessScope, ChunkRecord, Status
from services.retriever.search import (
    AllRetrieversFailedError,
    HybridSearcher,
    Mode,
    SearchOptions,
)
from services.retriever.settings import RetrieverSettings

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
_STATUS = {
    pb.DOCUMENT_STATUS_CURRENT: Status.CURRENT,
    pb.DOCUMENT_STATUS_DEPRECATED: Status.DEPRECATED,
    pb.DOCUMENT_STATUS_DRAFT: Status.DRAFT,
}


class RetrieverServicer(pb_grpc.RetrieverServicer):
    def __init__(
        self,
        settings: RetrieverSettings,
        catalog: BuildCatalog,
        searcher: HybridSearcher,
        embedder: Embedder,
        executor: Executor,
    ) -> None:
        self._settings = settings
        self._catalog = catalog
        self._searcher = searcher
        self._embedder = embedder
        self._executor = executor

    async def Search(
        self, request: pb.SearchRequest, context: grpc.aio.ServicerContext
    ) -> pb.SearchResponse:
        query = request.query.strip()
        if not query:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "query must not be empty")
        if len(query) > MAX_QUERY_CHARS:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"query has {len(query)} characters; the limit is {MAX_QUERY_CHARS}",
            )
        s = self._settings
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
            )
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        build = await self._open(request.build, context)
        try:
            outcome = await self._searcher.search(build, query, scope, options)
        except AllRetrieversFailedError as exc:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, str(exc))
        return pb.SearchResponse(
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
                        fused=h.fused,
                        rerank=h.rerank or 0.0,
                        reranked=h.rerank is not None,
                    ),
                )
                for h in outcome.hits
            ],
            degraded=[pb.Degradation(stage=s, reason=r) for s, r in outcome.degraded],
            timings=[pb.StageTiming(stage=k, ms=v) for k, v in outcome.timings_ms.items()],
            build_id=outcome.build_id,
            mode=_MODE_TO_PB[outcome.mode],
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
        origin = request.origin

        def write() -> int:
            def wanted(rs: list[ChunkRecord]) -> list[ChunkRecord]:
                if origin != pb.WRITE_ORIGIN_BULK:
                    return rs
                return [r for r in rs if (r.tenant, r.document_id) not in build.touched]

            todo = wanted(records)
            vectors = self._embedder.embed([r.embedding_text for r in todo])
            with build.write_lock:
                keep = wanted(todo)  # an incremental write may have landed meanwhile
                if len(keep) != len(todo):
                    ids = {r.chunk_id for r in keep}
                    vectors = vectors[[i for i, r in enumerate(todo) if r.chunk_id in ids]]
                if keep:
                    build.sparse.upsert(keep)
                    build.dense.upsert(keep, vectors.tolist())
                if origin == pb.WRITE_ORIGIN_INCREMENTAL:
                    build.mark_touched((r.tenant, r.document_id) for r in keep)
            return len(keep)

        written = await asyncio.get_running_loop().run_in_executor(self._executor, write)
        log.info("upserted", extra={"chunks": written, "build": build.build_id})
        return pb.UpsertResponse(
            upserted=written, build_id=build.build_id, skipped=len(records) - written
        )

    async def Delete(
        self, request: pb.DeleteRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteResponse:
        if not request.tenant:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "tenant must not be empty")
        build = await self._open(request.build, context)
        tenant, origin = request.tenant, request.origin

        def delete() -> tuple[int, int]:
            with build.write_lock:
                ids = list(request.document_ids)
                if origin == pb.WRITE_ORIGIN_BULK:
                    ids = [d for d in ids if (tenant, d) not in build.touched]
                dense = build.dense.delete_documents(tenant, ids) if ids else 0
                sparse = build.sparse.delete_documents(tenant, ids) if ids else 0
                if origin == pb.WRITE_ORIGIN_INCREMENTAL:
                    build.mark_touched((tenant, d) for d in ids)
            return max(dense, sparse), len(request.document_ids) - len(ids)

        loop = asyncio.get_running_loop()
        deleted, skipped = await loop.run_in_executor(self._executor, delete)
        return pb.DeleteResponse(
            deleted_chunks=deleted, build_id=build.build_id, skipped_documents=skipped
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
        source = build.sparse
        if not isinstance(source, ChunkSource):
            await context.abort(
                grpc.StatusCode.UNIMPLEMENTED,
                "this sparse backend cannot read chunks back; resend the document instead",
            )
            raise AssertionError("unreachable")
        groups = tuple(dict.fromkeys(request.access_groups))

        def update() -> int:
            with build.write_lock:
                old = source.document_chunks(request.tenant, request.document_id)
                new = [
                    replace(c, access_groups=groups or c.access_groups, status=status or c.status)
                    for c in old
                ]
                if new:
                    vectors = self._embedder.embed([r.embedding_text for r in new])
                    build.sparse.upsert(new)
                    build.dense.upsert(new, vectors.tolist())
                if request.origin == pb.WRITE_ORIGIN_INCREMENTAL:
                    build.mark_touched([(request.tenant, request.document_id)])
                return len(new)

        updated = await asyncio.get_running_loop().run_in_executor(self._executor, update)
        return pb.UpdateAccessResponse(updated_chunks=updated, build_id=build.build_id)

    # -- knowledge builds ----------------------------------------------------
    async def CreateBuild(
        self, request: pb.CreateBuildRequest, context: grpc.aio.ServicerContext
    ) -> pb.BuildInfo:
        config = await _json_object(request.config_json, "config_json", context)
        c = self._catalog

        def create() -> str:
            build_id = c.create(
                request.build_id or None, config=config, source=request.source, status="building"
            )
            if request.as_candidate:
                c.set_alias(CANDIDATE, build_id)
            return build_id

        build_id = await self._catalog_call(create, context)
        return await self._info(build_id, context)

    async def SealBuild(
        self, request: pb.SealBuildRequest, context: grpc.aio.ServicerContext
    ) -> pb.BuildInfo:
        summary = await _json_object(request.summary_json, "summary_json", context)
        await self._catalog_call(lambda: self._catalog.seal(request.build_id, summary), context)
        return await self._info(request.build_id, context)

    async def ListBuilds(
        self, request: pb.ListBuildsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListBuildsResponse:
        c = self._catalog

        def listing() -> list[pb.BuildInfo]:
            return [
                pb.BuildInfo(
                    build_id=b, aliases=c.aliases_of(b), manifest_json=json.dumps(c.manifest(b))
                )
                for b in c.build_ids()
            ]

        return pb.ListBuildsResponse(builds=await self._catalog_call(listing, context))

    async def ShowBuild(
        self, request: pb.ShowBuildRequest, context: grpc.aio.ServicerContext
    ) -> pb.BuildInfo:
        build_id = await self._catalog_call(lambda: self._catalog.resolve(request.build), context)
        sparse, dense = await self._catalog_call(lambda: self._catalog.counts(build_id), context)
        info = await self._info(build_id, context)
        info.sparse_count, info.dense_count = sparse, dense
        return info

    async def PromoteBuild(
        self, request: pb.PromoteBuildRequest, context: grpc.aio.ServicerContext
    ) -> pb.AliasChange:
        gate = await _json_object(request.gate_json, "gate_json", context)
        previous, new = await self._catalog_call(
            lambda: self._catalog.promote(
                request.build_id, expected_live=request.expected_live, gate=gate
            ),
            context,
        )
        log.info("promoted", extra={"previous": previous, "live": new})
        return pb.AliasChange(alias=LIVE, previous_build_id=previous, build_id=new)

    async def RollbackBuild(
        self, request: pb.RollbackBuildRequest, context: grpc.aio.ServicerContext
    ) -> pb.AliasChange:
        previous, new = await self._catalog_call(
            lambda: self._catalog.rollback(expected_live=request.expected_live), context
        )
        log.info("rolled back", extra={"previous": previous, "live": new})
        return pb.AliasChange(alias=LIVE, previous_build_id=previous, build_id=new)

    async def DeleteBuild(
        self, request: pb.DeleteBuildRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteBuildResponse:
        await self._catalog_call(lambda: self._catalog.delete(request.build_id), context)
        return pb.DeleteBuildResponse(build_id=request.build_id)

    async def _info(self, build_id: str, context: grpc.aio.ServicerContext) -> pb.BuildInfo:
        c = self._catalog
        return await self._catalog_call(
            lambda: pb.BuildInfo(
                build_id=build_id,
                aliases=c.aliases_of(build_id),
                manifest_json=json.dumps(c.manifest(build_id)),
            ),
            context,
        )

    async def _catalog_call(self, fn: Callable[[], T], context: grpc.aio.ServicerContext) -> T:
        """Run a catalog operation off the event loop; its errors become status codes."""
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, fn)
        except UnknownBuildError as exc:
            await _abort(context, grpc.StatusCode.NOT_FOUND, str(exc))
        except BuildStateError as exc:
            await _abort(context, grpc.StatusCode.FAILED_PRECONDITION, str(exc))
        except FileExistsError:
            await _abort(context, grpc.StatusCode.ALREADY_EXISTS, "that build id exists already")
        except ValueError as exc:
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(exc))

    async def DescribeBuild(
        self, request: pb.DescribeBuildRequest, context: grpc.aio.ServicerContext
    ) -> pb.DescribeBuildResponse:
        build = await self._open(request.build, context)
        count = await asyncio.get_running_loop().run_in_executor(self._executor, build.sparse.count)
        return pb.DescribeBuildResponse(
            build_id=build.build_id,
            chunk_count=count,
            embedding_model=self._embedder.model_id,
            embedding_dim=self._embedder.dim,
        )

    async def _open(self, name: str, context: grpc.aio.ServicerContext) -> Build:
        """The build a request names (id or alias), or NOT_FOUND."""
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self._executor, self._catalog.open, name
            )
        except UnknownBuildError as exc:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
            raise  # abort raises; this line only informs the type checker


async def _abort(context: grpc.aio.ServicerContext, code: grpc.StatusCode, msg: str) -> NoReturn:
    await context.abort(code, msg)
    raise AssertionError("unreachable: abort raises")


async def _json_object(text: str, name: str, context: grpc.aio.ServicerContext) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"{name} is not JSON: {exc}")
    if not isinstance(value, dict):
        await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"{name} must be a JSON object")
    return value


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
