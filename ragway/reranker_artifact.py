"""The reranker artifact contract shared by training (tooling) and serving (retriever).

A trained reranker is a versioned folder (``ragway train reranker`` writes it, the
retriever loads it by path)::

    reranker-<created>-<digest>/
      artifact.json        format, version, base model, training config, data checksum
      model/               the fine-tuned weights + tokenizer (transformers format)
      onnx/model.onnx      the same network exported to ONNX (fp32)
      onnx/model_int8.onnx dynamically quantised to int8: what the retriever runs

Encoding goes through the ``tokenizers`` library in training and in serving, from
the same ``tokenizer.json``, so the ids the model learned on are the ids it is
served. Both sides import these functions from here; that is the whole reason
this module lives in the runtime library.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ARTIFACT_FORMAT = "ragway-reranker/1"
_WORD = re.compile(r"\S+")
# A line of a markdown table that holds no words: its delimiter row ("|---|:--:|").
_TABLE_RULE = re.compile(r"^(?=[^\n]*\|)(?=[^\n]*---)[ \t|:-]+$\n?", re.MULTILINE)
_EMPHASIS = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_PADDING = re.compile(r"[ \t]{2,}")


def passage_text(title: str, text: str, section: str = "") -> str:
    """The text the retriever embeds and reranks (``ChunkRecord.embedding_text``).

    The heading context (title, then the section's heading path) helps short
    chunks; training renders its passages with the same function.
    """
    heading = " > ".join(p for p in (title, section) if p)
    text = wordy(text)
    return f"{heading}\n{text}" if heading else text


def wordy(text: str) -> str:
    """Markdown without the marks that hold no words: a table's delimiter row, the
    padding of its cells, and ``**emphasis**`` marks.

    The models read at most 256 tokens, and the tokenizer makes a token of every
    dash and asterisk. The delimiter row of the help centre's seven-column plans
    table alone took 120 of them, so the dense vector and the reranker saw the
    header and the first row, never the row of the plan a question asked about.
    """
    text = _TABLE_RULE.sub("", text)
    text = _EMPHASIS.sub(r"\2", text)
    return _PADDING.sub(" ", text)


def clip_words(text: str, words: int) -> str:
    """``text`` up to the end of its ``words``-th whitespace-separated word.

    The tokenizer would cut a passage to the model's input length anyway, but
    only after tokenising all of it; a long chunk costs that for nothing. Every
    word becomes at least one token and the BERT pre-tokeniser splits at
    whitespace, so a passage clipped to ``max_length`` words still fills the
    same truncated input: the ids are the same, only the work is less.
    """
    for n, match in enumerate(_WORD.finditer(text), start=1):
        if n >= words:
            return text[: match.end()]
    return text


def load_tokenizer(model_dir: Path, max_length: int) -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    # Only the passage is cut: the query is short and must be seen whole.
    tokenizer.enable_truncation(max_length=max_length, strategy="only_second")
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def encode(tokenizer: Any, pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Token ids, attention mask and segment ids as int64 numpy arrays."""
    import numpy as np

    encodings = tokenizer.encode_batch(list(pairs))
    return {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }


def encode_by_length(
    tokenizer: Any, pairs: Sequence[tuple[str, str]], batch_size: int
) -> list[tuple[list[int], dict[str, Any]]]:
    """(indices, arrays) batches of pairs sorted by token length, each padded to its longest.

    One padded batch of mixed lengths runs every pair at the longest pair's
    length; sorting first lets short passages run short, which is most of the
    saving on a CPU where attention and the feed-forward scale with tokens.
    """
    import numpy as np

    encodings = tokenizer.encode_batch(list(pairs))
    lengths = [sum(e.attention_mask) for e in encodings]
    order = sorted(range(len(pairs)), key=lambda i: lengths[i])
    batches = []
    for start in range(0, len(order), max(1, batch_size)):
        idx = order[start : start + max(1, batch_size)]
        width = max(lengths[i] for i in idx)
        arrays = {
            "input_ids": np.array([encodings[i].ids[:width] for i in idx], dtype=np.int64),
            "attention_mask": np.array(
                [encodings[i].attention_mask[:width] for i in idx], dtype=np.int64
            ),
            "token_type_ids": np.array(
                [encodings[i].type_ids[:width] for i in idx], dtype=np.int64
            ),
        }
        batches.append((idx, arrays))
    return batches
