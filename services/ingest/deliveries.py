"""Webhook deliveries in Redis: the idempotency record, states, dead letters.

    ingest:delivery:<id>   hash  body, digest, state, attempts, lost_workers, error,
                                 timestamps (TTL)
    ingest:docseq:<t>\\x1f<doc>  the occurred_at of the newest change applied to a document
    ingest:lock:<t>\\x1f<doc>    a short lease: one worker applies one document at a time
    ingest:dead            stream of dead letters (delivery id, document, error, attempts)

States: received → queued → running → done | superseded | dead. A delivery is
recorded (SET NX) before it is queued, so a replay finds it; a replay that
finds it still 'received' (the API died before queueing) queues it again.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import redis

PREFIX = "ingest:delivery:"
DEAD = "ingest:dead"
DEAD_MAXLEN = 100_000
TERMINAL = ("done", "superseded", "dead")

# Set the document's sequence to `new` only if it is not older than the stored one.
_ADVANCE = """
local cur = redis.call('GET', KEYS[1])
if cur and tonumber(cur) > tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
"""

_LEASE = """
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
"""

# received → queued, unless a worker already moved the delivery on.
_QUEUED = """
if redis.call('HGET', KEYS[1], 'state') == 'received' then
  redis.call('HSET', KEYS[1], 'state', 'queued', 'updated_at', ARGV[1])
  return 1
end
return 0
"""


@dataclass(frozen=True)
class Recorded:
    created: bool
    state: str
    same_body: bool


def digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


class DeliveryStore:
    def __init__(self, client: redis.Redis, *, ttl_s: int) -> None:
        self._r = client
        self._ttl = ttl_s
        self._advance = client.register_script(_ADVANCE)
        self._lease = client.register_script(_LEASE)
        self._queued = client.register_script(_QUEUED)

    @property
    def client(self) -> redis.Redis:
        """The Redis these records live in: the gateway's, where runs are redacted too."""
        return self._r

    def record(
        self, delivery_id: str, body: bytes, *, signed_at: int, event: str, doc: str
    ) -> Recorded:
        key = PREFIX + delivery_id
        now = time.time()
        body_digest = digest(body)
        fields: dict[str, bytes | str | int | float] = {
            "body": body,
            "digest": body_digest,
            "state": "received",
            "attempts": 0,
            "event": event,
            "document": doc,
            "signed_at": signed_at,
            "received_at": now,
            "updated_at": now,
        }
        pipe = self._r.pipeline(transaction=True)
        pipe.hsetnx(key, "digest", body_digest)
        pipe.hmget(key, "digest", "state")
        created, (stored_digest, state) = pipe.execute()
        if created:
            self._r.hset(key, mapping=fields)  # type: ignore[arg-type]
            self._r.expire(key, self._ttl)
            return Recorded(True, "received", True)
        return Recorded(
            False,
            (state or b"received").decode(),
            stored_digest.decode() == body_digest,
        )

    def get(self, delivery_id: str) -> dict[str, str] | None:
        raw: dict[bytes, bytes] = self._r.hgetall(PREFIX + delivery_id)  # type: ignore[assignment]
        if not raw:
            return None
        return {k.decode(): v.decode(errors="replace") for k, v in raw.items() if k != b"body"}

    def body(self, delivery_id: str) -> bytes | None:
        value = self._r.hget(PREFIX + delivery_id, "body")
        return value if isinstance(value, bytes) else None

    def set_state(self, delivery_id: str, state: str, **extra: str | int | float) -> None:
        self._r.hset(PREFIX + delivery_id, mapping=_state_fields(state, extra))  # type: ignore[arg-type]

    def mark_queued(self, delivery_id: str) -> None:
        """After the task was sent; a fast worker may have marked it running already."""
        self._queued(keys=[PREFIX + delivery_id], args=[time.time()])

    def forget(self, delivery_id: str) -> None:
        """Drop a record the API could not queue, so the sender's retry is a new delivery."""
        self._r.delete(PREFIX + delivery_id)

    def start_attempt(self, delivery_id: str) -> int:
        attempts = int(self._r.hincrby(PREFIX + delivery_id, "attempts", 1))
        self.set_state(delivery_id, "running")
        return attempts

    def count_lost_worker(self, delivery_id: str) -> int:
        """Note that a worker died while applying the delivery; how many have so far."""
        return int(self._r.hincrby(PREFIX + delivery_id, "lost_workers", 1))

    def lock_document(self, doc_key: str, owner: str, ttl_s: int) -> bool:
        """Take the document's lease, or renew it when ``owner`` already holds it.

        The owner is the delivery id: a redelivery of a delivery whose worker
        died takes over its lease instead of waiting for it to expire.
        """
        return bool(self._lease(keys=[f"ingest:lock:{doc_key}"], args=[owner, ttl_s]))

    def unlock_document(self, doc_key: str, owner: str) -> None:
        key = f"ingest:lock:{doc_key}"
        if self._r.get(key) == owner.encode():
            self._r.delete(key)

    def newest_applied(self, doc_key: str) -> float | None:
        value = self._r.get(f"ingest:docseq:{doc_key}")
        return float(value) if isinstance(value, bytes) else None

    def advance(self, doc_key: str, occurred_at: float) -> bool:
        return bool(self._advance(keys=[f"ingest:docseq:{doc_key}"], args=[repr(occurred_at)]))

    def dead_letter(self, delivery_id: str, document: str, error: str, attempts: int) -> None:
        # One transaction: a reader never sees the delivery dead without its dead letter,
        # and a worker that dies here leaves neither half. Written as two commands, a
        # test read state "dead" and an empty dead-letter stream in between.
        pipe = self._r.pipeline(transaction=True)
        fields = _state_fields("dead", {"error": error})
        pipe.hset(PREFIX + delivery_id, mapping=fields)  # type: ignore[arg-type]
        pipe.xadd(
            DEAD,
            {
                "delivery_id": delivery_id,
                "document": document,
                "error": error,
                "attempts": attempts,
                "at": time.time(),
            },
            maxlen=DEAD_MAXLEN,
            approximate=True,
        )
        pipe.execute()

    def dead_letters(self, count: int = 100) -> list[dict[str, str]]:
        entries: list[tuple[bytes, dict[bytes, bytes]]] = self._r.xrevrange(  # type: ignore[assignment]
            DEAD, count=count
        )
        return [
            {"id": eid.decode(), **{k.decode(): v.decode() for k, v in fields.items()}}
            for eid, fields in entries
        ]


def _state_fields(state: str, extra: dict[str, str | int | float]) -> dict[str, str | int | float]:
    """A delivery record's fields for a new state: the state, when, and any extra."""
    return {"state": state, "updated_at": time.time(), **extra}
