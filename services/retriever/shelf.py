"""The reranker artifacts a retriever has loaded, and which one a search gets.

    search(tenant, named) ─▶ named?  ─ no ─▶ the tenant's own, else the shared one
                                     └ yes ─▶ offered? ─ no ─▶ UnknownRerankerError (NOT_FOUND)
                                               └ adapted on another tenant ─▶ the tenant's default

Three roles: the shared default (``RAGWAY_RERANKER_PATH``), each tenant's own
(``RAGWAY_RERANKER_TENANT_PATHS``), and artifacts that serve only when a search
names them (``RAGWAY_RERANKER_OFFERED_PATHS``): how a canary path tries a new
artifact on a sticky share of users instead of an operator editing the default.
All are loaded at start-up, so naming one never loads a network mid-search.

An artifact adapted on one tenant's documents (``artifact.json`` records the
tenant) never reranks another tenant's searches: as a tenant default it must be
that tenant's (checked at start-up), and named by a path it serves its own
tenant while every other tenant keeps its default. A path is global, so this
lets one path canary a tenant's adapted artifact without touching the others:
the blend weight and skip margin a search gives with the artifact it names were
fitted for that artifact, so a search it does not serve keeps the retriever's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from services.retriever.rerank import Reranker


class UnknownRerankerError(LookupError):
    """A search named an artifact version this retriever does not offer."""


class RerankerShelfError(ValueError):
    """Settings that would let an artifact rerank a tenant it was not made for."""


@dataclass(frozen=True, slots=True)
class Shelved:
    version: str  # artifact.json "version"; a CrossEncoder folder: its folder name
    reranker: Reranker
    tenant: str  # the tenant it was adapted on; "" = trained for any tenant
    role: str  # "shared", "tenant" or "offered"
    max_length: int
    created: str


class RerankerShelf:
    def __init__(
        self,
        shared: Shelved | None = None,
        tenants: Mapping[str, Shelved] | None = None,
        offered: Sequence[Shelved] = (),
    ) -> None:
        tenants = dict(tenants or {})
        if shared is not None and shared.tenant:
            raise RerankerShelfError(
                f"reranker {shared.version} was adapted on tenant {shared.tenant!r}'s "
                "documents; it cannot be the shared default (RAGWAY_RERANKER_PATH): give it "
                "to that tenant in RAGWAY_RERANKER_TENANT_PATHS"
            )
        for tenant, item in tenants.items():
            if item.tenant and item.tenant != tenant:
                raise RerankerShelfError(
                    f"RAGWAY_RERANKER_TENANT_PATHS gives tenant {tenant!r} the reranker "
                    f"{item.version}, adapted on tenant {item.tenant!r}'s documents"
                )
        self._shared = shared
        self._tenants = tenants
        self._by_version: dict[str, Shelved] = {}
        for item in [*([shared] if shared else []), *tenants.values(), *offered]:
            # The same artifact in two roles is one entry: the first role listed.
            self._by_version.setdefault(item.version, item)

    @property
    def shared(self) -> Reranker | None:
        return self._shared.reranker if self._shared else None

    def listed(self) -> list[Shelved]:
        return list(self._by_version.values())

    def announced(self) -> list[tuple[str, str, str]]:
        """(tenant, served model id, role) for each artifact, as the metrics show them:
        the shared default under tenant "*", each tenant's own, and each offered one
        under the tenant it was adapted on ("*": any tenant)."""
        out = [("*", self._shared.reranker.model_id, "shared")] if self._shared else []
        out += [(t, s.reranker.model_id, "tenant") for t, s in self._tenants.items()]
        out += [
            (s.tenant or "*", s.reranker.model_id, "offered")
            for s in self._by_version.values()
            if s.role == "offered"
        ]
        return out

    def default_for(self, tenant: str) -> Reranker | None:
        own = self._tenants.get(tenant)
        return own.reranker if own else self.shared

    def for_search(self, tenant: str, named: str = "") -> Reranker | None:
        """The reranker a search of ``tenant`` gets, the one it names or its default."""
        if not named:
            return self.default_for(tenant)
        item = self._by_version.get(named)
        if item is None:
            offered = ", ".join(sorted(self._by_version)) or "none"
            raise UnknownRerankerError(
                f"this retriever offers no reranker {named!r} (offered: {offered}); "
                "RAGWAY_RERANKER_OFFERED_PATHS lists the artifacts a search may name"
            )
        return item.reranker if _serves(item, tenant) else self.default_for(tenant)

    def serves_named(self, tenant: str, named: str) -> bool:
        """Whether the artifact a search of ``tenant`` names is the one that reranks it:
        false for one adapted on another tenant (that search keeps its default) and for
        one not offered."""
        item = self._by_version.get(named)
        return item is not None and _serves(item, tenant)


def _serves(item: Shelved, tenant: str) -> bool:
    """One rule for both: an artifact adapted on a tenant serves only that tenant."""
    return item.tenant in ("", tenant)
