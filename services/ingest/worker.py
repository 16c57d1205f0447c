"""Celery workers: ``celery -A services.ingest.worker worker``.

At-least-once delivery (INFRA.md): a task is acknowledged only after it ran
(acks_late), a task whose worker process died is put back
(reject_on_worker_lost), a worker reserves one task at a time, and a message
left unacknowledged by a dead worker comes back after visibility_timeout.
Tasks carry only the delivery id; the body waits in Redis. The task is thin:
``run_delivery`` (a plain function: states, retries, dead letters) calls
services.ingest.apply, which does the work.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache
from typing import Any

import redis
from celery import Celery, Task, signals

from ragway import telemetry
from ragway.logs import configure
from ragway.service_auth import insecure_channel
from ragway.v1 import retriever_pb2_grpc as pb_grpc
from services.ingest.apply import PermanentError, TransientError, process
from services.ingest.deliveries import TERMINAL, DeliveryStore
from services.ingest.settings import IngestSettings

log = logging.getLogger(__name__)
TASK = "ingest.apply_delivery"


def create_celery(settings: IngestSettings) -> Celery:
    app = Celery("ragway-ingest", broker=settings.celery_broker_url)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        broker_connection_retry_on_startup=True,
        broker_transport_options={
            "visibility_timeout": settings.visibility_timeout_s,
            "unacked_restore_interval": 2,  # kombu >= 5.7 names
            "unacked_restore_throttle": 1,
        },
    )
    return app


settings = IngestSettings()
app = create_celery(settings)


@signals.setup_logging.connect
def _structured_logs(**_: Any) -> None:
    """The same log lines as every other ragway process (not Celery's own)."""
    configure("ingest-worker", settings.log_level, settings.log_format)


@signals.worker_process_init.connect
def _tracing(**_: Any) -> None:
    """Tracing per pool process: the exporter's thread would not survive the fork."""
    telemetry.configure("ragway-ingest-worker")


@cache
def _deps() -> tuple[DeliveryStore, pb_grpc.RetrieverStub]:
    """One Redis client and one gRPC channel per worker process, made on first use."""
    store = DeliveryStore(redis.Redis.from_url(settings.redis_url), ttl_s=settings.delivery_ttl_s)
    channel = insecure_channel(settings.retriever_addr, settings.service_token_value())
    return store, pb_grpc.RetrieverStub(channel)


def backoff_s(retries: int, settings: IngestSettings = settings) -> float:
    return float(min(settings.retry_backoff_max_s, settings.retry_backoff_s * 2**retries))


@dataclass(frozen=True)
class RetryLater:
    """A transient failure the task should retry after ``countdown_s``."""

    error: TransientError
    countdown_s: float


def run_delivery(
    store: DeliveryStore,
    stub: pb_grpc.RetrieverStub,
    delivery_id: str,
    *,
    retries: int,
    settings: IngestSettings,
) -> str | RetryLater:
    """One attempt at a delivery: its final state, or when to retry. ``retries``: made so far.

    Records the attempt, the outcome or the dead letter in the store; the task
    only turns a ``RetryLater`` into a Celery retry.
    """
    record = store.get(delivery_id)
    if record is None or record["state"] in TERMINAL:
        return "skipped"  # a redelivery of finished work, or an expired record
    if record["state"] == "running":
        # Still running, yet handed out again: the worker applying it died
        # (a crash, the OOM killer), perhaps because of this very document.
        # Celery's retry count does not see that, so it is counted here, and
        # a document that keeps killing workers stops coming back.
        losses = store.count_lost_worker(delivery_id)
        if losses > settings.task_max_worker_losses:
            attempts = int(record["attempts"])
            message = (
                f"gave up after {attempts} attempts: the worker was lost {losses} times "
                "while applying this delivery"
            )
            store.dead_letter(delivery_id, record["document"], message, attempts)
            log.error("dead letter", extra={"delivery_id": delivery_id, "error": message})
            return "dead"
        log.warning("worker lost; trying again", extra={"delivery_id": delivery_id})
    attempts = store.start_attempt(delivery_id)
    try:
        outcome = process(store, stub, delivery_id, timeout_s=settings.retriever_timeout_s)
    except PermanentError as exc:
        store.dead_letter(delivery_id, record["document"], str(exc), attempts)
        log.error("dead letter", extra={"delivery_id": delivery_id, "error": str(exc)})
        return "dead"
    except TransientError as exc:
        if retries >= settings.task_max_retries:
            store.dead_letter(
                delivery_id,
                record["document"],
                f"gave up after {attempts} attempts: {exc}",
                attempts,
            )
            log.error("dead letter", extra={"delivery_id": delivery_id, "error": str(exc)})
            return "dead"
        store.set_state(delivery_id, "retrying", error=str(exc))
        log.warning(
            "transient failure; retrying", extra={"delivery_id": delivery_id, "error": str(exc)}
        )
        return RetryLater(exc, backoff_s(retries, settings))
    except redis.RedisError:
        raise  # the store itself is away: nothing can be recorded; the broker redelivers
    except Exception as exc:  # a bug, or a parser blowing up on this document
        # Uncaught, the task would fail, Celery would acknowledge it, and the
        # delivery would stay 'running' for ever. The error goes with the dead letter.
        message = f"unexpected {type(exc).__name__}: {exc}"
        store.dead_letter(delivery_id, record["document"], message, attempts)
        log.error("dead letter", extra={"delivery_id": delivery_id, "error": message})
        return "dead"
    if outcome.state != "skipped":
        store.set_state(
            delivery_id, outcome.state, builds=",".join(outcome.builds), chunks=outcome.chunks
        )
    log.info("applied", extra={"delivery_id": delivery_id, "state": outcome.state})
    return outcome.state


@app.task(name=TASK, bind=True, max_retries=settings.task_max_retries)
def apply_delivery(self: Task[Any, Any], delivery_id: str) -> str:
    store, stub = _deps()
    result = run_delivery(store, stub, delivery_id, retries=self.request.retries, settings=settings)
    if isinstance(result, RetryLater):
        raise self.retry(exc=result.error, countdown=result.countdown_s) from None
    return result
