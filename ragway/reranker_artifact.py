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

from collections.abc import Sequence
from pathlib import Path
from typing import Any

ARTIFACT_FORMAT = "ragway-reranker/1"


def passage_text(title: str, text: str) -> str:
    """The text the retriever reranks (``ChunkRecord.embedding_text`` with no section)."""
    return f"{title}\n{text}" if title else text


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
