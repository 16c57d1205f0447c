"""Container health checks without curl or grpc_health_probe in the image.

    python -m ragway.healthcheck grpc 127.0.0.1:7101     # gRPC health: SERVING?
    python -m ragway.healthcheck http http://127.0.0.1:8000/readyz

Exit status 0 when healthy, 1 otherwise (with the reason on stderr), as
Docker's HEALTHCHECK and compose's ``healthcheck.test`` expect.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def check_grpc(addr: str, timeout_s: float = 3.0) -> str | None:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(addr) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=timeout_s
            )
        except grpc.RpcError as e:
            return f"{addr}: {e.code().name}"
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        return f"{addr}: {health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)}"
    return None


def check_http(url: str, timeout_s: float = 3.0) -> str | None:
    import httpx

    try:
        status = httpx.get(url, timeout=timeout_s).status_code
    except httpx.HTTPError as e:
        return f"{url}: {e!r}"
    return None if status == 200 else f"{url}: HTTP {status}"


def main(argv: Sequence[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("grpc", "http"):
        sys.stderr.write("usage: python -m ragway.healthcheck grpc HOST:PORT | http URL\n")
        return 2
    problem = check_grpc(argv[1]) if argv[0] == "grpc" else check_http(argv[1])
    if problem:
        sys.stderr.write(f"unhealthy: {problem}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
