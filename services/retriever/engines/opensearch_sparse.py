"""BM25 on an OpenSearch server: one index per knowledge build.

The index mirrors the embedded tantivy engine so that both rank alike (the
congruence tests hold them to the same ids in the same order):

* BM25 scores one field, ``content`` = title + section + text, analysed by
  ``ragway_english``: split on anything that is not a letter or digit, lowercase,
  Snowball English (Porter2) stemming, no stop words: tantivy's ``en_stem``.
  The stock ``english`` analyzer would also drop stop words and stem with
  Porter1, ranking differently from the embedded engine. ``title`` and
  ``section`` are indexed apart too (same analyzer), for queries that want them.
* The access scope is the ``filter`` clause of the same ``bool`` query: filters
  do not score and are applied before the top-k is taken, so a chunk the caller
  may not see never takes a place in it.
* One shard by default: BM25 statistics are then those of the whole build, as
  in the embedded engine. With more shards the search asks for
  ``dfs_query_then_fetch`` so that scores still use global statistics.

* ``replace_documents`` swaps documents' chunks in one bulk request (the stale
  chunks' deletes and the new chunks) with one refresh, as the embedded engine
  does in one commit.
* ``document_chunks`` reads a document's chunks back within its tenant, so
  UpdateAccess can rewrite their groups or status without the text (fetch and
  reindex under the same ``_id``), as on the embedded engine.

Lucene's BM25 leaves out tantivy's constant (k1 + 1) factor, so scores differ
by that factor while rankings agree. Writes refresh the index before they
return: a search after an upsert sees it, as with the embedded engine.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from opensearchpy import OpenSearch, helpers

from services.retriever.engines.payload import chunk_from_payload, chunk_payload
from services.retriever.engines.tantivy_sparse import sanitize_query
from services.retriever.model import AccessScope, Candidate, ChunkRecord, Status, by_tenant

ANALYZER = "ragway_english"
_KEYWORDS = ("chunk_id", "document_id", "tenant", "access_groups", "status")
# OpenSearch's default max_result_window; the embedded engine reads as many.
_MAX_DOCUMENT_CHUNKS = 10_000


def index_body(*, shards: int, replicas: int) -> dict[str, Any]:
    text = {"type": "text", "analyzer": ANALYZER}
    return {
        "settings": {
            "index": {"number_of_shards": shards, "number_of_replicas": replicas},
            "analysis": {
                "tokenizer": {
                    "ragway_words": {"type": "pattern", "pattern": r"[^\p{L}\p{N}]+"},
                },
                "filter": {
                    "ragway_stem": {"type": "stemmer", "language": "porter2"},
                    # tantivy's en_stem drops tokens of 40 bytes or more.
                    "ragway_long": {"type": "length", "max": 39},
                },
                "analyzer": {
                    ANALYZER: {
                        "type": "custom",
                        "tokenizer": "ragway_words",
                        "filter": ["ragway_long", "lowercase", "ragway_stem"],
                    }
                },
            },
        },
        "mappings": {
            "dynamic": "strict",
            # content is derived from title, section and text: not kept twice.
            "_source": {"excludes": ["content"]},
            "properties": {
                **{name: {"type": "keyword"} for name in _KEYWORDS},
                "effective_from": {"type": "long"},
                "effective_to": {"type": "long"},
                "version": {"type": "keyword", "index": False},
                "url": {"type": "keyword", "index": False},
                "title": text,
                "section": text,
                "text": {"type": "text", "analyzer": ANALYZER},
                "content": text,
            },
        },
    }


class OpenSearchSparseIndex:
    def __init__(
        self, client: OpenSearch, index: str, *, shards: int = 1, replicas: int = 0
    ) -> None:
        self._client = client
        self._index = index
        self._search_type = "dfs_query_then_fetch" if shards > 1 else "query_then_fetch"
        if not client.indices.exists(index=index):
            # A concurrent creator (another replica) wins the race harmlessly.
            client.indices.create(
                index=index, body=index_body(shards=shards, replicas=replicas), ignore=400
            )
            client.cluster.health(index=index, wait_for_status="yellow")

    @property
    def index_name(self) -> str:
        return self._index

    def upsert(self, chunks: Sequence[ChunkRecord]) -> None:
        if not chunks:
            return
        # raise_on_error (the default) turns any rejected document into an
        # exception naming it: nothing accepted is silently lost.
        helpers.bulk(self._client, self._actions(chunks), refresh=True, chunk_size=500)

    def replace_documents(
        self, documents: Sequence[tuple[str, str]], chunks: Sequence[ChunkRecord]
    ) -> None:
        """Every chunk of each (tenant, document id) out, ``chunks`` in: the stale
        chunks' deletes and the new chunks in one bulk request with one refresh.

        A delete-by-query (refreshed) and then a bulk upsert (refreshed) left a refresh
        in between in which searches found neither version. The index's own periodic
        refresh can still fall inside the bulk request, a far shorter window. A
        chunk deleted by someone else meanwhile fails the request (the caller
        retries), as any rejected document does.
        """
        stale = self._chunk_ids(documents)
        if stale is None:  # more chunks than one search reads: the two steps
            for tenant, document_id in documents:
                self.delete_documents(tenant, [document_id])
            self.upsert(chunks)
            return
        fresh = {doc_id(c) for c in chunks}
        actions: list[dict[str, Any]] = [
            {"_op_type": "delete", "_index": self._index, "_id": i} for i in stale - fresh
        ]
        actions += self._actions(chunks)
        if actions:
            helpers.bulk(self._client, actions, refresh=True, chunk_size=500)

    def _chunk_ids(self, documents: Sequence[tuple[str, str]]) -> set[str] | None:
        """The stored ``_id`` of every chunk of the documents, or None past one search."""
        grouped = by_tenant(documents)
        ids: set[str] = set()
        for tenant, document_ids in grouped.items():
            body = {
                "size": _MAX_DOCUMENT_CHUNKS,
                "_source": False,
                "query": {
                    "bool": {
                        "filter": [
                            {"term": {"tenant": tenant}},
                            {"terms": {"document_id": document_ids}},
                        ]
                    }
                },
            }
            hits = self._client.search(index=self._index, body=body)["hits"]["hits"]
            if len(hits) >= _MAX_DOCUMENT_CHUNKS:
                return None
            ids.update(hit["_id"] for hit in hits)
        return ids

    def delete_documents(self, tenant: str, document_ids: Sequence[str]) -> int:
        if not document_ids:
            return 0
        body = {
            "query": {
                "bool": {
                    "filter": [
                        {"term": {"tenant": tenant}},
                        {"terms": {"document_id": list(document_ids)}},
                    ]
                }
            }
        }
        reply = self._client.delete_by_query(
            index=self._index, body=body, refresh=True, conflicts="proceed"
        )
        return int(reply["deleted"])

    def search(self, query: str, scope: AccessScope, limit: int) -> list[Candidate]:
        words = sanitize_query(query)
        if not words or limit <= 0:
            return []
        body = {
            "size": limit,
            "track_total_hits": False,
            "query": {
                "bool": {
                    "must": [{"match": {"content": {"query": words}}}],
                    "filter": scope_filter(scope),
                }
            },
        }
        reply = self._client.search(index=self._index, body=body, search_type=self._search_type)
        return [
            Candidate(
                chunk=chunk_from_payload(hit["_source"]), score=float(hit["_score"]), rank=rank
            )
            for rank, hit in enumerate(reply["hits"]["hits"], start=1)
        ]

    def count(self) -> int:
        return int(self._client.count(index=self._index)["count"])

    def document_chunks(self, tenant: str, document_id: str) -> list[ChunkRecord]:
        """Every stored chunk of one document in one tenant (for metadata-only rewrites).

        ``_source`` holds every field but the derived ``content``, which
        ``upsert`` derives again, so re-upserting these rewrites them whole.
        """
        body = {
            "size": _MAX_DOCUMENT_CHUNKS,
            "sort": [{"chunk_id": "asc"}],
            "query": {
                "bool": {
                    "filter": [
                        {"term": {"tenant": tenant}},
                        {"term": {"document_id": document_id}},
                    ]
                }
            },
        }
        reply = self._client.search(index=self._index, body=body)
        return [chunk_from_payload(hit["_source"]) for hit in reply["hits"]["hits"]]

    def close(self) -> None:
        """The client belongs to the factory that opened this index; nothing to release."""

    def _actions(self, chunks: Sequence[ChunkRecord]) -> Iterator[dict[str, Any]]:
        for c in chunks:
            source = chunk_payload(c)
            source["content"] = f"{c.title}\n{c.section}\n{c.text}"
            # Under "_source": the helper would read a top-level "version" as metadata.
            yield {"_op_type": "index", "_index": self._index, "_id": doc_id(c), "_source": source}


def doc_id(chunk: ChunkRecord) -> str:
    """The stored ``_id``: tenant and chunk id, since chunk ids may repeat across tenants."""
    return f"{chunk.tenant}\x1f{chunk.chunk_id}"


def scope_filter(scope: AccessScope) -> list[dict[str, Any]]:
    return [
        {"term": {"tenant": scope.tenant}},
        {"terms": {"access_groups": sorted(scope.groups)}},
        {"term": {"status": Status.CURRENT.value}},
        {"range": {"effective_from": {"lte": scope.as_of}}},
        {"range": {"effective_to": {"gt": scope.as_of}}},
    ]


def swap_alias(client: OpenSearch, alias: str, index: str) -> None:
    """Point ``alias`` at ``index`` alone, in one atomic ``_aliases`` call."""
    actions: list[dict[str, Any]] = []
    if client.indices.exists_alias(name=alias):
        for current in client.indices.get_alias(name=alias):
            if current != index:
                actions.append({"remove": {"index": current, "alias": alias}})
    actions.append({"add": {"index": index, "alias": alias}})
    client.indices.update_aliases(body={"actions": actions})
