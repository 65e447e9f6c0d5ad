"""The knowledge index in the SQL layer: SQLite and PostgreSQL, through the store's engine."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import func, select

from keel.errors import StoreError
from keel.knowledge.build import ensure_index
from keel.knowledge.chunking import Chunk
from keel.knowledge.service import index_store_for
from keel.knowledge.sources import Document
from keel.knowledge.sql_store import SqlIndexStore
from keel.knowledge.store import StoredIndex
from keel.project.references import ChunkingConfig
from keel.stores.conformance import PostgresHarness
from keel.stores.sql import SqlEventStore
from keel.stores.sqlite import SqliteEventStore
from keel.stores.tables import knowledge_chunks

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "knowledge"))
from knowledge_kit import ToyEmbedder


def _index(fingerprint: str, texts: list[str]) -> StoredIndex:
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((len(texts), 5)).astype(np.float32)
    return StoredIndex(
        fingerprint=fingerprint,
        embedder="toy:1:5",
        dimension=5,
        chunks=tuple(
            Chunk(source="references/a.md", heading=f"H {i} — é", text=t)
            for i, t in enumerate(texts)
        ),
        text_hashes=tuple(f"{i:064x}" for i in range(len(texts))),
        vectors=vectors,
        built_at=12.5,
    )


@pytest.fixture(params=["sqlite", "postgres"])
def postgres(request: pytest.FixtureRequest) -> str | None:
    """None for SQLite; the PostgreSQL URL (or a skip) for PostgreSQL."""
    return None if request.param == "sqlite" else str(request.getfixturevalue("postgres_url"))


@pytest.fixture
async def event_store(postgres: str | None, tmp_path: Path) -> AsyncIterator[SqlEventStore]:
    if postgres is None:
        store: SqlEventStore = await SqliteEventStore.open(tmp_path / "k.db")
        yield store
        await store.close()
        return
    harness = PostgresHarness(postgres)
    opened = await harness.open()
    assert isinstance(opened, SqlEventStore)
    yield opened
    await harness.drop()


async def test_round_trip_is_exact(event_store: SqlEventStore) -> None:
    store = index_store_for(event_store)
    assert isinstance(store, SqlIndexStore)
    assert await store.load("agent") is None
    saved = _index("f1", ["one", "two", "three"])
    await store.save("agent", saved)
    loaded = await store.load("agent")
    assert loaded is not None
    assert loaded.chunks == saved.chunks and loaded.text_hashes == saved.text_hashes
    assert np.array_equal(loaded.vectors, saved.vectors) and loaded.vectors.dtype == np.float32
    assert (loaded.fingerprint, loaded.embedder, loaded.dimension, loaded.built_at) == (
        "f1",
        "toy:1:5",
        5,
        12.5,
    )


async def test_a_save_replaces_the_whole_index_and_leaves_others(
    event_store: SqlEventStore,
) -> None:
    store = SqlIndexStore(event_store.engine)
    await store.save("a", _index("f1", ["one", "two", "three"]))
    await store.save("b", _index("g1", ["other"]))
    await store.save("a", _index("f2", ["only"]))
    a, b = await store.load("a"), await store.load("b")
    assert a is not None and b is not None
    assert [c.text for c in a.chunks] == ["only"] and a.fingerprint == "f2"
    assert [c.text for c in b.chunks] == ["other"]
    async with event_store.engine.connect() as conn:
        count = (await conn.execute(select(func.count()).select_from(knowledge_chunks))).scalar()
    assert count == 2


async def test_an_empty_index_round_trips(event_store: SqlEventStore) -> None:
    store = SqlIndexStore(event_store.engine)
    await store.save("e", _index("f0", []))
    loaded = await store.load("e")
    assert loaded is not None and loaded.chunks == () and loaded.vectors.shape == (0, 5)


async def test_build_into_sql_then_reuse_across_store_instances(
    event_store: SqlEventStore,
) -> None:
    docs = [Document(source="references/a.md", text="# A\n\nalpha\n\n# B\n\nbeta")]
    embedder = ToyEmbedder()

    async def build() -> int:
        _, report = await ensure_index(
            name="agent",
            documents=docs,
            chunking=ChunkingConfig(),
            embedder=embedder,
            store=SqlIndexStore(event_store.engine),
            now=lambda: 1.0,
        )
        return report.embedded

    assert await build() == 2
    assert await build() == 0 and embedder.calls == 1


async def test_concurrent_builders_agree(event_store: SqlEventStore) -> None:
    docs = [Document(source="references/a.md", text="# A\n\nalpha")]

    async def build() -> StoredIndex:
        stored, _ = await ensure_index(
            name="agent",
            documents=docs,
            chunking=ChunkingConfig(),
            embedder=ToyEmbedder(),
            store=SqlIndexStore(event_store.engine),
            now=lambda: 1.0,
        )
        return stored

    results = await asyncio.gather(*(build() for _ in range(3)))
    assert len({r.fingerprint for r in results}) == 1
    loaded = await SqlIndexStore(event_store.engine).load("agent")
    assert loaded is not None and len(loaded.chunks) == 1


async def test_a_closed_database_is_a_store_error(tmp_path: Path) -> None:
    store = await SqliteEventStore.open(tmp_path / "gone.db")
    index_store = SqlIndexStore(store.engine)
    await store.close()
    (tmp_path / "gone.db").unlink()
    (tmp_path / "gone.db").mkdir()  # the path is now a folder: the database cannot open
    with pytest.raises(StoreError):
        await index_store.load("agent")
    await store.engine.dispose()
