"""Ranking: cosine, BM25, their reciprocal-rank fusion, the relevance floor, dedupe."""

from __future__ import annotations

import numpy as np

from keel.knowledge.chunking import Chunk
from keel.knowledge.index import MIN_COSINE, KnowledgeIndex


def _chunk(heading: str, text: str, source: str = "references/a.md") -> Chunk:
    return Chunk(source=source, heading=heading, text=text)


def _unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


CHUNKS = [
    _chunk("Fees", "late payment fee"),
    _chunk("Router", "router lights"),
    _chunk("Fees", "fee waived once a year"),  # a second chunk of the Fees section
    _chunk("Moving", "moving home"),
]
VECTORS = np.stack([_unit(1, 0, 0), _unit(0, 1, 0), _unit(0.9, 0, 0.1), _unit(0.3, 0.2, 1)])


def test_vector_mode_ranks_by_cosine_above_the_floor_and_dedupes_sections() -> None:
    index = KnowledgeIndex(CHUNKS, VECTORS)
    hits = index.rank("anything", _unit(1, 0, 0.2), mode="vector")
    assert [h.chunk.heading for h in hits] == ["Fees", "Moving"]
    assert hits[0].chunk.text == "fee waived once a year"  # the better chunk stands for Fees
    assert all(h.cosine >= MIN_COSINE for h in hits)
    assert hits[0].score == hits[0].cosine


def test_bm25_mode_needs_a_shared_term() -> None:
    index = KnowledgeIndex(CHUNKS, VECTORS)
    hits = index.rank("router", None)  # no vector: keywords only, whatever the mode
    assert [h.chunk.heading for h in hits] == ["Router"]
    assert index.rank("parking", None) == []


def test_hybrid_fuses_ranks_and_keeps_the_floor() -> None:
    index = KnowledgeIndex(CHUNKS, VECTORS)
    query = _unit(0.5, 0.45, 0.4)
    by_vector = [h.chunk.heading for h in index.rank("router lights", query, mode="vector")]
    fused = index.rank("router lights", query)
    assert by_vector[0] != "Router" and fused[0].chunk.heading == "Router"
    assert fused[0].bm25 > 0 and fused[0].score > fused[1].score
    far = np.zeros(3, dtype=np.float32)
    assert index.rank("router lights", far) == []  # shared words alone are not enough


def test_top_k_and_an_empty_index() -> None:
    index = KnowledgeIndex(CHUNKS, VECTORS)
    assert len(index.rank("fee", _unit(1, 1, 1), top_k=2)) == 2
    empty = KnowledgeIndex([], np.zeros((0, 3), dtype=np.float32))
    assert len(empty) == 0 and empty.rank("x", _unit(1, 0, 0)) == []
