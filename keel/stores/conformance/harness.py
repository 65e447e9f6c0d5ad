"""What a backend supplies to run the store contract: a harness that opens stores.

A harness owns one backing storage (a dict, a database file, a database schema). `open()` gives
a handle on it: for backends that can have several handles (SQLite, PostgreSQL) a new,
independent store instance each call; for the in-memory store, the one instance. All
stores share the harness's `clock`, a `FakeClock`, so checks can control `updated_at`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from keel.ids import FakeClock
from keel.stores.memory import InMemoryEventStore
from keel.stores.port import EventStore


@dataclass(frozen=True, kw_only=True, slots=True)
class Capabilities:
    """Optional properties of a backend; checks that need one are skipped without it."""

    durable: bool
    """Data survives closing every handle and opening a new one."""


class StoreHarness(Protocol):
    """A backend under test."""

    name: str
    capabilities: Capabilities
    clock: FakeClock

    async def open(self) -> EventStore:
        """A handle on this harness's storage (see the module docstring)."""
        ...

    async def close(self) -> None:
        """Close every handle this harness opened."""
        ...


class MemoryHarness:
    """`InMemoryEventStore`: every `open()` returns the same instance."""

    name = "memory"
    capabilities = Capabilities(durable=False)

    def __init__(self) -> None:
        self.clock = FakeClock()
        self._store = InMemoryEventStore(clock=self.clock)

    async def open(self) -> EventStore:
        return self._store

    async def close(self) -> None:
        await self._store.close()


class SqliteHarness:
    """`SqliteEventStore` on `<directory>/events.db`: a new instance per `open()`."""

    name = "sqlite"
    capabilities = Capabilities(durable=True)

    def __init__(self, directory: Path) -> None:
        self.clock = FakeClock()
        self.path = directory / "events.db"
        self._opened: list[EventStore] = []

    async def open(self) -> EventStore:
        from keel.stores.sqlite import SqliteEventStore  # lazy: SQLAlchemy, aiosqlite

        store = await SqliteEventStore.open(self.path, clock=self.clock)
        self._opened.append(store)
        return store

    async def close(self) -> None:
        for store in self._opened:
            await store.close()
        self._opened.clear()


class PostgresHarness:
    """`PostgresEventStore` in a fresh schema of the database at `url`: a new instance per
    `open()`. `close()` keeps the data (for reopening); `drop()` also removes the schema.

    Each harness has its own schema (and so its own tables and lock keys), so harnesses
    may run in parallel on one database.
    """

    name = "postgres"
    capabilities = Capabilities(durable=True)

    def __init__(self, url: str, *, schema: str | None = None) -> None:
        self.clock = FakeClock()
        self.url = url
        self.schema = schema or f"keel_test_{uuid.uuid4().hex[:16]}"
        self._opened: list[EventStore] = []

    async def open(self) -> EventStore:
        from keel.stores.postgres import PostgresEventStore  # lazy: SQLAlchemy, asyncpg

        store = await PostgresEventStore.open(self.url, schema=self.schema, clock=self.clock)
        self._opened.append(store)
        return store

    async def close(self) -> None:
        for store in self._opened:
            await store.close()
        self._opened.clear()

    async def drop(self) -> None:
        """Close every handle and drop the schema with everything in it."""
        # lazy: SQLAlchemy and asyncpg, for the PostgreSQL harness only
        from sqlalchemy import text

        from keel.stores.postgres import create_postgres_engine  # lazy: asyncpg

        await self.close()
        engine = create_postgres_engine(self.url, pool_size=1)
        try:
            async with engine.begin() as conn:
                await conn.execute(text(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE'))
        finally:
            await engine.dispose()
