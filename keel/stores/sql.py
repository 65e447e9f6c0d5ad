"""The event store over SQLAlchemy Core (async): the shared base of the SQL backends.

`SqlEventStore` is a complete store on any SQLAlchemy async engine. The backends keep its
migrations, its listing and its `engine` (the knowledge index and the plan cache use the
same database through it), and replace the hot path (append, read, last seq) with their
drivers used directly: the standard `sqlite3` module on threads of its own
(`keel.stores.sqlite`) and asyncpg (`keel.stores.postgres`), which measure several times
faster than this layer (bench/RESULTS.md, "Stores"). Its own append and read remain the
reference those backends are measured against, and read and write the same rows.

Dialect specifics (engine creation, pragmas, how a write transaction begins, locking) live
in the backend modules. Connections opened for writing carry the execution option
`keel_write=True` so a backend can begin them differently (SQLite takes the write lock up
front with BEGIN IMMEDIATE). A backend may override `_prepare_migration` (PostgreSQL takes
an advisory lock there) and `conversation_lock` (in-process here; PostgreSQL adds an
advisory lock).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager

from sqlalchemy import func, insert, select
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from keel.errors import ConcurrencyConflict, StoreError
from keel.events.codec import SCHEMA_VERSION, dumps_event, loads_event
from keel.events.model import Event
from keel.ids import Clock, SystemClock
from keel.stores import migrations
from keel.stores.locks import PROCESS_LOCKS
from keel.stores.port import ConversationSummary, StoredEvent
from keel.stores.tables import events as events_table

WRITE_OPTION = "keel_write"
"""Execution option set on connections that will write."""

DB_ERRORS = (DBAPIError, OSError, PoolTimeout)
"""What a database call may raise that becomes `StoreError`: driver errors, a refused or
dropped connection, an exhausted pool."""


class SqlEventStore:
    """`EventStore` on an async SQLAlchemy engine whose database has been migrated."""

    def __init__(
        self, engine: AsyncEngine, *, clock: Clock | None = None, lock_scope: str | None = None
    ) -> None:
        """`lock_scope` names the database for in-process conversation locks (default: URL)."""
        self._engine = engine
        self._clock = clock or SystemClock()
        self._lock_scope = lock_scope or engine.url.render_as_string()

    @property
    def engine(self) -> AsyncEngine:
        """The SQLAlchemy engine (other tables of the same database use it: the knowledge
        index of `keel.knowledge.sql_store`)."""
        return self._engine

    async def migrate(self) -> list[int]:
        """Bring the database schema up to date; returns the migration versions applied."""
        now = self._clock.now().timestamp()
        try:
            async with self._engine.connect() as conn:
                conn = await conn.execution_options(**{WRITE_OPTION: True})
                async with conn.begin():
                    await self._prepare_migration(conn)
                    return await conn.run_sync(lambda sync: migrations.migrate(sync, now=now))
        except DB_ERRORS as exc:
            raise StoreError(f"migrating the event store failed: {exc}") from exc

    async def _prepare_migration(self, conn: AsyncConnection) -> None:
        """Runs first in the migration transaction; serialise concurrent migrators here.

        Nothing to do by default: SQLite's BEGIN IMMEDIATE already serialises them.
        """

    def conversation_lock(self, conversation_id: str) -> AbstractAsyncContextManager[None]:
        """See `EventStore.conversation_lock`: an asyncio lock shared by this process's
        stores on the same database; it does not reach other processes."""
        return PROCESS_LOCKS.hold((self._lock_scope, conversation_id))

    async def append(
        self,
        conversation_id: str,
        expected_seq: int,
        events: Sequence[Event],
        *,
        durable: bool = True,
    ) -> list[StoredEvent]:
        """See `EventStore.append`."""
        now = self._clock.now().timestamp()
        rows = [
            {
                "conversation_id": conversation_id,
                "seq": expected_seq + i,
                "kind": event.kind,
                "schema_version": SCHEMA_VERSION,
                "data": dumps_event(event),
                "recorded_at": now,
            }
            for i, event in enumerate(events, start=1)
        ]
        try:
            await self._insert(conversation_id, expected_seq, rows)
        except IntegrityError as exc:
            # Another writer stored one of our seqs between our check and our insert.
            actual = await self.last_seq(conversation_id)
            if actual == expected_seq:
                raise StoreError(f"append to {conversation_id!r} failed: {exc}") from exc
            raise ConcurrencyConflict(conversation_id, expected_seq, actual) from exc
        except DB_ERRORS as exc:
            raise StoreError(f"append to {conversation_id!r} failed: {exc}") from exc
        return [
            StoredEvent(conversation_id, expected_seq + i, event)
            for i, event in enumerate(events, start=1)
        ]

    async def _insert(
        self, conversation_id: str, expected_seq: int, rows: list[dict[str, object]]
    ) -> None:
        async with self._engine.connect() as conn:
            conn = await conn.execution_options(**{WRITE_OPTION: True})
            async with conn.begin():
                actual = await self._last_seq(conn, conversation_id)
                if actual != expected_seq:
                    raise ConcurrencyConflict(conversation_id, expected_seq, actual)
                if rows:
                    await conn.execute(insert(events_table), rows)

    async def read(self, conversation_id: str, after_seq: int = 0) -> list[StoredEvent]:
        """See `EventStore.read`."""
        query = (
            select(events_table.c.seq, events_table.c.data)
            .where(events_table.c.conversation_id == conversation_id)
            .where(events_table.c.seq > after_seq)
            .order_by(events_table.c.seq)
        )
        try:
            async with self._engine.connect() as conn:
                result = await conn.execute(query)
                rows = result.all()
        except DB_ERRORS as exc:
            raise StoreError(f"reading {conversation_id!r} failed: {exc}") from exc
        return [StoredEvent(conversation_id, seq, loads_event(data)) for seq, data in rows]

    async def list_conversations(self) -> list[ConversationSummary]:
        """See `EventStore.list_conversations`."""
        query = (
            select(
                events_table.c.conversation_id,
                func.max(events_table.c.seq),
                func.max(events_table.c.recorded_at),
            )
            .group_by(events_table.c.conversation_id)
            # `id` grows with every insert, so the newest append has the largest one.
            .order_by(func.max(events_table.c.id).desc())
        )
        try:
            async with self._engine.connect() as conn:
                rows = (await conn.execute(query)).all()
        except DB_ERRORS as exc:
            raise StoreError(f"listing conversations failed: {exc}") from exc
        return [
            ConversationSummary(conversation_id=cid, last_seq=int(seq), updated_at=float(at))
            for cid, seq, at in rows
        ]

    async def last_seq(self, conversation_id: str) -> int:
        """See `EventStore.last_seq`."""
        try:
            async with self._engine.connect() as conn:
                return await self._last_seq(conn, conversation_id)
        except DB_ERRORS as exc:
            raise StoreError(f"reading {conversation_id!r} failed: {exc}") from exc

    @staticmethod
    async def _last_seq(conn: AsyncConnection, conversation_id: str) -> int:
        query = select(func.coalesce(func.max(events_table.c.seq), 0)).where(
            events_table.c.conversation_id == conversation_id
        )
        return int((await conn.execute(query)).scalar_one())

    async def close(self) -> None:
        """Dispose of the engine's connection pool."""
        await self._engine.dispose()
