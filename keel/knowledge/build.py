"""Bringing a stored knowledge index up to date with the documents and the embedder.

`fingerprint` digests everything the index depends on: the index format, the embedder's
fingerprint, the chunking settings and each document's path and SHA-256. `ensure_index`
loads the stored index; when its fingerprint matches, that is the index (no embedding at
all). Otherwise the documents are chunked again, chunks whose text (with heading) is
unchanged keep their stored vectors if the embedder is the same, only the others are
embedded (in batches of `EMBED_BATCH`, reporting progress after each), and the new index
is saved whole.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from keel.embeddings.port import Embedder, Vectors
from keel.errors import StoreError
from keel.knowledge.chunking import Chunk, chunk_document
from keel.knowledge.sources import Document
from keel.knowledge.store import IndexStore, StoredIndex
from keel.project.references import ChunkingConfig

FORMAT = "keel-knowledge/1"
"""Part of the fingerprint: bump it when chunking or storage changes meaning."""
EMBED_BATCH = 16
"""Chunks per embedding call (and per progress report)."""

Progress = Callable[[int, int], None]
"""Called with (chunks embedded so far, chunks to embed) during a build."""


@dataclass(frozen=True, kw_only=True, slots=True)
class BuildReport:
    """What `ensure_index` did."""

    rebuilt: bool
    """False when the stored index was current."""
    chunks: int
    embedded: int
    """Chunks embedded in this build (0 when nothing changed)."""
    reused: int
    """Chunks whose stored vectors were kept."""
    seconds: float


def fingerprint(documents: Sequence[Document], chunking: ChunkingConfig, embedder: str) -> str:
    """A digest of everything an index is built from (see the module docstring)."""
    digest = hashlib.sha256(f"{FORMAT}\0{embedder}\0".encode())
    digest.update(f"{chunking.chunk_size}\0{chunking.chunk_overlap}\0".encode())
    for doc in documents:
        digest.update(f"{doc.source}\0{doc.digest}\0".encode())
    return digest.hexdigest()


def chunk_all(documents: Sequence[Document], chunking: ChunkingConfig) -> list[Chunk]:
    """The chunks of every document, in document order."""
    return [c for doc in documents for c in chunk_document(doc.source, doc.text, chunking)]


def text_hash(chunk: Chunk) -> str:
    """SHA-256 of what gets embedded for `chunk`."""
    return hashlib.sha256(chunk.search_text.encode("utf-8")).hexdigest()


async def ensure_index(
    *,
    name: str,
    documents: Sequence[Document],
    chunking: ChunkingConfig,
    embedder: Embedder,
    store: IndexStore,
    now: Callable[[], float],
    progress: Progress | None = None,
) -> tuple[StoredIndex, BuildReport]:
    """The current index for `documents` (loaded, or rebuilt and saved) and what was done."""
    started = time.perf_counter()
    wanted = fingerprint(documents, chunking, embedder.fingerprint)
    stored = await store.load(name)
    if stored is not None and stored.fingerprint == wanted:
        return stored, _report(False, len(stored.chunks), 0, started)
    chunks = chunk_all(documents, chunking)
    hashes = tuple(text_hash(c) for c in chunks)
    vectors, embedded = await _vectors(chunks, hashes, stored, embedder, progress)
    built = StoredIndex(
        fingerprint=wanted,
        embedder=embedder.fingerprint,
        dimension=int(vectors.shape[1]),
        chunks=tuple(chunks),
        text_hashes=hashes,
        vectors=vectors,
        built_at=now(),
    )
    built = await _save(store, name, built)
    return built, _report(True, len(chunks), embedded, started)


def _report(rebuilt: bool, chunks: int, embedded: int, started: float) -> BuildReport:
    return BuildReport(
        rebuilt=rebuilt,
        chunks=chunks,
        embedded=embedded,
        reused=chunks - embedded,
        seconds=time.perf_counter() - started,
    )


async def _vectors(
    chunks: Sequence[Chunk],
    hashes: Sequence[str],
    stored: StoredIndex | None,
    embedder: Embedder,
    progress: Progress | None,
) -> tuple[Vectors, int]:
    known: dict[str, np.ndarray] = {}
    if stored is not None and stored.embedder == embedder.fingerprint:
        known = dict(zip(stored.text_hashes, stored.vectors, strict=True))
    missing = [i for i, h in enumerate(hashes) if h not in known]
    fresh = await _embed([chunks[i].search_text for i in missing], embedder, progress)
    dimension = fresh.shape[1] if missing else (stored.dimension if stored else embedder.dimension)
    vectors = np.zeros((len(chunks), dimension), dtype=np.float32)
    for i, h in enumerate(hashes):
        if h in known:
            vectors[i] = known[h]
    for row, i in enumerate(missing):
        vectors[i] = fresh[row]
    return vectors, len(missing)


async def _embed(texts: Sequence[str], embedder: Embedder, progress: Progress | None) -> Vectors:
    parts: list[Vectors] = []
    if progress is not None:
        progress(0, len(texts))
    for start in range(0, len(texts), EMBED_BATCH):
        parts.append(await embedder.embed(texts[start : start + EMBED_BATCH]))
        if progress is not None:
            progress(min(start + EMBED_BATCH, len(texts)), len(texts))
    if not parts:
        return np.zeros((0, embedder.dimension), dtype=np.float32)
    return np.concatenate(parts, axis=0)


async def _save(store: IndexStore, name: str, built: StoredIndex) -> StoredIndex:
    """Save `built`; if another process saved the same index meanwhile, take theirs."""
    try:
        await store.save(name, built)
    except StoreError:
        other = await store.load(name)
        if other is None or other.fingerprint != built.fingerprint:
            raise
        return other
    return built
