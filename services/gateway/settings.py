"""The gateway's configuration, from ``RAGWAY_*`` environment variables."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from ragway.settings import DEFAULT_MAX_HEADER_BYTES, RedisClientSettings


class GatewaySettings(RedisClientSettings):
    gateway_host: str = "127.0.0.1"
    gateway_port: int = Field(default=8000, ge=0, le=65535)
    # A Redis call that gets no answer this long fails (a partition hung it forever).
    # Longer than the longest blocking read (1 s: runs/fanout.py, runs/queue.py).
    redis_socket_timeout_s: float = Field(default=5.0, ge=2.0, le=300)
    redis_connect_timeout_s: float = Field(default=2.0, gt=0, le=60)
    # The gateway's Redis connections (the event reader's own one aside; the rate
    # limiter has a pool of the same size); a call waits
    # for a free one up to redis_pool_wait_s, then fails (503). The run queue's blocking
    # read holds one. Long: under a burst (2,000 streams opening at once on a busy
    # core) a connection is held while the event loop gets round to its reply.
    redis_max_connections: int = Field(default=64, ge=4, le=10_000)
    redis_pool_wait_s: float = Field(default=30.0, gt=0, le=600)
    retriever_addr: str = "127.0.0.1:7101"
    generator_addr: str = "127.0.0.1:7102"
    api_keys_file: Path = Path("config/api-keys.yaml")

    # Budgets: the run's total, and the retrieval stage's share of it; the
    # generator gets what remains.
    run_budget_ms: int = Field(default=8000, ge=100, le=120_000)
    retrieval_budget_ms: int = Field(default=1500, ge=10, le=60_000)

    top_k: int = Field(default=6, ge=1, le=50)
    candidate_depth: int = Field(default=50, ge=1, le=1000)
    # Bound on the evidence handed to the generator, in (approximate) tokens.
    context_token_budget: int = Field(default=1500, ge=100, le=32_000)
    max_question_chars: int = Field(default=4000, ge=1, le=100_000)
    max_body_bytes: int = Field(default=64 * 1024, ge=1024)
    # The request target and headers together (ragway/http_limits.py: 431 past it). Twice
    # it is the parser's bound on a request still arriving, so a slow sender cannot grow it
    # either.
    max_header_bytes: int = Field(default=DEFAULT_MAX_HEADER_BYTES, ge=4096, le=1024 * 1024)

    # Rate limits a minute (services/gateway/ratelimit.py): per key unless its entry in
    # the key file says otherwise, and per tenant over all its keys.
    requests_per_minute: int = Field(default=1200, ge=1)
    runs_per_minute: int = Field(default=300, ge=1)
    tenant_requests_per_minute: int = Field(default=6000, ge=1)
    tenant_runs_per_minute: int = Field(default=1500, ge=1)
    # Event streams open at once (services/gateway/streams.py), over every replica.
    streams_per_key: int = Field(default=500, ge=1)
    streams_per_tenant: int = Field(default=2000, ge=1)

    executor_concurrency: int = Field(default=8, ge=1, le=256)
    # Whether this gateway process executes runs from the queue. False: it serves HTTP
    # only, and ``python -m services.gateway.executors`` processes execute the runs, so
    # the event loop that serves streams runs no executor (docs/performance.md).
    run_executors: bool = True
    # Runs waiting or executing, over all replicas; past it a new run is a 503 queue_full.
    max_queue_depth: int = Field(default=10_000, ge=1, le=10_000_000)
    # Calls to the retriever and generator: UNAVAILABLE is retried this many
    # times in all, with doubling backoff; after breaker_failures consecutive
    # failures a dependency is cut off for breaker_cooldown_s (503 meanwhile).
    grpc_attempts: int = Field(default=3, ge=1, le=10)
    grpc_backoff_s: float = Field(default=0.05, ge=0, le=10)
    breaker_failures: int = Field(default=5, ge=1, le=1000)
    breaker_cooldown_s: float = Field(default=10.0, gt=0, le=3600)
    # A run whose executor is silent this long is taken over by another replica;
    # live executors renew their lease every third of it.
    run_lease_s: float = Field(default=30.0, ge=0.3, le=3600)
    max_run_attempts: int = Field(default=3, ge=1, le=20)
    # Events and records outlive the run by these; then Redis expires them.
    event_retention_s: int = Field(default=24 * 3600, ge=60)
    record_retention_s: int = Field(default=7 * 24 * 3600, ge=60)
    idempotency_ttl_s: int = Field(default=24 * 3600, ge=60)
    # Conversations (follow-up questions): kept this long after their last turn,
    # and closed to new turns at these sizes (409: start a new conversation).
    conversation_ttl_s: int = Field(default=24 * 3600, ge=60, le=90 * 24 * 3600)
    conversation_max_turns: int = Field(default=50, ge=1, le=1000)
    conversation_max_chars: int = Field(default=100_000, ge=1000, le=10_000_000)
    # Stream fan-out (runs/fanout.py): events queued for one stream before its client,
    # not reading, is dropped (it resumes with Last-Event-ID); and events of a watched
    # run kept in memory for streams that join it late (older ones: one Redis read).
    stream_buffer_events: int = Field(default=256, ge=8, le=100_000)
    stream_recent_events: int = Field(default=1000, ge=0, le=100_000)
    # Feedback on answers (runs/feedback.py) is kept this long after it was last sent.
    feedback_retention_s: int = Field(default=30 * 24 * 3600, ge=60, le=366 * 24 * 3600)
    heartbeat_s: float = Field(default=15.0, gt=0, le=300)
    ask_timeout_s: float = Field(default=30.0, gt=0, le=600)
    # The evidence console at /console (docs/channels.md): the static page (html), the
    # Gradio app (gradio: `ragway up --console`; imports gradio), or none (off).
    console: Literal["html", "gradio", "off"] = "html"
    # The event loop and HTTP parser of the gateway (and executor) processes. uvloop is
    # a C implementation of asyncio's loop: many streams open sooner, while the runs a
    # process carries stay as many (the retriever and generator bound those;
    # docs/performance.md). The parser is httptools (C) with h11's bound on a head still
    # arriving (ragway/http_limits.py: bounded_httptools): many streams open sooner than
    # with h11 (pure Python), which stays a setting.
    event_loop: Literal["uvloop", "asyncio"] = "uvloop"
    http_parser: Literal["h11", "httptools"] = "httptools"
