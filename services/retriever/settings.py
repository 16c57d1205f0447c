"""The retriever's configuration, from ``RAGWAY_*`` environment variables."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from ragway.settings import ServiceSettings


class RetrieverSettings(ServiceSettings):
    retriever_listen: str = "127.0.0.1:7101"
    # Where knowledge builds live; this process is their only reader and writer.
    index_dir: Path = Path("var/index")
    # A reranker artifact folder (``ragway train reranker``) or a CrossEncoder folder.
    reranker_path: Path | None = None
    # Depth and input length set the reranker's cost on a small CPU; the defaults
    # are the best point under a 150 ms p95 retrieval budget (docs/evaluation.md).
    rerank_depth: int = Field(default=20, ge=1, le=200)
    rerank_max_length: int | None = Field(default=None, ge=16, le=512)
    rrf_k: int = Field(default=60, ge=1, le=1000)
    default_top_k: int = Field(default=8, ge=1, le=100)
    default_candidate_depth: int = Field(default=50, ge=1, le=1000)
    default_budget_ms: int = Field(default=1000, ge=10, le=60_000)
    search_threads: int = Field(default=4, ge=1, le=64)
    shutdown_grace_s: float = Field(default=5.0, ge=0, le=120)
