"""Passage clipping: the reranker's input ids are the same, only less text is tokenised."""

from __future__ import annotations

import pytest

from ragway.embedding import fp32_model_dir
from ragway.reranker_artifact import (
    PairEncoder,
    best_window,
    clip_words,
    encode,
    encode_by_length,
    load_tokenizer,
    passage_text,
    wordy,
)

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


def test_a_terse_delimiter_row_does_not_reach_the_models_either() -> None:
    text = passage_text("Limits", "| Plan | Seats |\n|:-|-:|\n| Pro | 50 |")
    assert text.splitlines() == ["Limits", "| Plan | Seats |", "| Pro | 50 |"]


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


PASSAGES = [
    LONG,
    "Short one.",
    "",
    "Ünïcödé façade — naïve café, 3.5 kg/m², e-mail: ops@example.com (v2.1.0)",
    "word " * 500,
    passage_text("Plans and pricing", PLANS, "Compare plans"),
    "Refunds\n\n\tare issued   within 5\u20137 business days; see https://example.com/refunds?id=42.",
]
QUERIES = ["How are refunds issued?", "", "café price per seat (monthly) for Business plan"]


@pytest.mark.parametrize("max_length", [16, 64, 192])
def test_the_pair_encoder_gives_the_tokenizers_own_ids(max_length: int) -> None:
    tokenizer = load_tokenizer(fp32_model_dir(), max_length)
    encoder = PairEncoder(tokenizer, max_length)
    for query in QUERIES:
        got = encoder.encode(query, PASSAGES)
        for passage, (ids, types) in zip(PASSAGES, got, strict=True):
            want = tokenizer.encode(query, passage)
            assert ids == want.ids, (query, passage[:40])
            assert types == want.type_ids, (query, passage[:40])


@pytest.mark.parametrize("batch_size", [0, 1, 2, 8])
def test_the_pair_encoders_batches_equal_the_tokenizers(batch_size: int) -> None:
    tokenizer = load_tokenizer(fp32_model_dir(), 64)
    encoder = PairEncoder(tokenizer, 64)
    query = QUERIES[0]
    pairs = [(query, p) for p in PASSAGES]
    if batch_size == 0:
        want = [(list(range(len(pairs))), encode(tokenizer, pairs))]
    else:
        want = encode_by_length(tokenizer, pairs, batch_size)
    got = encoder.batches(query, PASSAGES, batch_size)
    assert [idx for idx, _ in got] == [idx for idx, _ in want]
    for (_, a), (_, b) in zip(got, want, strict=True):
        for name in ("input_ids", "attention_mask", "token_type_ids"):
            assert a[name].tolist() == b[name].tolist(), name
            assert a[name].dtype == b[name].dtype


def test_a_passage_is_tokenised_once_and_the_cache_stays_bounded() -> None:
    encoder = PairEncoder(load_tokenizer(fp32_model_dir(), 64), 64, cache_size=3)
    first = encoder.encode("one query", PASSAGES[:3])
    assert (encoder.hits, encoder.misses) == (0, 3)
    # Another query over the same passages reuses their tokens, and its pairs are its own.
    second = encoder.encode("another query", PASSAGES[:3])
    assert (encoder.hits, encoder.misses) == (3, 3)
    assert [ids[-5:] for ids, _ in first[:2]] == [ids[-5:] for ids, _ in second[:2]]
    assert first[0][0] != second[0][0]
    encoder.encode("q", PASSAGES[3:5])  # two new passages push the two oldest out
    assert len(encoder._cache) == 3
    encoder.encode("q", PASSAGES[2:3])
    assert encoder.hits == 4


def test_a_query_longer_than_the_input_leaves_the_passage_one_token() -> None:
    encoder = PairEncoder(load_tokenizer(fp32_model_dir(), 16), 16)
    [(ids, types)] = encoder.encode("word " * 40, ["a passage"])
    assert len(ids) == 16
    assert types == [0] * 14 + [1, 1]


def test_the_best_window_is_the_span_with_the_most_query_tokens() -> None:
    ids = [1, 2, 3, 9, 9, 4, 9, 9, 9, 7]
    assert best_window(ids, {9}, 3) == [9, 9, 9]
    assert best_window(ids, {9, 4}, 3) == [9, 9, 4]
    # Ties go to the earliest span, so no query word keeps the head.
    assert best_window(ids, {42}, 4) == [1, 2, 3, 9]
    assert best_window(ids, set(), 4) == [1, 2, 3, 9]
    assert best_window(ids, {9}, 20) == ids


def test_the_best_window_reads_the_part_of_a_long_passage_the_query_is_about() -> None:
    tokenizer = load_tokenizer(fp32_model_dir(), 32)
    passage = "Intro text about nothing much. " * 15 + "Refunds are issued within five days."
    query = "when are refunds issued"
    head = PairEncoder(tokenizer, 32).encode(query, [passage])[0][0]
    best = PairEncoder(tokenizer, 32, window="best").encode(query, [passage])[0][0]
    assert len(best) == len(head) == 32
    assert tokenizer.decode(head).count("intro") > 3
    assert "refunds are issued" in tokenizer.decode(best)
    assert "refunds are issued" not in tokenizer.decode(head)
    # A passage that fits whole reads the same either way.
    short = PairEncoder(tokenizer, 32, window="best").encode(query, ["Refunds are fast."])
    assert short == PairEncoder(tokenizer, 32).encode(query, ["Refunds are fast."])
