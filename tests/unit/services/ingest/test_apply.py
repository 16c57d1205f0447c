"""services/ingest/apply.py with a dict-backed store and a scripted retriever stub."""

from __future__ import annotations

from typing import cast

import grpc
import pytest

from ragway import redaction
from ragway.v1 import retriever_pb2 as pb
from ragway.v1 import retriever_pb2_grpc as pb_grpc
from services.ingest.apply import (
    LOCK_TTL_S,
    Outcome,
    PermanentError,
    TransientError,
    doc_key,
    process,
)
from services.ingest.deliveries import DeliveryStore
from tests.unit.services.ingest.fakes import FakeRetriever, FakeStore, RpcFailure, upserted


def run(store: FakeStore, retriever: FakeRetriever, delivery_id: str = "d-1") -> Outcome:
    return process(
        cast(DeliveryStore, store),
        cast(pb_grpc.RetrieverStub, retriever),
        delivery_id,
        timeout_s=5,
    )


def test_an_upsert_replaces_the_document_in_live_and_candidate() -> None:
    store, retriever = FakeStore(), FakeRetriever(builds={"live": "b-1", "candidate": "b-2"})
    store.add("d-1", upserted())
    outcome = run(store, retriever)
    assert outcome.state == "done" and outcome.builds == ("b-1", "b-2") and outcome.chunks >= 1
    # One call a build: the retriever replaces the old version in the same write,
    # so searches find the document the whole time (no Delete first).
    assert [(name, r.build) for name, r in retriever.calls] == [
        ("Upsert", "b-1"),
        ("Upsert", "b-2"),
    ]
    assert all(r.origin == pb.WRITE_ORIGIN_INCREMENTAL for _, r in retriever.calls)
    assert all(r.replace_documents for _, r in retriever.calls)
    chunks = retriever.calls[0][1].chunks
    assert {(c.tenant, c.document_id) for c in chunks} == {("acme", "doc-1")}
    assert store.applied == {doc_key("acme", "doc-1"): 100.0} and not store.locks


def test_a_delete_and_an_access_change_reach_the_live_build() -> None:
    store, retriever = FakeStore(), FakeRetriever()
    store.add("d-1", {"event": "document.deleted", "document": {"id": "doc-1", "tenant": "acme"}})
    assert run(store, retriever) == Outcome("done", ("b-live",), 0)
    store.add(
        "d-2",
        {
            "event": "document.access_changed",
            "occurred_at": 2000,
            "document": {"id": "doc-1", "tenant": "acme", "status": "deprecated"},
        },
    )
    run(store, retriever, "d-2")
    (_, delete), (_, access) = retriever.calls
    assert list(delete.document_ids) == ["doc-1"] and delete.tenant == "acme"
    assert access.status == pb.DOCUMENT_STATUS_DEPRECATED and not access.access_groups


def test_an_older_change_than_the_one_applied_is_superseded() -> None:
    store, retriever = FakeStore(), FakeRetriever()
    store.applied[doc_key("acme", "doc-1")] = 500.0
    store.add("d-1", upserted(occurred_at=100.0))
    assert run(store, retriever).state == "superseded"
    assert not retriever.calls and not store.locks


def test_finished_or_missing_deliveries_are_skipped() -> None:
    store, retriever = FakeStore(), FakeRetriever()
    store.add("d-1", upserted(), state="done")
    assert run(store, retriever).state == "skipped"
    assert run(store, retriever, "never-recorded").state == "skipped"
    assert not retriever.calls


def test_a_document_held_by_another_delivery_is_transient() -> None:
    store, retriever = FakeStore(), FakeRetriever()
    store.add("d-1", upserted())
    store.locks[doc_key("acme", "doc-1")] = "d-other"
    with pytest.raises(TransientError, match="another delivery"):
        run(store, retriever)


@pytest.mark.parametrize(
    ("code", "error"),
    [
        (grpc.StatusCode.UNAVAILABLE, TransientError),
        (grpc.StatusCode.DEADLINE_EXCEEDED, TransientError),
        (grpc.StatusCode.INVALID_ARGUMENT, PermanentError),
        (grpc.StatusCode.UNIMPLEMENTED, PermanentError),
    ],
)
def test_retriever_errors_are_sorted_into_transient_and_permanent(
    code: grpc.StatusCode, error: type[Exception]
) -> None:
    store, retriever = FakeStore(), FakeRetriever(fail=RpcFailure(code, "boom"))
    store.add("d-1", upserted())
    with pytest.raises(error, match=f"retriever: {code.name}: boom"):
        run(store, retriever)
    assert not store.locks and not store.applied  # the lease is returned, nothing advanced


def test_a_body_that_no_longer_validates_is_permanent() -> None:
    store, retriever = FakeStore(), FakeRetriever()
    store.add("d-1", upserted())
    store.bodies["d-1"] = b'{"event": "document.upserted"}'
    with pytest.raises(PermanentError, match="no longer validates"):
        run(store, retriever)


def test_a_long_apply_renews_the_document_lease_so_no_other_delivery_takes_it() -> None:
    # Regression (issue 16): the 300 s lease was taken once and never renewed, so a
    # document whose writes outlasted it could be applied by a second delivery at once.
    store = FakeStore()
    key = doc_key("acme", "doc-1")
    taken: list[bool] = []

    def slow(name: str) -> None:  # each write takes 200 s: past the lease by the second
        store.now += 200
        taken.append(store.lock_document(key, "d-other", LOCK_TTL_S))

    retriever = FakeRetriever(builds={"live": "b-1", "candidate": "b-2"}, on_write=slow)
    store.add("d-1", upserted())
    assert run(store, retriever).state == "done"
    assert taken == [False, False]
    assert not store.locks  # returned at the end


def test_a_delivery_that_lost_its_document_lease_stops_writing() -> None:
    # A worker frozen past its lease while another delivery took the document over
    # must not go on writing the document under it.
    store = FakeStore()
    key = doc_key("acme", "doc-1")

    def stolen(name: str) -> None:
        if name == "Upsert":
            store.now += LOCK_TTL_S + 1
            assert store.lock_document(key, "d-other", LOCK_TTL_S)

    retriever = FakeRetriever(builds={"live": "b-1", "candidate": "b-2"}, on_write=stolen)
    store.add("d-1", upserted())
    with pytest.raises(TransientError, match="lease"):
        run(store, retriever)
    assert [(name, r.build) for name, r in retriever.calls] == [("Upsert", "b-1")]
    assert store.locks == {key: "d-other"} and not store.applied


def test_a_delete_and_an_access_change_redact_the_runs_that_read_the_document_an_upsert_not() -> (
    None
):
    store, retriever = FakeStore(), FakeRetriever()
    store.add("d-1", upserted())
    run(store, retriever)
    assert store.client.looked_up == []
    store.add(
        "d-2",
        {
            "event": "document.deleted",
            "occurred_at": 2000,
            "document": {"id": "doc-1", "tenant": "acme"},
        },
    )
    run(store, retriever, "d-2")
    store.add(
        "d-3",
        {
            "event": "document.access_changed",
            "occurred_at": 3000,
            "document": {"id": "doc-1", "tenant": "acme", "groups": ["hr"]},
        },
    )
    run(store, retriever, "d-3")
    assert store.client.looked_up == [redaction.cites_key("acme", "doc-1")] * 2


def test_a_long_document_replaces_its_old_version_with_its_first_call_only() -> None:
    # Later calls add the rest of its chunks: replacing again would drop the first 64.
    store, retriever = FakeStore(), FakeRetriever()
    paragraph = " ".join(
        f"Hotels in city {i} cost up to {100 + i} euros per night." for i in range(30)
    )
    sections = "\n\n".join(f"## Region {n}\n\n{paragraph}" for n in range(80))
    store.add("d-1", upserted(content=f"# Hotels\n\n{sections}\n"))
    outcome = run(store, retriever)
    assert outcome.chunks > 64
    upserts = [r for name, r in retriever.calls if name == "Upsert"]
    assert len(upserts) >= 2 and [r.replace_documents for r in upserts] == [True] + [False] * (
        len(upserts) - 1
    )
    assert sum(len(r.chunks) for r in upserts) == outcome.chunks
