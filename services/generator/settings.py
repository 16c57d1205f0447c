"""The generator's configuration, from ``RAGWAY_*`` environment variables."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, model_validator

from ragway.settings import ServiceSettings
from services.generator.answerability import DEFAULT_MODEL as DEFAULT_ANSWERABILITY
from services.generator.backends.llm import NumberPolicy
from services.generator.prompts import DEFAULT_PROMPT
from services.generator.unit_ranker import DEFAULT_RANKER as DEFAULT_UNIT_RANKER


class GeneratorSettings(ServiceSettings):
    generator_listen: str = "127.0.0.1:7102"
    # extractive: sentences copied from the passages (default, no model).
    # openai: any OpenAI-compatible chat-completions endpoint (RAGWAY_LLM_BASE_URL).
    # llama: a GGUF model in-process through llama-cpp-python (the [llm] extra).
    generator_backend: Literal["extractive", "openai", "llama"] = "extractive"
    # Evidence floor of the extractive backend: under it, the answer is a
    # refusal whatever else holds (docs/generation.md). Keep it equal to
    # ExtractiveConfig's: the answerability model was trained above that floor.
    min_support: float = Field(default=0.30, ge=0.0, le=1.0)
    # Above that floor, a calibrated model decides whether the evidence answers
    # (services/generator/answerability.py); "off" leaves the floor alone.
    answerability_model: Path | Literal["off"] = DEFAULT_ANSWERABILITY
    # Which unit each part of a question is answered with, when the evidence
    # answers (services/generator/unit_ranker.py); "off" orders them by support.
    unit_ranker: Path | Literal["off"] = DEFAULT_UNIT_RANKER
    max_sentences: int = Field(default=3, ge=1, le=10)
    # Units per part of a multi-part question (ExtractiveConfig.part_sentences).
    part_sentences: int = Field(default=2, ge=1, le=10)
    # The extractive answer's deltas: 0, one per quoted sentence with its citation;
    # N, pieces of N words (a typing pace; each piece is one more event end to end).
    extractive_delta_words: int = Field(default=0, ge=0, le=1000)
    default_max_output_tokens: int = Field(default=256, ge=16, le=4096)
    max_passages: int = Field(default=50, ge=1, le=200)
    shutdown_grace_s: float = Field(default=5.0, ge=0, le=120)
    # Fault injection for load and cancellation tests: a pause before every
    # delta, whatever the backend. Always 0 in production.
    fault_delta_delay_ms: int = Field(default=0, ge=0, le=60_000)
    # Run-time switchable faults for load tests (services/generator/faults.py):
    # unset, no file is ever read; set, it overrides the delay above while present.
    fault_file: Path | None = None

    # -- LLM backends (openai, llama); docs/generators.md ------------------
    llm_base_url: str = Field(default="", pattern=r"^(https?://\S+)?$")
    llm_model: str = ""
    # The key, or better a file holding it (a mounted secret), which wins.
    llm_api_key: SecretStr | None = None
    llm_api_key_file: Path | None = None
    llm_connect_timeout_s: float = Field(default=2.0, gt=0, le=60)
    llm_first_token_timeout_s: float = Field(default=4.0, gt=0, le=300)
    llm_total_timeout_s: float = Field(default=20.0, gt=0, le=600)
    # Kept out of the LLM's share of the gRPC deadline for the extractive fallback.
    llm_fallback_reserve_s: float = Field(default=0.5, ge=0, le=10)
    llm_attempts: int = Field(default=3, ge=1, le=10)
    llm_backoff_s: float = Field(default=0.25, ge=0, le=30)
    llm_max_backoff_s: float = Field(default=4.0, ge=0, le=120)
    llm_max_output_tokens: int = Field(default=256, ge=16, le=4096)
    llm_max_sentences: int = Field(default=4, ge=1, le=20)
    # Passages shown to the model (the best-supported ones); the time to first
    # token of a CPU model grows with the prompt.
    llm_max_prompt_passages: int = Field(default=3, ge=1, le=50)
    llm_temperature: float = Field(default=0.0, ge=0, le=2)
    llm_seed: int | None = None
    # llama.cpp / vLLM extension; not sent when unset (OpenAI rejects it). The
    # llama backend uses 1.2 when unset: SmolLM2 repeats itself without it.
    llm_repeat_penalty: float | None = Field(default=None, gt=0, le=3)
    # Further request fields for a particular server, as JSON: '{"top_k": 40}'.
    llm_extra_body: dict[str, Any] = Field(default_factory=dict)
    llm_number_policy: NumberPolicy = NumberPolicy.FALLBACK
    llm_evidence_gate: bool = True
    # An uncited sentence is attributed to the passage holding this share of
    # its content terms; above 1 turns attribution off.
    llm_attribute_coverage: float = Field(default=0.8, ge=0.5, le=1.01)
    llm_prompt_file: Path = DEFAULT_PROMPT
    # llama: the GGUF file; unset = the packaged SmolLM2-135M-Instruct.
    llm_model_path: Path | None = None
    llm_context_tokens: int = Field(default=4096, ge=512, le=131_072)

    @model_validator(mode="after")
    def _backend_needs(self) -> GeneratorSettings:
        if self.generator_backend == "openai":
            missing = [
                env
                for env, value in (
                    ("RAGWAY_LLM_BASE_URL", self.llm_base_url),
                    ("RAGWAY_LLM_MODEL", self.llm_model),
                )
                if not value
            ]
            if missing:
                raise ValueError(f"RAGWAY_GENERATOR_BACKEND=openai needs {' and '.join(missing)}")
        if self.llm_first_token_timeout_s > self.llm_total_timeout_s:
            raise ValueError(
                "RAGWAY_LLM_FIRST_TOKEN_TIMEOUT_S must not exceed RAGWAY_LLM_TOTAL_TIMEOUT_S"
            )
        return self

    def llm_key(self) -> str | None:
        """The API key: from the file when one is named (stripped), else the variable."""
        if self.llm_api_key_file is not None:
            try:
                return self.llm_api_key_file.read_text().strip() or None
            except OSError as exc:
                raise ValueError(
                    f"RAGWAY_LLM_API_KEY_FILE {self.llm_api_key_file}: {exc.strerror}"
                ) from exc
        return self.llm_api_key.get_secret_value() if self.llm_api_key else None
