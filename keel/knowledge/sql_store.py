"""`SqlIndexStore`: knowledge indexes in the event store's SQL database (SQLite, PostgreSQL).

Tables `knowledge_indexes` (one row per index: fingerprint, embedder, dimension, size,
build time) and `knowledge_chunks` (one row per chunk: source, heading, text, text hash,
vector as little-endian float32 bytes in a BLOB / BYTEA) are created by the store
migrations (`keel.stores.migrations`, version 2), so opening the event store prepares them.
A save deletes and re-inserts an index's rows in one write transaction; two processes
saving the same index at once serialise on the `knowledge_indexes` row (the loser's
duplicate key is reported as `StoreError` and its caller reloads what the winner saved).
Vectors are compared in numpy after loading: brute-force cosine is fast at this size.
"""

from __future__ import annotations

import numpy as np
from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from keel.errors import StoreError
from keel.knowledge.chunking import Chunk
from keel.knowledge.store import StoredIndex
from keel.stores.sql import DB_ERRORS, WRITE_OPTION
from keel.stores.tables import knowledge_chunks as chunks_table
from keel.stores.tables import knowledge_indexes as indexes_table

_F32 = np.dtype("<f4")


class SqlIndexStore:
    """`IndexStore` on a migrated Keel database (`SqlEventStore.engine`)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def load(self, name: str) -> StoredIndex | None:
        """See `IndexStore.load`."""
        head = select(indexes_table).where(indexes_table.c.name == name)
        rows = (
            select(chunks_table)
            .where(chunks_table.c.index_name == name)
            .order_by(chunks_table.c.position)
        )
        try:
            async with self._engine.connect() as conn:
                meta = (await conn.execute(head)).first()
                found = (await conn.execute(rows)).all() if meta is not None else []
        except DB_ERRORS as exc:
            raise StoreError(f"reading knowledge index {name!r} failed: {exc}") from exc
        if meta is None:
            return None
        dimension = int(meta.dimension)
        vectors = np.zeros((len(found), dimension), dtype=np.float32)
        for i, row in enumerate(found):
            vectors[i] = np.frombuffer(bytes(row.vector), dtype=_F32, count=dimension)
        return StoredIndex(
            fingerprint=meta.fingerprint,
            embedder=meta.embedder,
            dimension=dimension,
            chunks=tuple(Chunk(source=r.source, heading=r.heading, text=r.text) for r in found),
            text_hashes=tuple(r.text_hash for r in found),
            vectors=vectors,
            built_at=float(meta.built_at),
        )

    async def save(self, name: str, index: StoredIndex) -> None:
        """See `IndexStore.save`."""
        rows = [
            {
                "index_name": name,
                "position": i,
                "source": chunk.source,
                "heading": chunk.heading,
                "text": chunk.text,
                "text_hash": text_hash,
                "vector": np.asarray(vector, dtype=_F32).tobytes(),
            }
            for i, (chunk, text_hash, vector) in enumerate(
                zip(index.chunks, index.text_hashes, index.vectors, strict=True)
            )
        ]
        head = {
            "name": name,
            "fingerprint": index.fingerprint,
            "embedder": index.embedder,
            "dimension": index.dimension,
            "chunk_count": len(rows),
            "built_at": index.built_at,
        }
        try:
            async with self._engine.connect() as conn:
                conn = await conn.execution_options(**{WRITE_OPTION: True})
                async with conn.begin():
                    await conn.execute(delete(indexes_table).where(indexes_table.c.name == name))
                    await conn.execute(
                        delete(chunks_table).where(chunks_table.c.index_name == name)
                    )
                    await conn.execute(insert(indexes_table), [head])
                    if rows:
                        await conn.execute(insert(chunks_table), rows)
        except DB_ERRORS as exc:
            raise StoreError(f"saving knowledge index {name!r} failed: {exc}") from exc
