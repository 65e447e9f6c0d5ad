"""The numpy all-MiniLM-L6-v2 matches sentence-transformers on PyTorch (cosine >= 0.9999).

The reference vectors in tests/fixtures/embeddings/minilm_reference.json were made once by
`make_reference.py` beside them (sentence-transformers 6.2.0, transformers 5.24.0, torch
2.13.0+cpu, in a throwaway virtual environment); the file records the command.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest

from keel.embeddings import blas
from keel.embeddings.local import BATCH_TOKENS, LocalEmbedder, _batches, default_model_dir
from keel.embeddings.port import EmbeddingError

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "embeddings" / "minilm_reference.json"
REFERENCE = json.loads(FIXTURE.read_text(encoding="utf-8"))
TEXTS = [case["text"] for case in REFERENCE["cases"]]
VECTORS = np.array([case["vector"] for case in REFERENCE["cases"]], dtype=np.float32)


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_the_reference_covers_long_empty_and_accented_texts(local_embedder: LocalEmbedder) -> None:
    assert len(TEXTS) >= 12 and "" in TEXTS
    assert max(local_embedder.token_count(t) for t in TEXTS) > local_embedder.max_tokens
    assert any(not t.isascii() for t in TEXTS)
    assert REFERENCE["made_with"]["max_seq_length"] == local_embedder.max_tokens == 256


def test_vectors_match_the_pytorch_reference(local_embedder: LocalEmbedder) -> None:
    vectors = local_embedder.encode(TEXTS)
    cosines = _cosines(vectors, VECTORS)
    assert cosines.min() >= 0.9999, dict(zip(TEXTS, cosines.round(6).tolist(), strict=True))


def test_one_at_a_time_equals_batched(local_embedder: LocalEmbedder) -> None:
    batched = local_embedder.encode(TEXTS[:6])
    single = np.stack([local_embedder.encode([t])[0] for t in TEXTS[:6]])
    assert _cosines(batched, single).min() >= 0.99999


async def test_embed_is_async_and_gives_unit_rows(local_embedder: LocalEmbedder) -> None:
    vectors = await local_embedder.embed(["router lights", "late fee"])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert (await local_embedder.embed([])).shape == (0, 384)


async def test_concurrent_embeds_from_threads_agree(local_embedder: LocalEmbedder) -> None:
    # Sequential calls are bit-identical; concurrent ones may differ in the last float bits
    # (OpenBLAS picks its code path by what other threads are doing).
    results = await asyncio.gather(*(local_embedder.embed([TEXTS[2]]) for _ in range(4)))
    assert all(np.allclose(results[0], r, atol=1e-6) for r in results)
    first, second = local_embedder.encode([TEXTS[3]]), local_embedder.encode([TEXTS[3]])
    assert np.array_equal(first, second)


def test_identity(local_embedder: LocalEmbedder) -> None:
    assert local_embedder.name == "all-MiniLM-L6-v2" and local_embedder.dimension == 384
    assert local_embedder.fingerprint.startswith("local:all-MiniLM-L6-v2:384:")
    assert LocalEmbedder().fingerprint == local_embedder.fingerprint


def test_batches_group_similar_lengths_within_the_token_budget() -> None:
    lengths = [5, 256, 7, 6, 250, 9]
    batches = _batches(lengths, 32)
    assert sorted(i for b in batches for i in b) == list(range(6))
    for batch in batches:
        assert len(batch) * max(lengths[i] for i in batch) <= max(BATCH_TOKENS, 256)
    assert [0, 3, 2, 5] in batches  # the short ones together, sorted by length


def test_a_folder_without_weights_is_an_embedding_error(tmp_path: Path) -> None:
    for name in ("config.json", "tokenizer.json"):
        (tmp_path / name).write_bytes((default_model_dir() / name).read_bytes())
    with pytest.raises(EmbeddingError):
        LocalEmbedder(tmp_path)


def test_blas_single_threading_is_local_and_restored() -> None:
    with blas.single_threaded():
        with blas.single_threaded():
            pass
    assert isinstance(blas.available(), bool)
