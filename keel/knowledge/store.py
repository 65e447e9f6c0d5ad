"""Where a built knowledge index is kept: the `IndexStore` port and its in-memory version.

An index is stored under a name (the agent's id) with the fingerprint it was built from.
`save` replaces the whole index at once (all or nothing). The SQL version shares the event
store's database (`keel.knowledge.sql_store`); the in-memory one serves the in-memory event
store and tests. `SHARED_MEMORY_STORE` is one process-wide in-memory store, so several
engines of one process (conversation tests, `keel chat`) build an agent's index once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from keel.embeddings.port import Vectors
from keel.knowledge.chunking import Chunk


@dataclass(frozen=True, kw_only=True, slots=True)
class StoredIndex:
    """A built index as it is stored."""

    fingerprint: str
    """Of everything it was built from (documents, chunking, embedder, format)."""
    embedder: str
    """The embedder's fingerprint (vectors of another embedder are never reused)."""
    dimension: int
    chunks: tuple[Chunk, ...]
    text_hashes: tuple[str, ...]
    """SHA-256 of each chunk's `search_text` (unchanged chunks keep their vectors)."""
    vectors: Vectors
    built_at: float
    """Epoch seconds of the build."""


class IndexStore(Protocol):
    """Keeps built indexes by name."""

    async def load(self, name: str) -> StoredIndex | None:
        """The index stored under `name`, or None."""
        ...

    async def save(self, name: str, index: StoredIndex) -> None:
        """Store `index` under `name`, replacing what was there, all or nothing."""
        ...


class InMemoryIndexStore:
    """`IndexStore` in a dict (gone when the process ends)."""

    def __init__(self) -> None:
        self._indexes: dict[str, StoredIndex] = {}

    async def load(self, name: str) -> StoredIndex | None:
        """See `IndexStore.load`."""
        return self._indexes.get(name)

    async def save(self, name: str, index: StoredIndex) -> None:
        """See `IndexStore.save` (the vectors are copied, read-only)."""
        vectors = np.array(index.vectors, dtype=np.float32)
        vectors.setflags(write=False)
        self._indexes[name] = StoredIndex(
            fingerprint=index.fingerprint,
            embedder=index.embedder,
            dimension=index.dimension,
            chunks=index.chunks,
            text_hashes=index.text_hashes,
            vectors=vectors,
            built_at=index.built_at,
        )


SHARED_MEMORY_STORE = InMemoryIndexStore()
"""The process-wide in-memory store (see the module docstring)."""
