"""Self-supervised adaptation never puts one tenant's document in another's training data."""

from __future__ import annotations

from typing import Any

import pytest

from ragway.kb import Defaults, discover, parse_document
from ragway.v1 import retriever_pb2 as pb
from ragway_tools.training import adapt, pseudo
from tests.conftest import FIXTURES

DOCS = [parse_document(p, r, Defaults()) for p, r in discover([FIXTURES / "kb"])]


class LeakyRetriever:
    """A retriever stub whose every answer mixes in the other tenant's chunks.

    Both tenants have a chunk with the same id (``*/expense-policy#...``) and
    the same wording, so only the tenant and document checks can tell them apart.
    """

    def __init__(self) -> None:
        self.requests: list[pb.SearchRequest] = []
        self.everything = [(d, c) for d in DOCS for c in d.chunks]

    def Search(self, request: pb.SearchRequest, timeout: float) -> pb.SearchResponse:
        self.requests.append(request)
        return pb.SearchResponse(
            hits=[
                pb.SearchHit(chunk_id=c.chunk_id, document_id=d.document_id, text=c.text)
                for d, c in self.everything
            ]
        )


def texts_of(tenant: str) -> set[str]:
    corpus = adapt.tenant_corpora(DOCS)[tenant]
    return {pseudo.render(c, k) for c in corpus.chunks.values() for k in pseudo.KINDS}


def test_corpora_are_per_tenant_and_current_only() -> None:
    corpora = adapt.tenant_corpora(DOCS)
    assert set(corpora) == {"acme", "globex"}
    acme = corpora["acme"]
    assert all(c.tenant == "acme" for c in acme.chunks.values())
    assert not any(c.document_id == "acme/expense-policy-2019" for c in acme.chunks.values())
    assert acme.documents_sha256 != corpora["globex"].documents_sha256


@pytest.mark.parametrize("tenant", ["acme", "globex"])
def test_groups_hold_only_the_tenants_own_passages(tenant: str) -> None:
    corpora = adapt.tenant_corpora(DOCS)
    corpus = corpora[tenant]
    queries = pseudo.generate(list(corpus.chunks.values()))
    stub: Any = LeakyRetriever()
    mined = adapt.mine(stub, corpus, queries, depth=20)
    # Every search was scoped to the tenant and its own access groups.
    assert {r.tenant for r in stub.requests} == {tenant}
    assert all(set(r.access_groups) == set(corpus.access_groups) for r in stub.requests)
    assert all(r.rerank == pb.RERANK_MODE_OFF for r in stub.requests)
    # The other tenant's hits were dropped and counted, not trained on.
    assert mined.foreign_hits > 0
    own = texts_of(tenant)
    groups = adapt.build_groups(corpus, queries, mined)
    if len(corpus.chunks) == 1:
        # A one-chunk tenant has nothing of its own to contrast with, and borrows
        # no negatives from the other tenant: it gets no training groups at all.
        assert groups == []
        return
    assert groups
    for g in groups:
        assert g.positive in own
        assert set(g.negatives) <= own, g.query_id
    others = set().union(*(texts_of(t) for t in corpora if t != tenant)) - own
    assert not others & {p for g in groups for p in (g.positive, *g.negatives)}


def test_a_query_of_another_tenant_is_refused() -> None:
    corpora = adapt.tenant_corpora(DOCS)
    stray = pseudo.PseudoQuery("globex", "x", "heading", "hotel limits")
    stub: Any = LeakyRetriever()
    with pytest.raises(ValueError, match="mined in 'acme'"):
        adapt.mine(stub, corpora["acme"], [stray], depth=5)


def test_the_training_record_names_the_tenant_and_its_checksums() -> None:
    corpus = adapt.tenant_corpora(DOCS)["acme"]
    queries = pseudo.generate(list(corpus.chunks.values()))
    train, heldout = pseudo.split(queries, 0.3)
    checksum, record = adapt.data_record(
        corpus, {"kind": "folder", "paths": ["kb"]}, train, heldout,
        heldout_fraction=0.3, negatives_depth=20, foreign_hits=0,
    )  # fmt: skip
    assert record["tenant"] == "acme"
    assert record["documents_sha256"] == corpus.documents_sha256
    assert record["pseudo_queries"]["train"] == len(train)
    assert len(checksum) == 64
    # Different training queries, different checksum.
    other, _ = adapt.data_record(
        corpus, {}, train[:-1], heldout, heldout_fraction=0.3, negatives_depth=20, foreign_hits=0
    )
    assert other != checksum


def test_held_out_mrr_compares_fused_and_reranked_orders() -> None:
    items = [
        adapt.HeldOutItem("q1", ("a", "b", "c"), 1),
        adapt.HeldOutItem("q2", ("d", "e"), 0),
    ]
    assert adapt.fused_mrr(items) == pytest.approx((1 / 2 + 1) / 2)

    def prefers_b_and_d(pairs: Any) -> list[float]:
        return [1.0 if p in ("b", "d") else 0.0 for _, p in pairs]

    assert adapt.reranked_mrr(items, prefers_b_and_d) == 1.0
