"""A dict-backed ``DeliveryStore`` and a scripted retriever stub for the ingest tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc

from ragway.v1 import retriever_pb2 as pb


class NoRuns:
    """The runs' Redis as ragway.redaction reads it: no run read any document. Records
    the documents whose runs were looked up."""

    def __init__(self) -> None:
        self.looked_up: list[str] = []

    def zremrangebyscore(self, key: str, low: object, high: object) -> int:
        self.looked_up.append(key)
        return 0

    def zrange(self, key: str, start: int, end: int, withscores: bool = False) -> list[object]:
        return []


class FakeStore:
    """The ``DeliveryStore`` methods apply.py and the worker use, in memory."""

    def __init__(self) -> None:
        self.client = NoRuns()
        self.records: dict[str, dict[str, str]] = {}
        self.bodies: dict[str, bytes] = {}
        self.locks: dict[str, str] = {}
        # Lease expiry per document on a clock the test moves (``now``); a lock set
        # directly in ``locks`` without one never expires.
        self.now = 0.0
        self.lock_expiry: dict[str, float] = {}
        self.applied: dict[str, float] = {}
        self.dead: list[tuple[str, str, str, int]] = []

    def add(self, delivery_id: str, payload: dict[str, Any], *, state: str = "queued") -> None:
        doc = payload["document"]
        self.records[delivery_id] = {
            "state": state,
            "attempts": "0",
            "signed_at": "1000",
            "document": f"{doc['tenant']}/{doc['id']}",
        }
        self.bodies[delivery_id] = json.dumps(payload).encode()

    def get(self, delivery_id: str) -> dict[str, str] | None:
        record = self.records.get(delivery_id)
        return dict(record) if record is not None else None

    def body(self, delivery_id: str) -> bytes | None:
        return self.bodies.get(delivery_id)

    def set_state(self, delivery_id: str, state: str, **extra: str | int | float) -> None:
        self.records[delivery_id] |= {"state": state, **{k: str(v) for k, v in extra.items()}}

    def start_attempt(self, delivery_id: str) -> int:
        attempts = int(self.records[delivery_id]["attempts"]) + 1
        self.set_state(delivery_id, "running", attempts=attempts)
        return attempts

    def count_lost_worker(self, delivery_id: str) -> int:
        lost = int(self.records[delivery_id].get("lost_workers", "0")) + 1
        self.records[delivery_id]["lost_workers"] = str(lost)
        return lost

    def lock_document(self, doc_key: str, owner: str, ttl_s: int) -> bool:
        holder = self.locks.get(doc_key)
        if holder not in (None, owner) and self.lock_expiry.get(doc_key, float("inf")) > self.now:
            return False
        self.locks[doc_key] = owner
        self.lock_expiry[doc_key] = self.now + ttl_s
        return True

    def unlock_document(self, doc_key: str, owner: str) -> None:
        if self.locks.get(doc_key) == owner:
            del self.locks[doc_key]
            self.lock_expiry.pop(doc_key, None)

    def newest_applied(self, doc_key: str) -> float | None:
        return self.applied.get(doc_key)

    def advance(self, doc_key: str, occurred_at: float) -> bool:
        if self.applied.get(doc_key, occurred_at) > occurred_at:
            return False
        self.applied[doc_key] = occurred_at
        return True

    def dead_letter(self, delivery_id: str, document: str, error: str, attempts: int) -> None:
        self.set_state(delivery_id, "dead", error=error)
        self.dead.append((delivery_id, document, error, attempts))


class RpcFailure(grpc.RpcError):  # type: ignore[misc]  # grpc ships no types
    def __init__(self, code: grpc.StatusCode, details: str = "") -> None:
        self._code, self._details = code, details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


@dataclass
class FakeRetriever:
    """Answers DescribeBuild from ``builds`` and records every write; ``fail`` raises on writes;
    ``on_write`` is called with the method's name as each write arrives (a slow call, say)."""

    builds: dict[str, str] = field(default_factory=lambda: {"live": "b-live"})
    fail: RpcFailure | None = None
    on_write: Callable[[str], None] | None = None
    calls: list[tuple[str, Any]] = field(default_factory=list)

    def DescribeBuild(self, request: pb.DescribeBuildRequest, timeout: float) -> Any:
        if request.build not in self.builds:
            raise RpcFailure(grpc.StatusCode.NOT_FOUND, f"no build or alias {request.build!r}")
        return pb.DescribeBuildResponse(build_id=self.builds[request.build])

    def _write(self, name: str, request: Any) -> Any:
        if self.on_write is not None:
            self.on_write(name)
        if self.fail is not None:
            raise self.fail
        self.calls.append((name, request))
        return None

    def Delete(self, request: pb.DeleteRequest, timeout: float) -> Any:
        return self._write("Delete", request)

    def Upsert(self, request: pb.UpsertRequest, timeout: float) -> Any:
        return self._write("Upsert", request)

    def UpdateAccess(self, request: pb.UpdateAccessRequest, timeout: float) -> Any:
        return self._write("UpdateAccess", request)


def upserted(doc_id: str = "doc-1", *, occurred_at: float = 100.0, **doc: Any) -> dict[str, Any]:
    return {
        "event": "document.upserted",
        "occurred_at": occurred_at,
        "document": {
            "id": doc_id,
            "tenant": "acme",
            "groups": ["staff"],
            "content": "# Hotels\n\nHotels cost up to 180 euros per night.\n",
        }
        | doc,
    }
