"""asyncio Redis clients whose pools never hand out a connection the server has closed.

A pool checks a connection before it lends it: one with something to read (a reply
left over, or the end of a socket the server closed) is reconnected first. redis-py
8.1 skips that check whenever "maintenance notifications" are enabled on the pool,
since then a readable socket may only hold a pushed notice; and on RESP3, its default
protocol, every pool enables them ("auto") even where the server refuses them, as
Valkey and Redis OSS do (they are a Redis Cloud/Enterprise feature, notices before a
failover or a shard move). The pool then lends dead connections, and its connections
retry nothing: after a Redis restart the first command on each connection that sat
idle across it failed with "Connection closed by server", a 503 store_unavailable on
the first POST /v1/runs once Redis was back (redis/redis-py#4252, fixed upstream
after 8.1.0). With the notices off the check runs again and every connection the
restart closed is replaced, not used.

No retries instead: a command that failed after it was sent may have run (a run
created, an event appended), and running it again would duplicate it.
"""

from __future__ import annotations

import redis.asyncio as redis
from redis.maint_notifications import MaintNotificationsConfig


def no_maintenance_notices() -> MaintNotificationsConfig:
    """The pool setting that keeps the check on lent connections (see the module)."""
    return MaintNotificationsConfig(enabled=False)


def bounded_client(
    url: str,
    *,
    max_connections: int,
    wait_s: float,
    socket_timeout_s: float,
    connect_timeout_s: float,
    client_name: str | None = None,
) -> redis.Redis:
    """A client on a fixed pool that callers queue on, up to ``wait_s`` for a free
    connection (then ``ConnectionError``): a burst waits instead of opening one each."""
    return redis.Redis.from_pool(
        redis.BlockingConnectionPool.from_url(
            url,
            max_connections=max_connections,
            timeout=wait_s,
            socket_timeout=socket_timeout_s,
            socket_connect_timeout=connect_timeout_s,
            client_name=client_name,
            maint_notifications_config=no_maintenance_notices(),
        )
    )


def single_connection_client(
    url: str, *, socket_timeout_s: float, connect_timeout_s: float, client_name: str
) -> redis.Redis:
    """A client of one connection, for a loop that holds it (a blocking read)."""
    return redis.Redis.from_url(
        url,
        max_connections=1,
        socket_timeout=socket_timeout_s,
        socket_connect_timeout=connect_timeout_s,
        client_name=client_name,
        maint_notifications_config=no_maintenance_notices(),
    )
