"""The generator's configuration, from ``RAGWAY_*`` environment variables."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from ragway.settings import ServiceSettings


class GeneratorSettings(ServiceSettings):
    generator_listen: str = "127.0.0.1:7102"
    generator_backend: str = Field(default="extractive", pattern=r"^extractive$")
    # Evidence threshold of the extractive backend: under it, the answer is a
    # refusal. Chosen on the demo QA set (docs/generation.md).
    min_support: float = Field(default=0.44, ge=0.0, le=1.0)
    max_sentences: int = Field(default=3, ge=1, le=10)
    default_max_output_tokens: int = Field(default=256, ge=16, le=4096)
    max_passages: int = Field(default=50, ge=1, le=200)
    shutdown_grace_s: float = Field(default=5.0, ge=0, le=120)
    # Fault injection for load and cancellation tests: a pause before every
    # delta, whatever the backend. Always 0 in production.
    fault_delta_delay_ms: int = Field(default=0, ge=0, le=60_000)
    # Run-time switchable faults for load tests (services/generator/faults.py):
    # unset, no file is ever read; set, it overrides the delay above while present.
    fault_file: Path | None = None
