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
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ARTIFACT_FORMAT = "ragway-reranker/1"
_WORD = re.compile(r"\S+")
# A line of a markdown table that holds no words: its delimiter row ("|---|:--:|",
# or GFM's tersest "|-|:-:|").
_TABLE_RULE = re.compile(r"^(?=[^\n]*\|)(?=[^\n]*-)[ \t|:-]+$\n?", re.MULTILINE)
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
    batches = []
    for idx in _by_length(lengths, max(1, batch_size)):
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


def _by_length(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices, shortest first, in groups of ``batch_size`` (0 or less: one group in the
    given order)."""
    if batch_size <= 0:
        return [list(range(len(lengths)))]
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    return [order[s : s + batch_size] for s in range(0, len(order), batch_size)]


# Words whose tokens say nothing about which part of a passage a query is about.
_STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "has",
    "have", "how", "i", "in", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to",
    "was", "what", "when", "where", "which", "who", "why", "will", "with", "you", "your",
))  # fmt: skip


def best_window(ids: Sequence[int], wanted: set[int], room: int) -> list[int]:
    """The ``room`` consecutive tokens of ``ids`` that hold the most ``wanted`` tokens
    (the earliest such span, so a passage with no query word keeps its head)."""
    if len(ids) <= room or not wanted:
        return list(ids[:room])
    import numpy as np

    hits = np.fromiter((i in wanted for i in ids), dtype=np.int32, count=len(ids))
    sums = np.concatenate(([0], np.cumsum(hits)))
    counts = sums[room:] - sums[: len(ids) - room + 1]
    start = int(np.argmax(counts))
    return list(ids[start : start + room])


class PairEncoder:
    """(query, passage) pairs encoded as ``load_tokenizer``'s tokenizer encodes them,
    with each passage's tokens kept for the next query that reranks it.

    The tokenizer encodes the two texts of a pair separately and then joins them
    (``[CLS] query [SEP] passage [SEP]``, segment ids 0 then 1), cutting only the
    passage to the input length. So a passage's tokens do not depend on the
    query: they are encoded once, clipped to the longest the input length can
    ever hold, and reused while they stay among the ``cache_size`` most recently
    reranked passages. A popular chunk reaches the head of many queries. The
    ids are the tokenizer's own, which ``tests/unit/ragway/test_reranker_artifact.py``
    checks pair by pair.
    """

    def __init__(
        self, tokenizer: Any, max_length: int, *, cache_size: int = 4096, window: str = "head"
    ) -> None:
        from tokenizers import Tokenizer

        if window not in ("head", "best"):
            raise ValueError(f"window must be 'head' or 'best', not {window!r}")
        # A copy that neither truncates nor pads: the pair's budget is applied here.
        self._tokenizer = Tokenizer.from_str(tokenizer.to_str())
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        cls, sep = self._tokenizer.token_to_id("[CLS]"), self._tokenizer.token_to_id("[SEP]")
        if cls is None or sep is None:
            raise ValueError("the tokenizer has no [CLS] or [SEP] token")
        self._cls: int = cls
        self._sep: int = sep
        self.max_length = max_length
        # "head": the passage's first tokens, as the tokenizer cuts it; "best": the
        # span of that length that holds the most of the query's words.
        self.window = window
        # A passage is kept up to the longest span a pair may hold, or, for "best",
        # up to four times the input length to choose a span from.
        self._keep = max_length - 3 if window == "head" else 4 * max_length
        vocab = self._tokenizer.get_vocab()
        self._stop = {
            i for w in _STOPWORDS for i in self._tokenizer.encode(w, add_special_tokens=False).ids
        } | {i for t, i in vocab.items() if not any(c.isalnum() for c in t)}
        self.cache_size = cache_size
        self._cache: OrderedDict[str, list[int]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def passage_ids(self, passages: Sequence[str]) -> list[list[int]]:
        """Each passage's token ids: at most ``max_length - 3`` of them for the head window."""
        out: list[list[int] | None] = []
        missing: list[int] = []
        with self._lock:
            for i, passage in enumerate(passages):
                ids = self._cache.get(passage)
                if ids is None:
                    missing.append(i)
                else:
                    self._cache.move_to_end(passage)
                out.append(ids)
            self.hits += len(passages) - len(missing)
            self.misses += len(missing)
        if missing:
            # Clipping to max_length words keeps the ids the truncation keeps (clip_words).
            words = self._keep + 3
            texts = [clip_words(passages[i], words) for i in missing]
            encoded = self._tokenizer.encode_batch(texts, add_special_tokens=False)
            with self._lock:
                for i, enc in zip(missing, encoded, strict=True):
                    ids = list(enc.ids[: self._keep])
                    out[i] = ids
                    if self.cache_size > 0:
                        self._cache[passages[i]] = ids
                        self._cache.move_to_end(passages[i])
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return [ids for ids in out if ids is not None]

    def encode(self, query: str, passages: Sequence[str]) -> list[tuple[list[int], list[int]]]:
        """(input ids, segment ids) per pair, unpadded."""
        q = self._tokenizer.encode(query, add_special_tokens=False).ids
        room = self.max_length - 3 - len(q)
        if room < 1:
            # The tokenizer would refuse such a pair (only the passage may be cut);
            # a query this long keeps its head and leaves the passage one token.
            q = q[: self.max_length - 4]
            room = 1
        head = [self._cls, *q, self._sep]
        wanted = set(q) - self._stop
        out = []
        for ids in self.passage_ids(passages):
            body = ids[:room] if self.window == "head" else best_window(ids, wanted, room)
            out.append(([*head, *body, self._sep], [0] * len(head) + [1] * (len(body) + 1)))
        return out

    def batches(
        self, query: str, passages: Sequence[str], batch_size: int
    ) -> list[tuple[list[int], dict[str, Any]]]:
        """(indices, arrays) batches as ``encode_by_length`` makes them (0: one padded batch
        in the given order, as ``encode`` makes it)."""
        import numpy as np

        pairs = self.encode(query, passages)
        batches = []
        for idx in _by_length([len(ids) for ids, _ in pairs], batch_size):
            width = max(len(pairs[i][0]) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            types = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                n = len(pairs[i][0])
                ids[row, :n] = pairs[i][0]
                types[row, :n] = pairs[i][1]
                mask[row, :n] = 1
            batches.append(
                (idx, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
            )
        return batches
