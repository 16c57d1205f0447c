"""The build-administration methods of the Retriever gRPC service.

CreateBuild, SealBuild, ListBuilds, ShowBuild, PromoteBuild, RollbackBuild,
DeleteBuild and DescribeBuild translate between gRPC and the build catalog
(services/retriever/catalog.py), whose errors become status codes here:

    UnknownBuildError        → NOT_FOUND
    BuildStateError          → FAILED_PRECONDITION
    CatalogUnavailableError  → UNAVAILABLE (a shared catalog's Redis did not answer)
    FileExistsError          → ALREADY_EXISTS
    ValueError               → INVALID_ARGUMENT

They share the proto's one ``Retriever`` service with search and writes, and a
gRPC service has one servicer, so ``BuildAdmin`` is a mixin of
``RetrieverServicer`` rather than a servicer of its own.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any, NoReturn, TypeVar

import grpc

from ragway.embedding import Embedder
from ragway.v1 import retriever_pb2 as pb
from services.retriever.catalog import (
    CANDIDATE,
    LIVE,
    Build,
    BuildCatalog,
    BuildStateError,
    UnknownBuildError,
)
from services.retriever.catalog_store import CatalogUnavailableError

log = logging.getLogger(__name__)
T = TypeVar("T")


class BuildAdmin:
    def __init__(self, catalog: BuildCatalog, embedder: Embedder, executor: Executor) -> None:
        self._catalog = catalog
        self._embedder = embedder
        self._executor = executor

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
        # gate_json: the caller's promotion check result, recorded in the manifest.
        check = await _json_object(request.gate_json, "gate_json", context)
        previous, new = await self._catalog_call(
            lambda: self._catalog.promote(
                request.build_id, expected_live=request.expected_live, gate=check
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

    async def _open(
        self, name: str, context: grpc.aio.ServicerContext, executor: Executor | None = None
    ) -> Build:
        """The build a request names (id or alias), or NOT_FOUND; opened on ``executor``
        (a search passes its own), else on the write and administration threads."""
        try:
            return await asyncio.get_running_loop().run_in_executor(
                executor or self._executor, self._catalog.open, name
            )
        except UnknownBuildError as exc:
            await abort(context, grpc.StatusCode.NOT_FOUND, str(exc))
        except BuildStateError as exc:  # a shared catalog's build not on this data root
            await abort(context, grpc.StatusCode.FAILED_PRECONDITION, str(exc))
        except CatalogUnavailableError as exc:
            await abort(context, grpc.StatusCode.UNAVAILABLE, str(exc))

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
            await abort(context, grpc.StatusCode.NOT_FOUND, str(exc))
        except BuildStateError as exc:
            await abort(context, grpc.StatusCode.FAILED_PRECONDITION, str(exc))
        except CatalogUnavailableError as exc:
            await abort(context, grpc.StatusCode.UNAVAILABLE, str(exc))
        except FileExistsError:
            await abort(context, grpc.StatusCode.ALREADY_EXISTS, "that build id exists already")
        except ValueError as exc:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(exc))


async def abort(context: grpc.aio.ServicerContext, code: grpc.StatusCode, msg: str) -> NoReturn:
    await context.abort(code, msg)
    raise AssertionError("unreachable: abort raises")


async def _json_object(text: str, name: str, context: grpc.aio.ServicerContext) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        await abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"{name} is not JSON: {exc}")
    if not isinstance(value, dict):
        await abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"{name} must be a JSON object")
    return value
