"""Which reranker artifact a search gets: the shelf's rules, on stand-in rerankers.

The rule is about identities (which artifact, for which tenant), not about scores,
so the rerankers here only carry a model id; the real networks are served in
tests/integration/test_adapt_reranker.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from services.retriever.shelf import (
    RerankerShelf,
    RerankerShelfError,
    Shelved,
    UnknownRerankerError,
)


class Named:
    def __init__(self, model_id: str) -> None:
        self.model_id = model_id

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        return [float(len(p)) for p in passages]


def shelved(version: str, role: str, tenant: str = "") -> Shelved:
    return Shelved(version, Named(version), tenant, role, max_length=128, created="2026-12-03")


SHARED = shelved("reranker-scifact", "shared")
LUMEN = shelved("reranker-lumen-1", "tenant", tenant="lumen")
LUMEN_NEXT = shelved("reranker-lumen-2", "offered", tenant="lumen")
GENERAL_NEXT = shelved("reranker-general-2", "offered")


def shelf() -> RerankerShelf:
    return RerankerShelf(SHARED, {"lumen": LUMEN}, [LUMEN_NEXT, GENERAL_NEXT])


def model(shelf: RerankerShelf, tenant: str, named: str = "") -> str | None:
    chosen = shelf.for_search(tenant, named)
    return chosen.model_id if chosen else None


def test_without_a_name_a_tenant_gets_its_own_reranker_else_the_shared_one() -> None:
    s = shelf()
    assert model(s, "lumen") == "reranker-lumen-1"
    assert model(s, "northwind") == "reranker-scifact"
    assert model(RerankerShelf(), "northwind") is None


def test_a_named_artifact_serves_in_place_of_the_default() -> None:
    s = shelf()
    assert model(s, "northwind", "reranker-general-2") == "reranker-general-2"
    assert model(s, "lumen", "reranker-general-2") == "reranker-general-2"
    assert model(s, "lumen", "reranker-lumen-2") == "reranker-lumen-2"
    assert model(s, "lumen", "reranker-scifact") == "reranker-scifact"  # the defaults too


def test_an_artifact_adapted_on_one_tenant_never_reranks_another_tenant() -> None:
    s = shelf()
    # A path naming lumen's candidate is global: northwind keeps its own default.
    assert model(s, "northwind", "reranker-lumen-2") == "reranker-scifact"
    assert model(s, "northwind", "reranker-lumen-1") == "reranker-scifact"
    assert model(RerankerShelf(offered=[LUMEN_NEXT]), "northwind", "reranker-lumen-2") is None


def test_an_unknown_name_is_refused_with_what_is_offered() -> None:
    with pytest.raises(UnknownRerankerError, match=r"no reranker 'reranker-x'.*reranker-general-2"):
        shelf().for_search("lumen", "reranker-x")


def test_settings_giving_a_tenant_another_tenants_artifact_are_refused() -> None:
    with pytest.raises(
        RerankerShelfError, match=r"gives tenant 'northwind'.*adapted on tenant 'lumen'"
    ):
        RerankerShelf(tenants={"northwind": LUMEN})
    with pytest.raises(RerankerShelfError, match="cannot be the shared default"):
        RerankerShelf(shared=LUMEN)


def test_the_listing_names_each_artifact_once_in_its_first_role() -> None:
    again = shelved("reranker-lumen-1", "offered", tenant="lumen")
    listed = RerankerShelf(SHARED, {"lumen": LUMEN}, [again, GENERAL_NEXT]).listed()
    assert [(r.version, r.role) for r in listed] == [
        ("reranker-scifact", "shared"),
        ("reranker-lumen-1", "tenant"),
        ("reranker-general-2", "offered"),
    ]


def test_the_metrics_announce_every_artifact_with_its_role() -> None:
    # An offered artifact is announced too (it used to be missing from
    # ragway_retriever_reranker_info until a path named it), under the tenant it
    # was adapted on; one offered and also a default is announced once, as the default.
    again = shelved("reranker-lumen-1", "offered", tenant="lumen")
    s = RerankerShelf(SHARED, {"lumen": LUMEN}, [LUMEN_NEXT, GENERAL_NEXT, again])
    assert s.announced() == [
        ("*", "reranker-scifact", "shared"),
        ("lumen", "reranker-lumen-1", "tenant"),
        ("lumen", "reranker-lumen-2", "offered"),
        ("*", "reranker-general-2", "offered"),
    ]
    assert RerankerShelf().announced() == []
