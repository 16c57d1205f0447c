"""Passage clipping: the reranker's input ids are the same, only less text is tokenised."""

from __future__ import annotations

import pytest

from ragway.embedding import fp32_model_dir
from ragway.reranker_artifact import clip_words, encode, load_tokenizer, passage_text, wordy

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


PLANS = """| Plan       | Price per seat (monthly) | Price per seat (billed annually) | Storage          | Message history | Max members | Huddle participants |
|------------|--------------------------|----------------------------------|------------------|-----------------|-------------|---------------------|
| Free       | $0                       | $0                               | 5 GB per workspace | Last 90 days  | 10          | 2                   |
| Starter    | $4.50                    | $3.80                            | 20 GB per seat   | Unlimited       | 150         | 12                  |
| Business   | $11.75                   | $9.90                            | 100 GB per seat  | Unlimited       | 2,000       | 50                  |
| Enterprise | Custom                   | Custom                           | 1 TB per seat    | Unlimited       | Unlimited   | 200                 |
"""  # noqa: E501


def test_a_tables_delimiter_row_and_padding_do_not_reach_the_models() -> None:
    text = passage_text("Plans and pricing", PLANS, "Compare plans")
    assert "---" not in text
    assert "  " not in text
    assert "| Business | $11.75 | $9.90 | 100 GB per seat | Unlimited | 2,000 | 50 |" in text
    # Only the delimiter row is gone: the heading line, the header and four rows.
    assert len(text.splitlines()) == 6


def test_every_row_of_a_wide_table_fits_the_embedders_window() -> None:
    # Before, the delimiter row took 120 of the 256 input tokens and the vector of
    # the plans table saw its header and first row only.
    tokenizer = load_tokenizer(fp32_model_dir(), 512)
    ids = tokenizer.encode(passage_text("Plans and pricing", PLANS, "Compare plans")).tokens
    assert "enterprise" in ids[:256]


def test_emphasis_marks_go_and_a_line_with_words_stays() -> None:
    assert wordy("storage is **pooled** and __shared__") == "storage is pooled and shared"
    assert wordy("3 - 4 --- x | y") == "3 - 4 --- x | y"
    assert wordy("a ** b") == "a ** b"
