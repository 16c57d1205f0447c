"""The retriever's configuration, from ``RAGWAY_*`` environment variables."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr

from ragway.settings import RedisClientSettings
from services.retriever.rerank import PrecisionSetting


class RetrieverSettings(RedisClientSettings):
    retriever_listen: str = "127.0.0.1:7101"
    # Where knowledge builds live. Embedded engines: this process is their only
    # reader and writer (a shared catalog does not share their files).
    index_dir: Path = Path("var/index")
    # Where the build catalog (aliases, manifests, promotion history) lives:
    # "file" under index_dir, for one retriever process; "redis" at redis_url,
    # shared by every replica, so a promotion reaches all of them and a restarted
    # replica keeps `live` (docs/deployment.md#shared-build-state).
    catalog_store: Literal["file", "redis"] = "file"
    catalog_redis_prefix: str = Field(default="ragway:catalog:", min_length=1, max_length=100)
    # Each catalog call to Redis; a search that cannot reach it serves the alias it last read.
    catalog_redis_timeout_s: float = Field(default=2.0, gt=0, le=60)
    # A reranker artifact folder (``ragway train reranker``) or a CrossEncoder folder.
    reranker_path: Path | None = None
    # Depth and input length set the reranker's cost on a small CPU; the defaults
    # are the best point under a 150 ms p95 retrieval budget (docs/evaluation.md).
    rerank_depth: int = Field(default=5, ge=1, le=200)
    rerank_max_length: int | None = Field(default=None, ge=16, le=512)
    # Per-tenant adapted artifacts (``ragway train reranker --from-folder``), as
    # JSON: {"northwind": "/models/reranker-northwind-…"}. A tenant listed here
    # is reranked by its own model; the others by reranker_path, if set.
    reranker_tenant_paths: dict[str, Path] = Field(default_factory=dict)
    # Artifacts loaded at start-up that rerank only the searches that name them
    # (SearchRequest.reranker; a canary path's ``reranker``), as a JSON list of
    # folders. Each default above can be named too (services/retriever/shelf.py).
    reranker_offered_paths: list[Path] = Field(default_factory=list, max_length=16)
    # onnxruntime intra-op threads of the reranker (unset: inference_threads).
    # On two shared cores one thread per search beats two contending ones.
    rerank_threads: int | None = Field(default=None, ge=1, le=64)
    # Which of the artifact's networks runs: int8 (dynamically quantised, about
    # twice as fast on two cores with VNNI, ranks like fp32: docs/evaluation.md),
    # fp32, or auto: int8 where the CPU has an 8-bit dot product, else fp32, which
    # is then as fast and ranks a little better (ragway.embedding.int8_pays).
    rerank_precision: PrecisionSetting = "auto"
    # Pairs are sorted by length and scored in batches of this size (0: one
    # padded batch), so short passages do not run at the longest one's length.
    # 1: no padding at all, and on one thread batching saves next to nothing;
    # each pair's int8 score then no longer depends on its batch's activation
    # scale, which kept fp32's hit@1 at depth 5 (`make bench-rerank`).
    rerank_batch_size: int = Field(default=1, ge=0, le=256)
    # Skip the default rerank when the fused first passage leads the second by
    # at least this RRF margin (unset: always rerank). Fit it on a tuning QA set
    # with `ragway eval qa-retrieval --fit-skip` (docs/evaluation.md). A search may
    # give its own (SearchRequest.rerank_skip_margin: a canary path's).
    rerank_skip_margin: float | None = Field(default=None, ge=-1.0, le=1.0)
    # The reranker's share of the head's final score: 1.0 is its own order; below,
    # its scores are blended with the fused ones (each min-max scaled over the
    # head). Fit it with `ragway eval qa-retrieval --fit-weight` on a tuning set.
    # A search may give its own (SearchRequest.rerank_weight: a canary path's).
    rerank_weight: float = Field(default=1.0, ge=0.0, le=1.0)
    rrf_k: int = Field(default=60, ge=1, le=1000)
    default_top_k: int = Field(default=8, ge=1, le=100)
    default_candidate_depth: int = Field(default=50, ge=1, le=1000)
    default_budget_ms: int = Field(default=1000, ge=10, le=60_000)
    # Embed every chunk's answer units at write time and keep them with its dense
    # vector, so the generator need not embed them per question (the cold-run
    # latency); costs about as much embedding again at write time (docs/ingestion.md).
    unit_vectors: bool = True
    # A hybrid search also fuses its candidates ranked by their best answer unit's
    # cosine to the question, from the vectors above (no model runs at search time):
    # the page whose one sentence answers a paraphrase comes first more often
    # (docs/retrieval.md#unit-fusion). Needs unit_vectors at write time.
    unit_fusion: bool = True
    search_threads: int = Field(default=4, ge=1, le=64)
    # Writes (webhook upserts, bulk loads, access changes) and build administration
    # run on their own threads with their own embedder, so a bulk build cannot queue
    # live searches behind it; write_inference_threads are its onnxruntime threads.
    write_threads: int = Field(default=2, ge=1, le=64)
    write_inference_threads: int = Field(default=1, ge=1, le=64)
    # While no search is in flight and none ended for write_quiet_s, a live write's
    # batches embed on the bulk session instead (bulk_inference_threads, every CPU by
    # default): the cores a search would need are idle (services/retriever/activity.py).
    write_widen_when_quiet: bool = True
    write_quiet_s: float = Field(default=1.0, ge=0.0, le=3600.0)
    # Bulk loads (Upsert with origin BULK: `ragway builds create`) embed with a third
    # session of this many intra-op threads (unset: every CPU), since a bulk build is
    # throughput work that should use the machine; query-time embedding keeps its own
    # session and inference_threads, live writes theirs (docs/ingestion.md#ingestion-throughput).
    bulk_inference_threads: int | None = Field(default=None, ge=1, le=64)
    # Vectors the write path computed, kept by content in index_dir/embedding-cache.sqlite
    # (ragway/embedding_cache.py), so a new build of mostly unchanged documents embeds
    # only what changed. At most this many vectors (about 1.6 KB each on disk); 0: off.
    embedding_cache_rows: int = Field(default=500_000, ge=0, le=50_000_000)
    # The vectors of texts searches embedded, kept in memory by model and text
    # (services/retriever/query_vectors.py), so a question asked again is not embedded
    # again. At most this many (about 2 KB each); 0: off.
    query_vector_cache_entries: int = Field(default=4096, ge=0, le=1_000_000)
    shutdown_grace_s: float = Field(default=5.0, ge=0, le=120)

    # Search backends (docs/deployment.md). The defaults are the embedded engines
    # under index_dir; "opensearch" and "qdrant" use the servers named below.
    sparse_backend: Literal["embedded", "opensearch"] = "embedded"
    dense_backend: Literal["embedded", "qdrant"] = "embedded"
    opensearch_url: str = "http://127.0.0.1:9200"
    opensearch_username: str | None = None
    opensearch_password: SecretStr | None = None
    # Index per build: <prefix><build id>; aliases: <prefix><alias>.
    opensearch_index_prefix: str = Field(default="ragway-", pattern=r"^[a-z0-9][a-z0-9_-]*$")
    opensearch_shards: int = Field(default=1, ge=1, le=64)
    opensearch_replicas: int = Field(default=0, ge=0, le=16)
    opensearch_timeout_s: float = Field(default=30.0, gt=0, le=600)
    # A Qdrant server URL ("http://qdrant:6333"), or "local" for qdrant-client's
    # in-process local mode with its data under index_dir/qdrant-local.
    qdrant_url: str = "local"
    qdrant_api_key: SecretStr | None = None
    qdrant_prefer_grpc: bool = True
    qdrant_grpc_port: int = Field(default=6334, ge=1, le=65535)
    qdrant_collection_prefix: str = Field(default="ragway-", pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
    qdrant_timeout_s: float = Field(default=30.0, gt=0, le=600)
    # The build the live alias points at when a fresh retriever finds none. With
    # server backends every replica must agree on it (compose and k8s set it);
    # unset, the embedded default creates a timestamped build as before.
    initial_build_id: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")

    def bulk_threads(self) -> int:
        """The bulk embedder's intra-op threads: the setting, or every CPU."""
        return self.bulk_inference_threads or os.cpu_count() or 1
