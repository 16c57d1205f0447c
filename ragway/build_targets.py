"""Which knowledge builds an incremental write must reach.

Shared by the ingest workers (webhook updates) and the operator tooling (bulk
loads), so both apply the same rule: the ``live`` build, and the ``candidate``
build too while one is staged, so that promoting it does not lose the updates
that arrived while it was being built.
"""

from __future__ import annotations

import grpc

from ragway.v1 import retriever_pb2 as pb
from ragway.v1 import retriever_pb2_grpc as pb_grpc


def target_builds(stub: pb_grpc.RetrieverStub, timeout_s: float = 30) -> list[str]:
    """The builds an incremental update must reach: live, and the candidate if any."""
    live = stub.DescribeBuild(pb.DescribeBuildRequest(build="live"), timeout=timeout_s)
    targets = [live.build_id]
    try:
        candidate = stub.DescribeBuild(
            pb.DescribeBuildRequest(build="candidate"), timeout=timeout_s
        )
    except grpc.RpcError as exc:
        if exc.code() != grpc.StatusCode.NOT_FOUND:
            raise
    else:
        if candidate.build_id not in targets:
            targets.append(candidate.build_id)
    return targets
