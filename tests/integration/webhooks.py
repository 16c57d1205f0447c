"""Sending signed webhooks and waiting for their deliveries, for the ingestion tests."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import httpx

from ragway.v1 import retriever_pb2 as pb
from ragway.v1 import retriever_pb2_grpc as pb_grpc
from ragway_tools.channels import service_channel
from services.ingest.deliveries import TERMINAL, DeliveryStore
from services.ingest.signing import sign

PATH = "/v1/webhooks/documents"
WAIT_S = 120.0  # a ceiling for slow shared machines, not a speed assertion


def send(
    client: httpx.Client,
    secret: str,
    payload: dict[str, Any] | bytes,
    *,
    delivery_id: str | None = None,
    timestamp: int | None = None,
    signature: str | None = None,
    extra: dict[str, str] | None = None,
) -> httpx.Response:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    ts = str(int(time.time()) if timestamp is None else timestamp)
    delivery = delivery_id or uuid.uuid4().hex
    headers = {
        "Content-Type": "application/json",
        "X-Ragway-Delivery": delivery,
        "X-Ragway-Timestamp": ts,
        "X-Ragway-Signature": (
            signature if signature is not None else sign(secret, ts, delivery, body)
        ),
    }
    return client.post(PATH, content=body, headers=headers | (extra or {}))


def upserted(
    doc_id: str, content: str, *, tenant: str = "initech", **fields: Any
) -> dict[str, Any]:
    document = {"id": doc_id, "tenant": tenant, "groups": ["staff"], "content": content}
    return {"event": "document.upserted", "document": document | fields}


def deleted(doc_id: str, *, tenant: str = "initech") -> dict[str, Any]:
    return {"event": "document.deleted", "document": {"id": doc_id, "tenant": tenant}}


def wait_done(store: DeliveryStore, delivery_id: str) -> dict[str, str]:
    """The delivery's record once it reached a terminal state."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        record = store.get(delivery_id)
        if record is not None and record["state"] in TERMINAL:
            return record
        time.sleep(0.1)
    raise AssertionError(f"delivery {delivery_id} did not finish: {store.get(delivery_id)}")


def wait_state(store: DeliveryStore, delivery_id: str, state: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        record = store.get(delivery_id)
        if record is not None and record["state"] == state:
            return
        time.sleep(0.05)
    raise AssertionError(f"delivery {delivery_id} never reached {state}: {store.get(delivery_id)}")


def search(
    addr: str,
    query: str,
    *,
    tenant: str = "initech",
    groups: tuple[str, ...] = ("staff",),
    build: str = "",
) -> list[pb.SearchHit]:
    with service_channel(addr) as channel:
        reply = pb_grpc.RetrieverStub(channel).Search(
            pb.SearchRequest(
                query=query,
                tenant=tenant,
                access_groups=groups,
                top_k=10,
                build=build,
                budget_ms=10_000,
            ),
            timeout=30,
        )
        return list(reply.hits)


def chunk_count(addr: str, build: str = "") -> int:
    with service_channel(addr) as channel:
        reply = pb_grpc.RetrieverStub(channel).DescribeBuild(
            pb.DescribeBuildRequest(build=build), timeout=30
        )
        return int(reply.chunk_count)
