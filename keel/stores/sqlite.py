"""The SQLite backend: a file database in WAL mode, on the standard `sqlite3` module.

The hot path (append, read, last seq) runs on plain `sqlite3` connections owned by threads
of their own (`keel.stores.sqlite_threads`): one writer thread per file and process, which
every store of this process on the file shares, and two reader threads. An append is one
job for the writer: BEGIN IMMEDIATE (taking the write lock before reading the last seq, so
writers of other processes are serialised too and the second sees the first's events), the
seq check, one `executemany` of the whole batch and COMMIT, handed over and answered with
one thread hop each way. Events are encoded by `keel.events.codec` before the hand-over.
WAL lets readers proceed while a writer holds the lock; `busy_timeout` makes a writer of
another process wait for the lock instead of failing at once.

`synchronous` is NORMAL (`SYNCHRONOUS`, the default) or FULL (docs/events.md says what
each can lose): in WAL mode both survive a crash of the process, only FULL also survives
a power loss or an operating-system crash.

Migrations, listing and the other tables of the database (the knowledge index, the plan
cache: `engine`) go through SQLAlchemy on aiosqlite, whose connections hand transaction
control to SQLAlchemy: its `begin` emits BEGIN IMMEDIATE for connections marked as
writers, plain BEGIN for readers (Python's driver would begin lazily, before DML only,
which breaks transactional DDL).

`conversation_lock` is an in-process asyncio lock (shared by every store of this process on
the same file). Several processes may read and append to one file safely, but they do not
serialise each other's turns: serving one SQLite file from several processes (`--workers`
above 1) is not supported; use PostgreSQL for that.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import stat
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import event
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from keel.errors import ConcurrencyConflict, StoreError
from keel.events.codec import SCHEMA_VERSION, dumps_event, loads_event
from keel.events.model import Event
from keel.ids import Clock
from keel.stores.port import StoredEvent
from keel.stores.sql import WRITE_OPTION, SqlEventStore
from keel.stores.sqlite_threads import (
    Connector,
    SqliteFile,
    WouldBlock,
    acquire_file,
    release_file,
)

BUSY_TIMEOUT_MS = 10_000
"""How long a writer waits for another writer's lock before failing."""

Synchronous = Literal["NORMAL", "FULL"]

SYNCHRONOUS: Synchronous = "NORMAL"
"""The event connections' default `PRAGMA synchronous`. In WAL mode NORMAL syncs the log at
checkpoints, not at every commit: a crash of the process loses nothing committed, a power
loss or an operating-system crash may lose the last commits (never the file's consistency).
FULL syncs every commit (an fsync each, several milliseconds on some disks). docs/events.md
gives the measurements and the reasons."""

DB_ERRORS = (sqlite3.Error, OSError)
"""What a `sqlite3` call may raise that becomes `StoreError`."""

PRIVATE_FOLDER_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
"""The log holds personal data in clear: only the owner may read it (see `make_private`)."""

STATE_FOLDER = ".keel"
"""The name of Keel's own state folder (`keel run`'s default store lives in it)."""

_COMPANIONS = ("-wal", "-shm", "-journal")

_log = logging.getLogger("keel.stores")


def make_private(file: Path) -> None:
    """Create the database `file` (and its folder) readable by its owner only.

    A folder created here is 0700 and the file is created 0600, whatever the umask;
    SQLite gives the `-wal` and `-shm` files the database file's mode. An existing file
    (or companion) that others may read is tightened to 0600, an existing `.keel/` folder
    to 0700, when this process owns them (a warning otherwise); any other existing folder
    belongs to the operator and is left as it is.
    """
    folder = file.parent
    if not folder.exists():
        folder.mkdir(parents=True, exist_ok=True, mode=PRIVATE_FOLDER_MODE)
        _tighten(folder, PRIVATE_FOLDER_MODE)
    elif folder.name == STATE_FOLDER:
        _tighten(folder, PRIVATE_FOLDER_MODE)
    os.close(os.open(file, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE))
    for path in (file, *(Path(f"{file}{suffix}") for suffix in _COMPANIONS)):
        if path.exists():
            _tighten(path, PRIVATE_FILE_MODE)


def _tighten(path: Path, private: int) -> None:
    current = stat.S_IMODE(path.stat().st_mode)
    if current & ~private == 0:
        return
    try:
        path.chmod(current & private)
    except PermissionError:
        _log.warning(
            "%s is mode %o; it should be %o (only its owner can change it)", path, current, private
        )


def create_sqlite_engine(path: Path) -> AsyncEngine:
    """An async engine on the SQLite file `path`, set up for WAL and explicit transactions."""
    # hide_parameters: a driver error names the statement, never the event JSON it carried.
    engine = create_async_engine(f"sqlite+aiosqlite:///{path}", hide_parameters=True)
    event.listen(engine.sync_engine, "connect", _on_connect)
    event.listen(engine.sync_engine, "begin", _on_begin)
    return engine


def _on_connect(dbapi_connection: Any, _record: Any) -> None:
    # Hand transaction control to SQLAlchemy (see the module docstring).
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        # busy_timeout first: switching to WAL may itself need to wait for a lock.
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        _enable_wal(cursor)
    finally:
        cursor.close()


def _enable_wal(cursor: Any) -> None:
    """Switch the file to WAL. Several connections opening a new file at once race for the
    switch, and SQLite answers the losers "database is locked" without using the busy
    timeout; they retry briefly (the winner's switch is quick)."""
    for attempt in range(WAL_ATTEMPTS):
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == WAL_ATTEMPTS - 1:
                raise
            time.sleep(0.01 * (attempt + 1))


WAL_ATTEMPTS = 20


def _on_begin(conn: Connection) -> None:
    writer = bool(conn.get_execution_options().get(WRITE_OPTION))
    conn.exec_driver_sql("BEGIN IMMEDIATE" if writer else "BEGIN")


_LAST_SEQ_SQL = "SELECT coalesce(max(seq), 0) FROM events WHERE conversation_id = ?"
_INSERT_SQL = (
    "INSERT INTO events (conversation_id, seq, kind, schema_version, data, recorded_at) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)
_READ_SQL = "SELECT seq, data FROM events WHERE conversation_id = ? AND seq > ? ORDER BY seq"

_Row = tuple[str, int, str, int, str, float]


def event_connector(path: Path, synchronous: Synchronous) -> Connector:
    """Opens a `sqlite3` connection on `path` for the event threads: autocommit (every
    transaction is begun explicitly), WAL, the busy timeout and `synchronous`."""

    def connect() -> sqlite3.Connection:
        # check_same_thread off: the writer's connection may run a commit on the caller's
        # thread (`ConnectionThreads.try_here`), one thread at a time.
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            _enable_wal(conn)
            conn.execute(f"PRAGMA synchronous = {synchronous}")
            conn.execute("PRAGMA wal_autocheckpoint = 0")  # the writer checkpoints itself
        except BaseException:
            conn.close()
            raise
        return conn

    return connect


def _stored_last_seq(conn: sqlite3.Connection, conversation_id: str) -> int:
    row = conn.execute(_LAST_SEQ_SQL, (conversation_id,)).fetchone()
    return int(row[0])


def _append_rows(
    conn: sqlite3.Connection,
    conversation_id: str,
    expected_seq: int,
    rows: list[_Row],
    synced: bool = False,
    checkpoint: bool = False,
) -> int:
    """The writer's job: insert `rows` if the last seq is `expected_seq`, in one transaction.
    Returns the last seq found (the rows were written if and only if it is `expected_seq`).
    `synced`: this commit syncs the log to disk (FULL) on a NORMAL connection, and with it
    every commit before it (the WAL is one file, synced whole). `checkpoint`: then copy the
    log into the database file (`_checkpoint`)."""
    if synced:
        conn.execute("PRAGMA synchronous = FULL")  # outside the transaction: SQLite's rule
        try:
            return _append_rows(conn, conversation_id, expected_seq, rows, False, checkpoint)
        finally:
            conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("BEGIN IMMEDIATE")
    actual = _insert_rows(conn, conversation_id, expected_seq, rows)
    if checkpoint:
        _checkpoint(conn)
    return actual


def _insert_rows(
    conn: sqlite3.Connection, conversation_id: str, expected_seq: int, rows: list[_Row]
) -> int:
    """`_append_rows` once its write transaction has begun: commits it, or rolls it back."""
    try:
        actual = _stored_last_seq(conn, conversation_id)
        if actual != expected_seq:
            conn.execute("ROLLBACK")
            return actual
        conn.executemany(_INSERT_SQL, rows)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return actual


def _append_rows_here(
    conn: sqlite3.Connection, conversation_id: str, expected_seq: int, rows: list[_Row]
) -> int:
    """`_append_rows` on the caller's thread: it must not wait, so the write lock is taken
    with no busy timeout, and `WouldBlock` (the job goes to the writer's thread) when
    another connection holds it."""
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if conn.in_transaction or "locked" not in str(exc):
            raise
        raise WouldBlock from exc
    finally:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return _insert_rows(conn, conversation_id, expected_seq, rows)


def _read_rows_here(
    conn: sqlite3.Connection, conversation_id: str, after_seq: int
) -> list[tuple[int, str]]:
    """`_read_rows` on the caller's thread (the writer's idle connection): with no busy
    timeout, and `WouldBlock` (a reader thread reads instead) when the file is locked."""
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        return _read_rows(conn, conversation_id, after_seq)
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc):
            raise
        raise WouldBlock from exc
    finally:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def _checkpoint(conn: sqlite3.Connection) -> None:
    """Copy the log's pages into the database file where no reader needs them (PASSIVE:
    it never waits for readers or writers)."""
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")


CHECKPOINT_BYTES = 4 * 1024 * 1024
"""The writer checkpoints, on its thread, after about this much event data (SQLite's own
automatic checkpoint, off on the writer's connection, runs at 1,000 pages, about 4 MB)."""


def _read_rows(
    conn: sqlite3.Connection, conversation_id: str, after_seq: int
) -> list[tuple[int, str]]:
    return conn.execute(_READ_SQL, (conversation_id, after_seq)).fetchall()


def _ping(conn: sqlite3.Connection) -> None:
    conn.execute("SELECT 1").fetchone()


class SqliteEventStore(SqlEventStore):
    """`EventStore` in a SQLite file. Several instances (or processes) may share one file;
    `conversation_lock` serialises turns within one process only.

    SQLite has one writer at a time: the appends of this process queue on the file's one
    writer thread instead of racing for `BEGIN IMMEDIATE` and backing off in the busy
    handler, which otherwise gives long latency tails under concurrent turns.
    """

    def __init__(
        self, engine: AsyncEngine, file: SqliteFile, *, clock: Clock | None, lock_scope: str
    ) -> None:
        """Prefer `open`. `file` holds the event threads of the database `engine` is on."""
        super().__init__(engine, clock=clock, lock_scope=lock_scope)
        self._file: SqliteFile | None = file

    def _threads(self) -> SqliteFile:
        if self._file is None:
            raise StoreError("the SQLite event store is closed")
        return self._file

    async def append(
        self,
        conversation_id: str,
        expected_seq: int,
        events: Sequence[Event],
        *,
        durable: bool = True,
    ) -> list[StoredEvent]:
        """See `EventStore.append`."""
        if not events:
            actual = await self.last_seq(conversation_id)
            if actual != expected_seq:
                raise ConcurrencyConflict(conversation_id, expected_seq, actual)
            return []
        now = self._clock.now().timestamp()
        rows: list[_Row] = [
            (conversation_id, seq, event.kind, SCHEMA_VERSION, dumps_event(event), now)
            for seq, event in enumerate(events, start=expected_seq + 1)
        ]
        threads = self._threads()
        # A durable commit on a NORMAL file is synced (FULL) for that commit alone.
        synced = durable and threads.key[1] == "NORMAL"
        threads.unchecked += sum(len(row[4]) for row in rows)
        try:
            # A commit that does not wait for the disk runs here, on the loop's thread,
            # when the writer is idle: cheaper than the two thread hops of handing it over.
            # A sync, a checkpoint or a busy file goes to the writer's thread.
            checkpoint = threads.unchecked >= CHECKPOINT_BYTES
            done, found = (
                threads.writer.try_here(_append_rows_here, conversation_id, expected_seq, rows)
                if not (durable or checkpoint) and threads.key[1] == "NORMAL"
                else (False, None)
            )
            if done and found is not None:
                actual = found
            else:
                if checkpoint:
                    threads.unchecked = 0
                actual = await threads.writer.call(
                    _append_rows, conversation_id, expected_seq, rows, synced, checkpoint
                )
        except sqlite3.IntegrityError as exc:
            # Another writer stored one of our seqs between our check and our insert.
            actual = await self.last_seq(conversation_id)
            if actual == expected_seq:
                raise StoreError(f"append to {conversation_id!r} failed: {exc}") from exc
            raise ConcurrencyConflict(conversation_id, expected_seq, actual) from exc
        except DB_ERRORS as exc:
            raise StoreError(f"append to {conversation_id!r} failed: {exc}") from exc
        except UnicodeEncodeError as exc:
            raise StoreError(
                f"append to {conversation_id!r} failed: an event holds text that is not "
                "valid UTF-8 (a lone surrogate)"
            ) from exc
        if actual != expected_seq:
            raise ConcurrencyConflict(conversation_id, expected_seq, actual)
        return [
            StoredEvent(conversation_id, seq, event)
            for seq, event in enumerate(events, start=expected_seq + 1)
        ]

    async def read(self, conversation_id: str, after_seq: int = 0) -> list[StoredEvent]:
        """See `EventStore.read`."""
        threads = self._threads()
        try:
            # The tail after a seq the caller knows (the engine's check for what other
            # writers appended: usually nothing) is read here when the writer is idle;
            # a whole log, or a busy writer, on a reader thread.
            done, found = (
                threads.writer.try_here(_read_rows_here, conversation_id, after_seq)
                if after_seq > 0
                else (False, None)
            )
            rows = (
                found
                if done and found is not None
                else await threads.readers.call(_read_rows, conversation_id, after_seq)
            )
        except DB_ERRORS as exc:
            raise StoreError(f"reading {conversation_id!r} failed: {exc}") from exc
        return [StoredEvent(conversation_id, seq, loads_event(data)) for seq, data in rows]

    async def last_seq(self, conversation_id: str) -> int:
        """See `EventStore.last_seq`."""
        readers = self._threads().readers
        try:
            return await readers.call(_stored_last_seq, conversation_id)
        except DB_ERRORS as exc:
            raise StoreError(f"reading {conversation_id!r} failed: {exc}") from exc

    async def close(self) -> None:
        """Stop using the file's event threads (the last store on it stops them) and
        dispose of the engine."""
        file, self._file = self._file, None
        try:
            if file is not None:
                await asyncio.to_thread(release_file, file)
        finally:
            await super().close()

    @classmethod
    async def open(
        cls, path: str | Path, *, clock: Clock | None = None, synchronous: Synchronous | None = None
    ) -> SqliteEventStore:
        """Open (creating it and its parent folders if needed) and migrate the file at `path`.

        `synchronous` overrides `SYNCHRONOUS` for this store's event connections.
        """
        file = Path(path)
        if os.name == "posix":
            make_private(file)
        else:
            file.parent.mkdir(parents=True, exist_ok=True)
        scope = f"sqlite:{file.resolve()}"
        engine = create_sqlite_engine(file)
        mode: Synchronous = synchronous or SYNCHRONOUS
        threads: SqliteFile | None = None
        try:
            await SqlEventStore(engine, clock=clock).migrate()
            threads = acquire_file(file, mode, lambda: event_connector(file, mode))
            await threads.writer.call(_ping)
        except DB_ERRORS as exc:
            await _abandon(engine, threads)
            raise StoreError(f"opening the SQLite event store {file} failed: {exc}") from exc
        except BaseException:
            await _abandon(engine, threads)
            raise
        return cls(engine, threads, clock=clock, lock_scope=scope)


async def _abandon(engine: AsyncEngine, threads: SqliteFile | None) -> None:
    if threads is not None:
        await asyncio.to_thread(release_file, threads)
    await engine.dispose()
