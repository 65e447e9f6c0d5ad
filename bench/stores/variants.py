"""The store paths the benchmark compares, beside the shipped stores.

* `SqlalchemySqliteStore`: the SQLite store as it was before the sqlite3 hot path
  (SQLAlchemy's async layer on aiosqlite, appends queued on an asyncio lock), i.e.
  `SqlEventStore` on `create_sqlite_engine` plus that lock;
* `SqlalchemyPostgresStore`: the PostgreSQL store as it was (SQLAlchemy Core statements on
  the asyncpg dialect, BEGIN, check, insert, COMMIT; locks on an autocommit engine);
* `SqlalchemyPreparedPostgresStore`: SQLAlchemy with the new store's statements as
  prepared driver SQL (`exec_driver_sql`: no compilation; the asyncpg dialect prepares and
  caches them), so the one-statement append is measured through SQLAlchemy too.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from sqlalchemy import BigInteger, func, literal, select
from sqlalchemy.ext.asyncio import AsyncEngine

from keel.events.codec import SCHEMA_VERSION, dumps_event, loads_event
from keel.events.model import Event
from keel.stores.port import StoredEvent
from keel.stores.postgres import advisory_key, create_postgres_engine
from keel.stores.sql import SqlEventStore
from keel.stores.sqlite import create_sqlite_engine, make_private


class SqlalchemySqliteStore(SqlEventStore):
    """The pre-sqlite3 SQLite store: SQLAlchemy async + aiosqlite, appends on an asyncio lock."""

    _write_lock: asyncio.Lock | None = None

    async def _insert(
        self, conversation_id: str, expected_seq: int, rows: list[dict[str, object]]
    ) -> None:
        if self._write_lock is None:
            self._write_lock = asyncio.Lock()
        async with self._write_lock:
            await super()._insert(conversation_id, expected_seq, rows)

    @classmethod
    async def open(cls, path: Path) -> SqlalchemySqliteStore:
        make_private(path)
        store = cls(create_sqlite_engine(path))
        await store.migrate()
        return store


class SqlalchemyPostgresStore(SqlEventStore):
    """The pre-asyncpg PostgreSQL hot path: `SqlEventStore`'s statements, and advisory
    locks on a connection of an autocommit engine."""

    def __init__(self, engine: AsyncEngine, lock_engine: AsyncEngine, schema: str) -> None:
        super().__init__(engine)
        self._lock_engine = lock_engine
        self._schema = schema

    @classmethod
    async def open(cls, url: str, schema: str) -> SqlalchemyPostgresStore:
        engine = create_postgres_engine(url, schema=schema)
        lock_engine = create_postgres_engine(url, schema=schema, pool_size=20, autocommit=True)
        return cls(engine, lock_engine, schema)

    @asynccontextmanager
    async def conversation_lock(self, conversation_id: str) -> AsyncIterator[None]:
        key = literal(advisory_key("keel.conv", self._schema, conversation_id), BigInteger)
        async with self._lock_engine.connect() as conn:
            await conn.execute(select(func.pg_advisory_lock(key)))
            try:
                yield
            finally:
                await conn.execute(select(func.pg_advisory_unlock(key)))

    async def close(self) -> None:
        await super().close()
        await self._lock_engine.dispose()


_APPEND_SQL = """
INSERT INTO events (conversation_id, seq, kind, schema_version, data, recorded_at)
SELECT $1::text, $2::bigint + batch.n, batch.kind, $3::integer, batch.data, $4::float8
FROM unnest($5::text[], $6::text[]) WITH ORDINALITY AS batch (kind, data, n)
WHERE (SELECT coalesce(max(seq), 0) FROM events WHERE conversation_id = $1::text) = $2
ORDER BY batch.n
"""
_READ_SQL = "SELECT seq, data FROM events WHERE conversation_id = $1 AND seq > $2 ORDER BY seq"
_LAST_SEQ_SQL = "SELECT coalesce(max(seq), 0) FROM events WHERE conversation_id = $1"


class SqlalchemyPreparedPostgresStore(SqlalchemyPostgresStore):
    """SQLAlchemy with the asyncpg store's statements as prepared driver SQL."""

    async def append(
        self,
        conversation_id: str,
        expected_seq: int,
        events: Sequence[Event],
        *,
        durable: bool = True,
    ) -> list[StoredEvent]:
        args = (
            conversation_id,
            expected_seq,
            SCHEMA_VERSION,
            self._clock.now().timestamp(),
            [event.kind for event in events],
            [dumps_event(event) for event in events],
        )
        async with self._engine.connect() as conn:
            # The benchmark's appends never conflict; the dialect reports no row count for
            # INSERT ... SELECT, so the check is a read-back in the real store only.
            await conn.exec_driver_sql(_APPEND_SQL, args)
            await conn.commit()
        return [
            StoredEvent(conversation_id=conversation_id, seq=seq, event=event)
            for seq, event in enumerate(events, start=expected_seq + 1)
        ]

    async def read(self, conversation_id: str, after_seq: int = 0) -> list[StoredEvent]:
        async with self._engine.connect() as conn:
            rows = (await conn.exec_driver_sql(_READ_SQL, (conversation_id, after_seq))).all()
        return [
            StoredEvent(conversation_id=conversation_id, seq=seq, event=loads_event(data))
            for seq, data in rows
        ]

    async def last_seq(self, conversation_id: str) -> int:
        async with self._engine.connect() as conn:
            value = (await conn.exec_driver_sql(_LAST_SEQ_SQL, (conversation_id,))).scalar_one()
        return int(value)
