"""The generator's typed settings for the LLM backends."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from services.generator.backends.llm import NumberPolicy
from services.generator.settings import GeneratorSettings


def test_the_backend_is_chosen_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGWAY_GENERATOR_BACKEND", "llama")
    monkeypatch.setenv("RAGWAY_LLM_NUMBER_POLICY", "drop_sentence")
    monkeypatch.setenv("RAGWAY_LLM_EXTRA_BODY", '{"top_k": 40}')
    s = GeneratorSettings()
    assert s.generator_backend == "llama"
    assert s.llm_number_policy is NumberPolicy.DROP_SENTENCE
    assert s.llm_extra_body == {"top_k": 40}


def test_an_unknown_backend_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGWAY_GENERATOR_BACKEND", "gpt")
    with pytest.raises(ValidationError, match="extractive', 'openai' or 'llama'"):
        GeneratorSettings()


def test_the_openai_backend_names_what_it_lacks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGWAY_GENERATOR_BACKEND", "openai")
    with pytest.raises(ValidationError, match="needs RAGWAY_LLM_BASE_URL and RAGWAY_LLM_MODEL"):
        GeneratorSettings()


def test_the_first_token_budget_fits_in_the_total(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGWAY_LLM_FIRST_TOKEN_TIMEOUT_S", "30")
    with pytest.raises(ValidationError, match="must not exceed RAGWAY_LLM_TOTAL_TIMEOUT_S"):
        GeneratorSettings()


def test_the_api_key_file_wins_and_is_never_shown(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("RAGWAY_LLM_API_KEY", "sk-from-env")
    assert GeneratorSettings().llm_key() == "sk-from-env"
    assert "sk-from-env" not in repr(GeneratorSettings())
    secret = tmp_path / "key"
    secret.write_text("sk-from-file\n")
    monkeypatch.setenv("RAGWAY_LLM_API_KEY_FILE", str(secret))
    assert GeneratorSettings().llm_key() == "sk-from-file"
    monkeypatch.setenv("RAGWAY_LLM_API_KEY_FILE", str(tmp_path / "missing"))
    with pytest.raises(ValueError, match=r"RAGWAY_LLM_API_KEY_FILE .*missing: No such file"):
        GeneratorSettings().llm_key()


def test_the_answerability_model_is_the_packaged_one_a_file_or_off(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from services.generator.answerability import DEFAULT_MODEL, AnswerabilityError
    from services.generator.server import build_backend

    assert GeneratorSettings().answerability_model == DEFAULT_MODEL
    monkeypatch.setenv("RAGWAY_ANSWERABILITY_MODEL", "off")
    assert build_backend(GeneratorSettings()).answerability is None  # type: ignore[attr-defined]
    broken = tmp_path / "model.json"
    broken.write_text("{}")
    monkeypatch.setenv("RAGWAY_ANSWERABILITY_MODEL", str(broken))
    with pytest.raises(AnswerabilityError, match=f"cannot read answerability model {broken}"):
        build_backend(GeneratorSettings())
