"""Plain-text helpers shared by the generator and the evaluation code."""

from __future__ import annotations

import functools
import re
import unicodedata

import tantivy

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[`A-Z0-9])")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_WORD = re.compile(r"[a-z0-9]+(?:[-_.][a-z0-9]+)*")

# Function words that carry no evidence of topic; kept short on purpose.
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "after",
        "all",
        "also",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "before",
        "being",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "out",
        "over",
        "own",
        "same",
        "shall",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
    ]
)


def split_sentences(text: str) -> list[str]:
    """Sentences of a chunk. Lines (list items, table rows) never merge."""
    sentences: list[str] = []
    in_code = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code or not line or line.startswith("#") or set(line) <= set("|-: "):
            continue
        line = _LIST_MARK.sub("", line)
        sentences.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return sentences


def words(text: str) -> list[str]:
    return _WORD.findall(_unaccented(text.lower()))


def _unaccented(text: str) -> str:
    """``text`` with its letters' accents taken off: "Tūī 4" is "Tui 4", "français"
    "francais". Read as ASCII letters only, "Tūī" was the word "t" and "Kōwhai" "k" and
    "whai", so a camper, a town or a language the pages name with accents was a name no
    passage holds, and a customer who types "Tui" without them met nothing. Canonical
    decomposition only: "m²" and a footnote's "¹" are not digits."""
    if text.isascii():
        return text
    return _COMBINING.sub("", unicodedata.normalize("NFD", text))


_COMBINING = re.compile(r"[\u0300-\u036f]")


# Quotes as phones and word processors type them ("What\u2019s", \u201cPro\u201d): the
# question rules, the spelling repair and the follow-up rewriter read the ASCII forms,
# and an iPhone's "What\u2019s the phone number" met none of them.
_TYPOGRAPHIC_QUOTES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2033": '"',
    }
)


def plain_quotes(text: str) -> str:
    """``text`` with typographic quotes and apostrophes as their ASCII forms."""
    return text.translate(_TYPOGRAPHIC_QUOTES)


@functools.cache
def _stemmer() -> tantivy.TextAnalyzer:
    # The Snowball English stemmer that the BM25 index uses, so "resuming"
    # in a passage and "resume" in a question meet as "resum".
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


# Bounded: a word is stemmed the same way every time, and the same few thousand words
# (a knowledge base's, its questions') come back on every search and every answer; a
# call into the analyzer was 9 % of the retriever's CPU under load (docs/performance.md).
@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    tokens = _stemmer().analyze(word)
    out = tokens[0] if tokens else word
    # Snowball keeps the plural "s" of a word without a vowel before it, so
    # "PDFs", "SDKs" and "SREs" would never meet "PDF", "SDK" and "SRE".
    if out == word and len(word) >= 4 and word.endswith("s") and not word.endswith(_KEEP_S):
        return word[:-1]
    return out


_KEEP_S = ("ss", "us", "is")


def content_terms(text: str) -> set[str]:
    return {stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 1}
