"""The searchable index in memory and hybrid ranking (pure: no IO, no embedding calls).

`KnowledgeIndex` holds the chunks, their unit vectors and BM25 statistics. `rank` scores a
query three ways:

* `vector`: cosine of the query vector with each chunk vector;
* `bm25`: Okapi BM25 of the query's terms (`keel.knowledge.bm25`);
* `hybrid` (the default): reciprocal-rank fusion of the two rankings,
  `1 / (RRF_K + vector rank) + 1 / (RRF_K + bm25 rank)`, a chunk absent from the BM25
  ranking (no shared term) adding nothing for it. Ties go to the higher cosine.

A chunk is a candidate only when it is plausibly related to the query: a cosine of at
least `MIN_COSINE` in the hybrid and vector modes (unrelated English sentences score about
0 to 0.2 with all-MiniLM-L6-v2), any shared term in the bm25 mode. So a question about
something the documents never mention finds nothing, which the loop turns into "I do not
have that information"; a loosely related section may still come back, and the prompt
tells the model to answer only from what the sections say. Hits are then deduplicated by
section (source and heading: the best chunk of a section stands for it) and cut to
`top_k`. `RRF_K = 60` is the constant of the original RRF paper (Cormack, Clarke and
Buettcher, 2009), not tuned here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from keel.embeddings.port import Vectors
from keel.knowledge.bm25 import Bm25
from keel.knowledge.chunking import Chunk

Mode = Literal["hybrid", "vector", "bm25"]
TOP_K = 3
RRF_K = 60
MIN_COSINE = 0.2


@dataclass(frozen=True, kw_only=True, slots=True)
class Hit:
    """One search result."""

    chunk: Chunk
    score: float
    """The ranking score of the mode used (fused, cosine or BM25)."""
    cosine: float
    bm25: float


class KnowledgeIndex:
    """Chunks with their vectors and term statistics."""

    def __init__(self, chunks: Sequence[Chunk], vectors: Vectors) -> None:
        if len(chunks) != vectors.shape[0]:
            raise ValueError(f"{len(chunks)} chunks but {vectors.shape[0]} vectors")
        self.chunks = tuple(chunks)
        self.vectors = vectors
        self.bm25 = Bm25([c.search_text for c in self.chunks])

    def __len__(self) -> int:
        return len(self.chunks)

    def rank(
        self,
        query: str,
        query_vector: NDArray[np.float32] | None,
        *,
        top_k: int = TOP_K,
        mode: Mode = "hybrid",
    ) -> list[Hit]:
        """The best `top_k` sections for `query` (a None vector means BM25 only)."""
        if not self.chunks:
            return []
        terms = self.bm25.scores(query)
        if query_vector is None:
            mode = "bm25"
            cosines = np.zeros(len(self.chunks), dtype=np.float64)
        else:
            cosines = (self.vectors @ query_vector).astype(np.float64)
        keep = _candidates(cosines, terms, mode)
        scores = _scores(cosines, terms, mode)
        order = sorted(np.flatnonzero(keep), key=lambda i: (-scores[i], -cosines[i], i))
        return _dedupe(
            [
                Hit(
                    chunk=self.chunks[i],
                    score=float(scores[i]),
                    cosine=float(cosines[i]),
                    bm25=float(terms[i]),
                )
                for i in order
            ],
            top_k,
        )


def _candidates(
    cosines: NDArray[np.float64], terms: NDArray[np.float64], mode: Mode
) -> NDArray[np.bool_]:
    if mode == "bm25":
        return terms > 0
    return cosines >= MIN_COSINE


def _scores(
    cosines: NDArray[np.float64], terms: NDArray[np.float64], mode: Mode
) -> NDArray[np.float64]:
    if mode == "vector":
        return cosines
    if mode == "bm25":
        return terms
    fused = 1.0 / (RRF_K + _ranks(cosines))
    fused += np.where(terms > 0, 1.0 / (RRF_K + _ranks(terms)), 0.0)
    return fused


def _ranks(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """1-based rank of each value, highest first (ties by position)."""
    order = np.argsort(-values, kind="stable")
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.arange(1, len(values) + 1, dtype=np.float64)
    return ranks


def _dedupe(hits: list[Hit], top_k: int) -> list[Hit]:
    seen: set[tuple[str, str]] = set()
    out: list[Hit] = []
    for hit in hits:
        key = (hit.chunk.source, hit.chunk.heading)
        if key in seen:
            continue
        seen.add(key)
        out.append(hit)
        if len(out) == top_k:
            break
    return out
