"""The PostgreSQL backend on asyncpg, for several workers.

The hot path (append, read, last seq, the conversation locks) runs on asyncpg pools
directly, with statements asyncpg prepares once per connection: an append is ONE
statement, one round trip (`INSERT ... SELECT FROM unnest(...) WHERE <last seq> =
expected`), whatever the batch size. Under READ COMMITTED two appends racing for one seq
both pass the check; the second then waits on the unique (conversation_id, seq) index
and fails once the first commits, which becomes `ConcurrencyConflict` like a failed check.
Pooled connections keep no session state, so they go back to the pool without asyncpg's
reset query. Migrations, the listing and the other tables of the database (`engine`: the
knowledge index, the plan cache) stay on SQLAlchemy's async engine over asyncpg.

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
  connection of a second asyncpg pool, and holds that connection until the block ends.
  Every process on the database therefore excludes every other for that conversation. A
  connection whose lock state is unknown (cancelled while waiting, unlock failed) is
  closed, never pooled: the server frees a session's advisory locks when it ends, so a
  crashed worker never leaves a conversation locked either.

Keys are 64-bit BLAKE2b hashes of (schema, name), computed here rather than with
PostgreSQL's undocumented `hashtext`, so they are stable across server versions and
schemas do not share locks.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING, Any, TypeAlias

import asyncpg
from sqlalchemy import BigInteger, func, literal, select, text
from sqlalchemy.dialects.postgresql.asyncpg import PGDialect_asyncpg
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.sql.elements import BindParameter

from keel.errors import ConcurrencyConflict, StoreError
from keel.events.codec import SCHEMA_VERSION, dumps_event, loads_event
from keel.events.model import Event
from keel.ids import Clock
from keel.stores.errors import UnsupportedStoreUrl
from keel.stores.locks import KeyedLocks
from keel.stores.port import StoredEvent
from keel.stores.sql import DB_ERRORS, SqlEventStore

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+asyncpg")
"""URL schemes this backend accepts; all of them connect with asyncpg."""

CONNECT_TIMEOUT_S = 10.0
"""How long opening one connection may take before it fails."""

POOL_TIMEOUT_S = 30.0
"""How long an append or a read waits for a free pooled connection before it fails."""

CLOSE_TIMEOUT_S = 10.0
"""How long `close` waits for connections in use (a turn holding a lock) to come back."""

_LockConnection: TypeAlias = "PoolConnectionProxy[asyncpg.Record]"

PG_ERRORS = (
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    OSError,
    TimeoutError,
)
"""What an asyncpg call may raise that becomes `StoreError`: server errors, a refused or
dropped connection, a timeout (connecting, or waiting for a pooled connection), a
connection whose protocol a dropped session left mid-operation ("cannot switch to
state ...; another operation is in progress", seen after `pg_terminate_backend`)."""

_APPEND_SQL = """
INSERT INTO events (conversation_id, seq, kind, schema_version, data, recorded_at)
SELECT $1::text, $2::bigint + batch.n, batch.kind, $3::integer, batch.data, $4::float8
FROM unnest($5::text[], $6::text[]) WITH ORDINALITY AS batch (kind, data, n)
WHERE (SELECT coalesce(max(seq), 0) FROM events WHERE conversation_id = $1::text) = $2
ORDER BY batch.n
"""
_LAST_SEQ_SQL = "SELECT coalesce(max(seq), 0) FROM events WHERE conversation_id = $1"
_READ_SQL = "SELECT seq, data FROM events WHERE conversation_id = $1 AND seq > $2 ORDER BY seq"

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_SERVER_SETTINGS_IN_URL = ("options", "application_name", "synchronous_commit")
RELAXED_COMMITS = {"synchronous_commit": "off"}
_DURABLE_COMMIT_SQL = "SET LOCAL synchronous_commit TO on"
"""The append pool's session default: a commit is acknowledged once in PostgreSQL's memory
(a crash of Keel loses nothing; a crash of the database host can lose the last ones).
A durable append sets `synchronous_commit` back to `on` for its own transaction;
`?synchronous_commit=on` in the URL makes every commit durable."""
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
    parsed, settings = _server_settings(url, schema)
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


def _server_settings(url: str | URL, schema: str | None) -> tuple[URL, dict[str, str]]:
    """`url` without the query parameters that are server settings, and those settings."""
    parsed = postgres_url(url) if isinstance(url, str) else url
    settings = {"application_name": "keel"}
    for name in _SERVER_SETTINGS_IN_URL:
        value = parsed.query.get(name)
        if isinstance(value, str):
            settings[name] = value
    if schema is not None:
        settings["search_path"] = schema
    return parsed.difference_update_query(_SERVER_SETTINGS_IN_URL), settings


async def create_postgres_pool(
    url: str | URL,
    *,
    schema: str | None = None,
    max_size: int = 10,
    reset: Callable[[asyncpg.Connection], Awaitable[None]] | None = None,
    defaults: Mapping[str, str] | None = None,
) -> asyncpg.Pool:
    """An asyncpg pool of at most `max_size` connections, opened as they are needed, set up
    like `create_postgres_engine`'s (same URL parameters, server settings and timeouts).

    Released connections are not reset (unless `reset` says how): the store's connections
    change no session state and close any transaction they open (asyncpg rolls back one
    left open anyway, and waits for a cancelled query's cancellation before `reset`).
    """
    parsed, settings = _server_settings(url, schema)
    settings = {**(defaults or {}), **settings}  # what the URL says wins
    # The dialect's own translation (host, port, multi-host URLs, query parameters), so a
    # URL means the same connection to the pool as to the engine. SQLAlchemy is untyped here.
    dialect = PGDialect_asyncpg()  # type: ignore[no-untyped-call]
    connect_args: dict[str, Any] = dialect.create_connect_args(parsed)[1]  # type: ignore[no-untyped-call]
    # SQLAlchemy's names for asyncpg's statement cache; the rest goes to asyncpg.connect.
    cache_size = connect_args.pop("prepared_statement_cache_size", None)
    connect_args.pop("prepared_statement_name_func", None)
    if cache_size is not None:
        connect_args["statement_cache_size"] = cache_size
    pool: asyncpg.Pool = await asyncpg.create_pool(
        min_size=0,
        max_size=max_size,
        server_settings=settings,
        timeout=CONNECT_TIMEOUT_S,
        reset=reset or _keep_session,
        **connect_args,
    )
    return pool


async def _keep_session(_conn: asyncpg.Connection) -> None:
    """The pools' reset on release: nothing to reset (see `create_postgres_pool`)."""


class _LockSessions:
    """The lock pool's reset: sessions whose lock state is unknown (a waiter cancelled, an
    unlock that failed or found nothing) release every advisory lock before reuse; the
    others have released theirs explicitly and go back to the pool as they are."""

    def __init__(self) -> None:
        self.uncertain: set[int] = set()
        """Server pids of the pool's connections to clean on release."""

    async def reset(self, conn: asyncpg.Connection) -> None:
        pid = conn.get_server_pid()
        if pid in self.uncertain:
            self.uncertain.discard(pid)
            await conn.execute("SELECT pg_advisory_unlock_all()")


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
        pool: asyncpg.Pool,
        lock_pool: asyncpg.Pool,
        lock_sessions: _LockSessions,
        *,
        schema: str,
        clock: Clock | None = None,
        create_schema: bool = False,
    ) -> None:
        """Prefer `open`. `pool` and `lock_pool` must be on the same database and schema;
        `lock_pool` resets with `lock_sessions`."""
        super().__init__(engine, clock=clock, lock_scope=f"postgresql:{schema}")
        self._pool = pool
        self._lock_pool = lock_pool
        self._lock_sessions = lock_sessions
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
        connection's current schema is used. `pool_size` caps the connections for appends
        and reads (and, separately, those of `engine`), `lock_pool_size` those holding
        conversation locks (one per conversation with a turn running or waiting in this
        process). Connections are opened as they are needed.
        """
        if schema is not None and not _SCHEMA_NAME.fullmatch(schema):
            raise StoreError(f"invalid schema name {schema!r}: use [a-z_][a-z0-9_]*")
        parsed = postgres_url(url)
        engine = create_postgres_engine(parsed, schema=schema, pool_size=pool_size)
        pools: list[asyncpg.Pool] = []
        try:
            current = await _current_schema(engine, parsed)
            resolved = schema or current
            if resolved is None:
                raise StoreError("no schema on the search path exists; create one or pass one")
            lock_sessions = _LockSessions()
            # The appends' sessions commit without waiting for the WAL flush unless an
            # append asks to be durable (`append(durable=True)`) or the URL sets it.
            pools.append(
                await create_postgres_pool(
                    parsed, schema=schema, max_size=pool_size, defaults=RELAXED_COMMITS
                )
            )
            pools.append(
                await create_postgres_pool(
                    parsed, schema=schema, max_size=lock_pool_size, reset=lock_sessions.reset
                )
            )
            store = cls(
                engine,
                pools[0],
                pools[1],
                lock_sessions,
                schema=resolved,
                clock=clock,
                create_schema=schema is not None,
            )
            await store.migrate()
        except BaseException:
            for pool in pools:
                pool.terminate()
            await engine.dispose()
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

    async def append(
        self,
        conversation_id: str,
        expected_seq: int,
        events: Sequence[Event],
        *,
        durable: bool = True,
    ) -> list[StoredEvent]:
        """See `EventStore.append`: one statement, checked and inserted at once."""
        if not events:
            actual = await self.last_seq(conversation_id)
            if actual != expected_seq:
                raise ConcurrencyConflict(conversation_id, expected_seq, actual)
            return []
        kinds = [event.kind for event in events]
        data = [dumps_event(event) for event in events]
        now = self._clock.now().timestamp()
        try:
            async with self._pool.acquire(timeout=POOL_TIMEOUT_S) as conn:
                args = (conversation_id, expected_seq, SCHEMA_VERSION, now, kinds, data)
                if durable:
                    async with conn.transaction():
                        await conn.execute(_DURABLE_COMMIT_SQL)
                        status = await conn.execute(_APPEND_SQL, *args)
                else:
                    status = await conn.execute(_APPEND_SQL, *args)
        except asyncpg.UniqueViolationError as exc:
            # Another writer stored one of our seqs between our check and our insert.
            actual = await self.last_seq(conversation_id)
            if actual == expected_seq:
                raise StoreError(f"append to {conversation_id!r} failed: {exc}") from exc
            raise ConcurrencyConflict(conversation_id, expected_seq, actual) from exc
        except asyncpg.DataError as exc:
            # asyncpg's message quotes the argument, i.e. the event JSON: never repeat it.
            why = (
                "an event holds text that is not valid UTF-8 (a lone surrogate)"
                if isinstance(exc.__cause__, UnicodeEncodeError)
                else "an event could not be sent to PostgreSQL"
            )
            raise StoreError(f"append to {conversation_id!r} failed: {why}") from exc
        except PG_ERRORS as exc:
            raise StoreError(f"append to {conversation_id!r} failed: {exc}") from exc
        if status != f"INSERT 0 {len(events)}":
            actual = await self.last_seq(conversation_id)
            if actual == expected_seq:  # nothing inserted, yet the check held: cannot be
                raise StoreError(f"append to {conversation_id!r} failed: {status}")
            raise ConcurrencyConflict(conversation_id, expected_seq, actual)
        return [
            StoredEvent(conversation_id, seq, event)
            for seq, event in enumerate(events, start=expected_seq + 1)
        ]

    async def read(self, conversation_id: str, after_seq: int = 0) -> list[StoredEvent]:
        """See `EventStore.read`."""
        try:
            async with self._pool.acquire(timeout=POOL_TIMEOUT_S) as conn:
                rows = await conn.fetch(_READ_SQL, conversation_id, after_seq)
        except PG_ERRORS as exc:
            raise StoreError(f"reading {conversation_id!r} failed: {exc}") from exc
        return [StoredEvent(conversation_id, seq, loads_event(data)) for seq, data in rows]

    async def last_seq(self, conversation_id: str) -> int:
        """See `EventStore.last_seq`."""
        try:
            async with self._pool.acquire(timeout=POOL_TIMEOUT_S) as conn:
                value = await conn.fetchval(_LAST_SEQ_SQL, conversation_id)
        except PG_ERRORS as exc:
            raise StoreError(f"reading {conversation_id!r} failed: {exc}") from exc
        return int(value)

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

    async def _advisory_lock(self, conversation_id: str, key: int) -> _LockConnection:
        try:
            # No timeout: a waiter waits as long as the holders' turns; the caller bounds it.
            conn = await self._lock_pool.acquire()
        except PG_ERRORS as exc:
            raise StoreError(f"locking conversation {conversation_id!r} failed: {exc}") from exc
        try:
            await conn.execute("SELECT pg_advisory_lock($1)", key)
        except PG_ERRORS as exc:
            await self._discard(conn)
            raise StoreError(f"locking conversation {conversation_id!r} failed: {exc}") from exc
        except BaseException:
            # Cancelled while waiting: the lock may have been granted an instant earlier.
            await self._discard(conn)
            raise
        return conn

    async def _advisory_unlock(self, conn: _LockConnection, conversation_id: str, key: int) -> None:
        try:
            released = bool(await conn.fetchval("SELECT pg_advisory_unlock($1)", key))
        except PG_ERRORS as exc:
            # The session is gone or unusable; ending it frees the lock on the server.
            # Not raised: the turn's outcome stands, and appends stay seq-checked anyway.
            _log.warning("unlocking conversation %r failed: %s", conversation_id, exc)
            await self._discard(conn)
            return
        except BaseException:
            await self._discard(conn)
            raise
        if not released:
            _log.warning("conversation %r was no longer locked at unlock", conversation_id)
            await self._discard(conn)
            return
        with suppress(*PG_ERRORS):
            await self._lock_pool.release(conn)

    async def _discard(self, conn: _LockConnection) -> None:
        """Give back `conn`, whose lock state is unknown: the pool waits for a cancelled
        query's cancellation, then releases all of the session's advisory locks (or ends
        the session, if that fails) before anyone reuses it."""
        with suppress(*PG_ERRORS):
            self._lock_sessions.uncertain.add(conn.get_server_pid())
        # Shielded: a second cancellation must not leave the connection half given back.
        with suppress(Exception):
            await asyncio.shield(self._lock_pool.release(conn))

    async def close(self) -> None:
        """Close the asyncpg pools (connections still in use get `CLOSE_TIMEOUT_S` to come
        back, then are cut) and dispose of the engine."""
        try:
            for pool in (self._pool, self._lock_pool):
                try:
                    await asyncio.wait_for(pool.close(), CLOSE_TIMEOUT_S)
                except PG_ERRORS:  # TimeoutError included
                    pool.terminate()
        finally:
            await super().close()


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
