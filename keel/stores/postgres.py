"""The PostgreSQL backend: asyncpg through SQLAlchemy's async engine, for several workers.

The tables, migrations, appends and reads are the shared SQL layer (`keel.stores.sql`);
this module adds what only PostgreSQL does:

* **URLs.** `postgresql://`, `postgres://` and `postgresql+asyncpg://` all mean asyncpg.
  Query parameters go to `asyncpg.connect` (e.g. `?ssl=require`), except the libpq-style
  `options` (e.g. `?options=-csearch_path%3Dkeel`) and `application_name`, which are sent
  as server settings.
* **Schema.** The tables live in the connection's current schema (the first existing one
  on the search path, normally `public`), or in the schema given to `open(schema=...)`,
  which is then created if missing.
* **Migrations** run in one transaction that first takes the transaction-level advisory
  lock `pg_advisory_xact_lock(migration_key)`, so several workers starting at once on a
  new database migrate it once; the others wait, then find nothing to do.
* **Turn serialisation.** `conversation_lock` takes an in-process lock for the
  conversation, then the session-level advisory lock `pg_advisory_lock(lock_key(id))` on a
  connection of a second, autocommit pool, and holds that connection until the block ends.
  Every process on the database therefore excludes every other for that conversation. A
  connection whose lock state is unknown (cancelled while waiting, unlock failed) is
  closed, never pooled: the server frees a session's advisory locks when it ends, so a
  crashed worker never leaves a conversation locked either.

Keys are 64-bit BLAKE2b hashes of (schema, name), computed here rather than with
PostgreSQL's undocumented `hashtext`, so they are stable across server versions and
schemas do not share locks.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

from sqlalchemy import BigInteger, func, literal, select, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.sql.elements import BindParameter

from keel.errors import StoreError
from keel.ids import Clock
from keel.stores.errors import UnsupportedStoreUrl
from keel.stores.locks import KeyedLocks
from keel.stores.sql import DB_ERRORS, SqlEventStore

POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+asyncpg")
"""URL schemes this backend accepts; all of them connect with asyncpg."""

CONNECT_TIMEOUT_S = 10.0
"""How long opening one connection may take before it fails."""

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_SERVER_SETTINGS_IN_URL = ("options", "application_name")
_log = logging.getLogger(__name__)


def postgres_url(url: str) -> URL:
    """`url` as a SQLAlchemy URL for asyncpg; `UnsupportedStoreUrl` if it is not PostgreSQL."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise UnsupportedStoreUrl(f"{url!r} is not a database URL") from exc
    if parsed.drivername not in POSTGRES_SCHEMES:
        raise UnsupportedStoreUrl(
            f"unsupported PostgreSQL URL scheme {parsed.drivername!r}; "
            "use postgresql:// or postgresql+asyncpg://"
        )
    return parsed.set(drivername="postgresql+asyncpg")


def create_postgres_engine(
    url: str | URL, *, schema: str | None = None, pool_size: int = 10, autocommit: bool = False
) -> AsyncEngine:
    """An asyncpg engine with at most `pool_size` connections, pinged before reuse.

    `schema` becomes the search path. `autocommit` engines (for advisory locks) run every
    statement in its own transaction and wait for a free connection as long as it takes.
    """
    parsed = postgres_url(url) if isinstance(url, str) else url
    settings = {"application_name": "keel"}
    for name in _SERVER_SETTINGS_IN_URL:
        value = parsed.query.get(name)
        if isinstance(value, str):
            settings[name] = value
    parsed = parsed.difference_update_query(_SERVER_SETTINGS_IN_URL)
    if schema is not None:
        settings["search_path"] = schema
    options: dict[str, Any] = {
        "pool_size": pool_size,
        "max_overflow": 0,
        "pool_pre_ping": True,
        # A driver error names the statement, never the event JSON it carried (PII).
        "hide_parameters": True,
        "connect_args": {"server_settings": settings, "timeout": CONNECT_TIMEOUT_S},
    }
    if autocommit:
        # A lock waiter already waits as long as the holder's turn; the caller bounds it.
        options.update(isolation_level="AUTOCOMMIT", pool_timeout=None)
    return create_async_engine(parsed, **options)


def advisory_key(namespace: str, schema: str, name: str) -> int:
    """A signed 64-bit advisory lock key for `name` in `schema`, stable across processes."""
    material = f"{schema}\0{name}".encode("utf-8", "surrogatepass")
    digest = hashlib.blake2b(material, digest_size=8, person=namespace.encode()).digest()
    return int.from_bytes(digest, "big", signed=True)


class PostgresEventStore(SqlEventStore):
    """`EventStore` on PostgreSQL; any number of processes may serve one database."""

    def __init__(
        self,
        engine: AsyncEngine,
        lock_engine: AsyncEngine,
        *,
        schema: str,
        clock: Clock | None = None,
        create_schema: bool = False,
    ) -> None:
        """Prefer `open`. `lock_engine` must be an autocommit engine on the same database."""
        super().__init__(engine, clock=clock, lock_scope=f"postgresql:{schema}")
        self._lock_engine = lock_engine
        self._schema = schema
        self._create_schema = create_schema
        self._local_locks = KeyedLocks()

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        schema: str | None = None,
        clock: Clock | None = None,
        pool_size: int = 10,
        lock_pool_size: int = 20,
    ) -> PostgresEventStore:
        """Connect, migrate and return the store on the database `url` names.

        `schema` (lowercase letters, digits, `_`) is created if missing; without it the
        connection's current schema is used. `pool_size` caps the connections for reads and
        appends, `lock_pool_size` those holding conversation locks (one per conversation
        with a turn running or waiting in this process).
        """
        if schema is not None and not _SCHEMA_NAME.fullmatch(schema):
            raise StoreError(f"invalid schema name {schema!r}: use [a-z_][a-z0-9_]*")
        parsed = postgres_url(url)
        engine = create_postgres_engine(parsed, schema=schema, pool_size=pool_size)
        lock_engine = create_postgres_engine(
            parsed, schema=schema, pool_size=lock_pool_size, autocommit=True
        )
        try:
            current = await _current_schema(engine, parsed)
            resolved = schema or current
            if resolved is None:
                raise StoreError("no schema on the search path exists; create one or pass one")
            store = cls(
                engine,
                lock_engine,
                schema=resolved,
                clock=clock,
                create_schema=schema is not None,
            )
            await store.migrate()
        except BaseException:
            await engine.dispose()
            await lock_engine.dispose()
            raise
        return store

    @property
    def schema(self) -> str:
        """The schema holding this store's tables."""
        return self._schema

    def lock_key(self, conversation_id: str) -> int:
        """The `pg_advisory_lock` key of `conversation_id` (to find it in `pg_locks`)."""
        return advisory_key("keel.conv", self._schema, conversation_id)

    def migration_key(self) -> int:
        """The `pg_advisory_xact_lock` key migrations of this schema take."""
        return advisory_key("keel.migrate", self._schema, "")

    async def _prepare_migration(self, conn: AsyncConnection) -> None:
        await conn.execute(select(func.pg_advisory_xact_lock(_bigint(self.migration_key()))))
        if self._create_schema:
            exists = await conn.execute(
                text("SELECT 1 FROM pg_namespace WHERE nspname = :name"),
                {"name": self._schema},
            )
            if exists.first() is None:
                # The name is validated by `open`; identifiers cannot be bound parameters.
                await conn.execute(text(f'CREATE SCHEMA "{self._schema}"'))

    @asynccontextmanager
    async def conversation_lock(self, conversation_id: str) -> AsyncIterator[None]:
        """See `EventStore.conversation_lock`: excludes every process on the database."""
        key = self.lock_key(conversation_id)
        async with self._local_locks.hold(conversation_id):
            conn = await self._advisory_lock(conversation_id, key)
            try:
                yield
            finally:
                await self._advisory_unlock(conn, conversation_id, key)

    async def _advisory_lock(self, conversation_id: str, key: int) -> AsyncConnection:
        try:
            conn = await self._lock_engine.connect()
        except DB_ERRORS as exc:
            raise StoreError(f"locking conversation {conversation_id!r} failed: {exc}") from exc
        try:
            await conn.execute(select(func.pg_advisory_lock(_bigint(key))))
        except DB_ERRORS as exc:
            await _discard(conn)
            raise StoreError(f"locking conversation {conversation_id!r} failed: {exc}") from exc
        except BaseException:
            # Cancelled while waiting: the lock may have been granted an instant earlier.
            await _discard(conn)
            raise
        return conn

    async def _advisory_unlock(self, conn: AsyncConnection, conversation_id: str, key: int) -> None:
        try:
            result = await conn.execute(select(func.pg_advisory_unlock(_bigint(key))))
            released = bool(result.scalar_one())
        except DB_ERRORS as exc:
            # The session is gone or unusable; ending it frees the lock on the server.
            # Not raised: the turn's outcome stands, and appends stay seq-checked anyway.
            _log.warning("unlocking conversation %r failed: %s", conversation_id, exc)
            await _discard(conn)
            return
        except BaseException:
            await _discard(conn)
            raise
        if not released:
            _log.warning("conversation %r was no longer locked at unlock", conversation_id)
            await _discard(conn)
            return
        with suppress(*DB_ERRORS):
            await conn.close()

    async def close(self) -> None:
        """Dispose of both connection pools."""
        try:
            await super().close()
        finally:
            await self._lock_engine.dispose()


def _bigint(value: int) -> BindParameter[int]:
    # An explicit BIGINT bind: asyncpg would otherwise be told INTEGER and reject 64 bits.
    return literal(value, BigInteger)


async def _current_schema(engine: AsyncEngine, url: URL) -> str | None:
    try:
        async with engine.connect() as conn:
            value = (await conn.execute(select(func.current_schema()))).scalar_one()
    except DB_ERRORS as exc:
        where = url.render_as_string(hide_password=True)
        raise StoreError(f"cannot connect to PostgreSQL at {where}: {exc}") from exc
    return None if value is None else str(value)


async def _discard(conn: AsyncConnection) -> None:
    """Close `conn` for good (never back to the pool), releasing its session locks."""
    with suppress(Exception):
        await conn.invalidate()
    with suppress(Exception):
        await conn.close()
