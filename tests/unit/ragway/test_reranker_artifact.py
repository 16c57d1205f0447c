"""Passage clipping: the reranker's input ids are the same, only less text is tokenised."""

from __future__ import annotations

import pytest

from ragway.embedding import fp32_model_dir
from ragway.reranker_artifact import clip_words, encode, load_tokenizer

pytestmark = pytest.mark.models
LONG = " ".join(f"Section {i}: refunds, credits (and/or) re-issued invoices." for i in range(200))


def test_clip_words_keeps_the_text_up_to_the_nth_word() -> None:
    assert clip_words("one  two\nthree four", 3) == "one  two\nthree"
    assert clip_words("one two", 5) == "one two"
    assert clip_words("", 4) == ""


@pytest.mark.parametrize("max_length", [16, 64, 128])
def test_a_clipped_passage_gives_the_same_truncated_ids(max_length: int) -> None:
    tokenizer = load_tokenizer(fp32_model_dir(), max_length)
    query = "How are refunds issued?"
    clipped = clip_words(LONG, max_length)
    assert len(clipped) < len(LONG)
    whole = encode(tokenizer, [(query, LONG)])
    short = encode(tokenizer, [(query, clipped)])
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        assert short[name].tolist() == whole[name].tolist(), name
    assert whole["input_ids"].shape == (1, max_length)
