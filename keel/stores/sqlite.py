"""The SQLite backend: a file database in WAL mode, driven through aiosqlite.

Python's sqlite3 driver begins transactions lazily and only before DML, which breaks both
transactional DDL and the read-then-insert of an append. So the driver's own transaction
handling is switched off and SQLAlchemy's `begin` emits BEGIN itself: BEGIN IMMEDIATE for
connections marked as writers (taking the write lock before reading the last seq, so two
writers are serialised and the second sees the first's events), plain BEGIN for readers.
WAL lets readers proceed while a writer holds the lock; `busy_timeout` makes a second
writer wait for the lock instead of failing at once.

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
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from keel.ids import Clock
from keel.stores.sql import WRITE_OPTION, SqlEventStore

BUSY_TIMEOUT_MS = 10_000
"""How long a writer waits for another writer's lock before failing."""

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


class SqliteEventStore(SqlEventStore):
    """`EventStore` in a SQLite file. Several instances (or processes) may share one file;
    `conversation_lock` serialises turns within one process only.

    SQLite has one writer at a time: writes of this process queue on an asyncio lock
    instead of racing for `BEGIN IMMEDIATE` and backing off in the busy handler, which
    otherwise gives long latency tails under concurrent turns (bench/RESULTS.md).
    """

    _write_lock: asyncio.Lock | None = None

    async def _insert(
        self, conversation_id: str, expected_seq: int, rows: list[dict[str, object]]
    ) -> None:
        if self._write_lock is None:
            self._write_lock = asyncio.Lock()
        async with self._write_lock:
            await super()._insert(conversation_id, expected_seq, rows)

    @classmethod
    async def open(cls, path: str | Path, *, clock: Clock | None = None) -> SqliteEventStore:
        """Open (creating it and its parent folders if needed) and migrate the file at `path`."""
        file = Path(path)
        if os.name == "posix":
            make_private(file)
        else:
            file.parent.mkdir(parents=True, exist_ok=True)
        scope = f"sqlite:{file.resolve()}"
        store = cls(create_sqlite_engine(file), clock=clock, lock_scope=scope)
        try:
            await store.migrate()
        except BaseException:
            await store.close()
            raise
        return store
