"""Threads that own SQLite connections, and the asyncio side that hands them work.

The standard `sqlite3` module blocks, so its connections live on threads of their own and
the event loop hands each call over as one job: one queue put on the way in, one
`call_soon_threadsafe` on the way back, whatever the call does (a whole append transaction
with its `executemany` is a single job). A connection is opened and closed on its own
thread, and used by one thread at a time: its thread, or (`try_here`) the caller's, when
the connection is idle and nothing is queued for it. Handing a job over and back costs
two thread wake-ups (about 40-80 µs on these machines), more than a short transaction
itself (about 45 µs for a commit that does not wait for the disk), so the writer runs
such a commit on the caller's thread when it can (`keel.stores.sqlite`).

* `ConnectionThreads`: one queue served by `count` threads, each with its own connection.
  The writer of a file is one of these with one thread; its readers another.
* `SqliteFile`: the writer and the readers of one database file, shared (counted) by every
  store of this process on that file, so two stores on one file queue on one writer
  instead of racing for SQLite's write lock.
"""

from __future__ import annotations

import asyncio
import os
import queue
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

_T = TypeVar("_T")

Connector = Callable[[], sqlite3.Connection]
"""Opens and sets up one connection (runs on the thread that will own it)."""

_Job = tuple[Callable[..., Any], tuple[Any, ...], asyncio.AbstractEventLoop, "asyncio.Future[Any]"]


def _resolve(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.cancelled():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class WouldBlock(Exception):
    """Raised by a `try_here` job that would have to wait: it is handed over instead."""


class ConnectionThreads:
    """`count` daemon threads, each owning one connection, serving one job queue."""

    def __init__(self, connect: Connector, *, count: int, name: str) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._stopped = False
        self._using = threading.Lock()
        """Held while a connection runs a job (on its thread or, `try_here`, the caller's)."""
        self._connection: sqlite3.Connection | None = None
        """The connection of a single thread, once open (`try_here` borrows it)."""
        self._single = count == 1
        self._threads = [
            threading.Thread(target=self._serve, args=(connect,), name=f"{name}-{i}", daemon=True)
            for i in range(count)
        ]
        for thread in self._threads:
            thread.start()

    async def call(self, fn: Callable[..., _T], *args: Any) -> _T:
        """`fn(connection, *args)`, run on one of the threads.

        A job handed over runs to its end: a caller cancelled meanwhile waits for that end
        before it sees the cancellation, so when `call` returns or raises, the job (a whole
        transaction) is over and whoever runs next sees its outcome.
        """
        if self._stopped:  # a job queued now would never run
            raise sqlite3.ProgrammingError("the database's connection threads are stopped")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_T] = loop.create_future()
        self._jobs.put((fn, args, loop, future))
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            await asyncio.wait([future])
            raise

    def try_here(self, fn: Callable[..., _T], *args: Any) -> tuple[bool, _T | None]:
        """`(True, fn(connection, *args))` run on the calling thread, when this is one
        thread whose connection is open, idle and has nothing queued; `(False, None)`
        otherwise (or when `fn` raises `WouldBlock`), and the caller hands the job over
        with `call`. `fn` must not wait (on a lock or the disk): it blocks the caller."""
        if self._connection is None or self._stopped or not self._jobs.empty():
            return False, None
        if not self._using.acquire(blocking=False):
            return False, None
        try:
            conn = self._connection  # read again under the lock: the thread may have closed it
            if conn is None:
                return False, None
            return True, fn(conn, *args)
        except WouldBlock:
            return False, None
        finally:
            self._using.release()

    def stop(self) -> None:
        """Let the queued jobs finish, close the connections and wait for the threads."""
        self._stopped = True
        for _ in self._threads:
            self._jobs.put(None)
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join()

    def _serve(self, connect: Connector) -> None:
        conn: sqlite3.Connection | None = None
        failure: BaseException | None = None
        try:
            conn = connect()
        except Exception as exc:  # reported to every job: the opener's first call fails
            failure = exc
        else:
            if self._single:
                self._connection = conn
        using = self._using
        try:
            while (job := self._jobs.get()) is not None:
                fn, args, loop, future = job
                try:
                    if failure is not None:
                        raise failure
                    with using:
                        result = fn(conn, *args)
                except BaseException as exc:  # the caller gets it; the thread serves on
                    outcome: tuple[bool, Any] = (False, exc)
                else:
                    outcome = (True, result)
                try:
                    loop.call_soon_threadsafe(_resolve, future, *outcome)
                except RuntimeError:  # the caller's loop is closed: nobody is waiting
                    pass
        finally:
            if conn is not None:
                with using:  # not while a caller borrows it
                    self._connection = None
                    conn.close()


@dataclass(kw_only=True, slots=True)
class SqliteFile:
    """The connection threads of one database file in this process."""

    key: tuple[str, str]
    writer: ConnectionThreads
    """One thread (and its connection): every write of this process to the file."""

    readers: ConnectionThreads
    users: int = 0
    unchecked: int = 0
    """Bytes written since the writer's last checkpoint (the writer checkpoints itself,
    on its thread: an automatic checkpoint of a commit run on the caller's thread would
    sync the file there)."""


READER_THREADS = 2
"""Reader connections per file: reads of several conversations proceed side by side (WAL
readers never wait for the writer) while one is decoding."""

_files: dict[tuple[str, str], SqliteFile] = {}
_files_lock = threading.Lock()


def acquire_file(path: Path, synchronous: str, connect: Callable[[], Connector]) -> SqliteFile:
    """The shared threads of `path` (started on first use); `release_file` when done.

    `connect()` makes the connector for new threads; stores opening a file already open in
    this process with the same `synchronous` setting share its threads.
    """
    key = (str(path.resolve()), synchronous)
    with _files_lock:
        file = _files.get(key)
        if file is None:
            connector = connect()
            file = SqliteFile(
                key=key,
                writer=ConnectionThreads(connector, count=1, name="keel-sqlite-writer"),
                readers=ConnectionThreads(
                    connector, count=READER_THREADS, name="keel-sqlite-reader"
                ),
            )
            _files[key] = file
        file.users += 1
    return file


def release_file(file: SqliteFile) -> None:
    """Drop one user of `file`; the last one stops its threads (blocks until they end)."""
    with _files_lock:
        file.users -= 1
        if file.users > 0:
            return
        if _files.get(file.key) is file:
            del _files[file.key]
    file.writer.stop()
    file.readers.stop()


def _forget_after_fork() -> None:
    # A forked child has none of the parent's threads; it opens its own on first use.
    global _files_lock
    _files.clear()
    _files_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
