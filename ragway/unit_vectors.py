"""Answer-unit vectors computed when a chunk is indexed, carried to the generator.

The extractive generator scores every answer unit (``ragway/units.py``) of every
passage it is given against the question, by cosine between embeddings. Embedding
the units of passages it has not seen before was most of a cold run's latency
(about 30 units a question, 20-50 ms each on two cores), although the units of a chunk
never change between questions. So the retriever embeds them once, at write time,
stores them beside the chunk, and hands them back with each hit; the generator
uses them when they are exactly the vectors it would have computed itself and
embeds the units on its own otherwise.

"Exactly" is checked, not assumed: the blob carries a digest of the embedding
model's id and of the unit texts that were embedded. A retriever and generator of
different versions (a rolling deploy that changed how units are split), or a
retriever embedding with another model, produce a different digest, and the
generator falls back to embedding the units itself. Vectors are stored as
float16: cosine to the float32 vector stays above 0.9999, at half the bytes.

Blob layout (little-endian): ``b"RU1"``, the digest (8 bytes), the dimension and
the number of units (uint16 each), then ``n * dim`` float16 values.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ragway.embedding import Embedder
from ragway.units import Unit, units

MAGIC = b"RU1"
_HEADER = struct.Struct("<3s8sHH")
# A chunk with more units than this keeps none: the generator embeds what it uses.
MAX_UNITS = 2_000


def embedding_text(title: str, section: str, unit: Unit) -> str:
    """What a unit is embedded as: with its heading, and its lead-in or header line.

    "Resuming a stream: Reconnect with the header…" matches "how do I resume a
    stream?" far better than the sentence alone.
    """
    head = section or title
    return f"{head}: {unit.context} {unit.text}".replace("  ", " ").strip()


def unit_texts(title: str, section: str, text: str) -> list[str]:
    """The embedding texts of every unit of a chunk, in unit order."""
    return [embedding_text(title, section, u) for u in units(text)]


def digest(model_id: str, texts: Sequence[str]) -> bytes:
    h = hashlib.blake2b(digest_size=8)
    h.update(model_id.encode())
    for t in texts:
        h.update(b"\0")
        h.update(t.encode())
    return h.digest()


def pack(model_id: str, texts: Sequence[str], vectors: npt.NDArray[np.float32]) -> bytes:
    n, dim = vectors.shape if vectors.size else (len(texts), 0)
    if n != len(texts):
        raise ValueError(f"{len(texts)} unit texts but {n} vectors")
    if n == 0 or n > MAX_UNITS or dim > 0xFFFF:
        return b""
    header = _HEADER.pack(MAGIC, digest(model_id, texts), dim, n)
    return header + np.ascontiguousarray(vectors, dtype="<f2").tobytes()


def unpack(blob: bytes, model_id: str, texts: Sequence[str]) -> npt.NDArray[np.float32] | None:
    """The vectors of ``texts`` from ``blob``, or None when the blob is not exactly theirs."""
    if len(blob) < _HEADER.size:
        return None
    magic, stored, dim, n = _HEADER.unpack_from(blob)
    if magic != MAGIC or n != len(texts) or stored != digest(model_id, texts):
        return None
    return stored_vectors(blob, dim)


def chunk_unit_texts(chunks: Sequence[tuple[str, str, str]]) -> list[list[str]]:
    """The unit texts to embed for each (title, section, text) chunk (none past MAX_UNITS)."""
    per_chunk = [unit_texts(*c) for c in chunks]
    return [texts if len(texts) <= MAX_UNITS else [] for texts in per_chunk]


def pack_chunks(
    model_id: str, per_chunk: Sequence[Sequence[str]], vectors: npt.NDArray[np.float32]
) -> list[bytes]:
    """The blob of each chunk from the vectors of its ``chunk_unit_texts``, concatenated."""
    blobs: list[bytes] = []
    start = 0
    for texts in per_chunk:
        blobs.append(pack(model_id, texts, vectors[start : start + len(texts)]))
        start += len(texts)
    return blobs


def embed_chunks(embedder: Embedder, chunks: Sequence[tuple[str, str, str]]) -> list[bytes]:
    """The unit-vector blob of each (title, section, text) chunk, in one embedding call.

    One call, not one per chunk: the embedder sorts all texts by length and pads
    each batch only to its longest member.
    """
    per_chunk = chunk_unit_texts(chunks)
    flat = [t for texts in per_chunk for t in texts]
    vectors = embedder.embed(flat) if flat else np.zeros((0, 0), dtype=np.float32)
    return pack_chunks(embedder.model_id, per_chunk, vectors)


def stored_vectors(blob: bytes, dim: int) -> npt.NDArray[np.float32] | None:
    """The unit vectors of a blob this process's own build wrote, without the digest check.

    The retriever reads the blobs of its own build, embedded by the model that embeds
    its queries (a build records its model and a retriever refuses another), so only
    the layout is checked: a blob of another dimension or a damaged one gives None.
    """
    if len(blob) < _HEADER.size:
        return None
    magic, _, stored_dim, n = _HEADER.unpack_from(blob)
    if magic != MAGIC or stored_dim != dim or len(blob) != _HEADER.size + n * dim * 2:
        return None
    return np.frombuffer(blob, dtype="<f2", offset=_HEADER.size).reshape(n, dim).astype(np.float32)
