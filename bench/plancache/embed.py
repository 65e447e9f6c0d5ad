"""The one embedder every similarity-based system uses, with a per-text cache.

Default: Keel's local all-MiniLM-L6-v2 (`keel.embeddings.local.LocalEmbedder`, numpy, no
network). `--embedder hash` swaps in a documented deterministic fallback (hashed word and
character-trigram counts, L2-normalised, 384 dimensions): no model, same interface, much
weaker semantics; the smoke test uses it so that it needs no weights.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

import numpy as np
from numpy.typing import NDArray

Vector = NDArray[np.float32]
DIMENSION = 384
_WORD = re.compile(r"\w+")


class Embeddings:
    """Text -> unit vector, each text embedded once."""

    def __init__(self, kind: str = "minilm") -> None:
        self.kind = kind
        self._cache: dict[str, Vector] = {}
        self.computed = 0
        self._model = None
        if kind == "minilm":
            from keel.embeddings.local import LocalEmbedder

            self._model = LocalEmbedder()
        elif kind != "hash":
            raise ValueError(f"unknown embedder {kind!r} (minilm or hash)")

    @property
    def name(self) -> str:
        """What produced the vectors."""
        return "all-MiniLM-L6-v2 (keel.embeddings.local)" if self._model else "hashed trigrams"

    def prime(self, texts: Iterable[str]) -> None:
        """Embed every new text of `texts` in batches (cheaper than one by one)."""
        new = sorted({t for t in texts if t not in self._cache})
        if not new:
            return
        if self._model is not None:
            vectors = self._model.encode(new)
        else:
            vectors = np.stack([_hashed(t) for t in new])
        for text, vector in zip(new, vectors, strict=True):
            self._cache[text] = np.asarray(vector, dtype=np.float32)
        self.computed += len(new)

    def vector(self, text: str) -> Vector:
        """The unit vector of `text`."""
        found = self._cache.get(text)
        if found is None:
            self.prime([text])
            found = self._cache[text]
        return found


def _hashed(text: str) -> Vector:
    out = np.zeros(DIMENSION, dtype=np.float32)
    lowered = text.lower()
    grams = _WORD.findall(lowered)
    padded = f"  {lowered}  "
    grams += [padded[i : i + 3] for i in range(len(padded) - 2)]
    for gram in grams:
        digest = hashlib.blake2b(gram.encode(), digest_size=4).digest()
        out[int.from_bytes(digest, "little") % DIMENSION] += 1.0
    norm = float(np.linalg.norm(out))
    return out / norm if norm else out


def cosine_max(query: Vector, matrix: Vector) -> tuple[int, float]:
    """Index and cosine of the row of `matrix` nearest to `query` (-1, -1.0 when empty)."""
    if matrix.shape[0] == 0:
        return -1, -1.0
    scores = matrix @ query
    best = int(np.argmax(scores))
    return best, float(scores[best])
