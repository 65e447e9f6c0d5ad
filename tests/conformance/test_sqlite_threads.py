"""The threads that own the SQLite connections: jobs, errors, stopping, sharing."""

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from keel.events.model import Event, UserMessage
from keel.stores import sqlite as sqlite_store
from keel.stores.sqlite import BUSY_TIMEOUT_MS, SqliteEventStore
from keel.stores.sqlite_threads import (
    ConnectionThreads,
    Connector,
    WouldBlock,
    acquire_file,
    release_file,
)


def _memory() -> sqlite3.Connection:
    return sqlite3.connect(":memory:", isolation_level=None)


def _thread_name(_conn: sqlite3.Connection) -> str:
    return threading.current_thread().name


def _fail(_conn: sqlite3.Connection, message: str) -> None:
    raise ValueError(message)


def _select(conn: sqlite3.Connection, value: int) -> int:
    return int(conn.execute("SELECT ?", (value,)).fetchone()[0])


async def test_jobs_run_on_the_owning_thread_and_errors_come_back() -> None:
    threads = ConnectionThreads(_memory, count=1, name="test-writer")
    try:
        assert await threads.call(_thread_name) == "test-writer-0"
        assert await threads.call(_select, 7) == 7
        with pytest.raises(ValueError, match="boom"):
            await threads.call(_fail, "boom")
        assert await threads.call(_select, 8) == 8  # the thread serves on after an error
    finally:
        threads.stop()


async def test_a_connection_that_cannot_open_fails_every_call() -> None:
    def refuse() -> sqlite3.Connection:
        raise sqlite3.OperationalError("unable to open database file")

    threads = ConnectionThreads(refuse, count=2, name="test-broken")
    try:
        for _ in range(3):
            with pytest.raises(sqlite3.OperationalError, match="unable to open"):
                await threads.call(_select, 1)
    finally:
        threads.stop()


async def test_a_call_after_stop_is_refused_instead_of_hanging() -> None:
    threads = ConnectionThreads(_memory, count=2, name="test-stopped")
    threads.stop()
    with pytest.raises(sqlite3.ProgrammingError, match="stopped"):
        await threads.call(_select, 1)


async def test_one_file_is_shared_per_setting_and_stopped_by_its_last_user(
    tmp_path: Path,
) -> None:
    path = tmp_path / "x.db"
    opened: list[int] = []

    def connector() -> Connector:
        opened.append(1)
        return _memory

    first = acquire_file(path, "NORMAL", connector)
    second = acquire_file(tmp_path / "." / "x.db", "NORMAL", connector)
    other = acquire_file(path, "FULL", connector)
    assert first is second
    assert other is not first
    assert len(opened) == 2
    release_file(first)
    assert await second.writer.call(_select, 3) == 3
    release_file(second)
    with pytest.raises(sqlite3.ProgrammingError):
        await second.writer.call(_select, 3)
    release_file(other)


def _shared_memory() -> sqlite3.Connection:
    return sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)


def _would_block(_conn: sqlite3.Connection) -> None:
    raise WouldBlock


async def test_try_here_borrows_an_idle_connection_and_never_waits_for_a_busy_one() -> None:
    threads = ConnectionThreads(_shared_memory, count=1, name="test-here")
    started, release = threading.Event(), threading.Event()

    def hold(_conn: sqlite3.Connection) -> None:
        started.set()
        release.wait()

    try:
        await threads.call(_select, 1)  # the connection is open
        assert threads.try_here(_thread_name) == (True, threading.current_thread().name)
        assert threads.try_here(_would_block) == (False, None)
        held = asyncio.ensure_future(threads.call(hold))
        await asyncio.to_thread(started.wait)
        assert threads.try_here(_select, 2) == (False, None)  # its thread is using it
        release.set()
        await held
        assert threads.try_here(_select, 3) == (True, 3)
    finally:
        release.set()
        threads.stop()
    assert threads.try_here(_select, 4) == (False, None)  # stopped


async def test_try_here_needs_a_single_thread() -> None:
    threads = ConnectionThreads(_shared_memory, count=2, name="test-readers")
    try:
        await threads.call(_select, 1)
        assert threads.try_here(_select, 2) == (False, None)
    finally:
        threads.stop()


def _events(count: int) -> list[Event]:
    return [UserMessage(text=f"message {i}", message_id=f"m{i}") for i in range(count)]


async def _append_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, durable: bool
) -> list[str]:
    """The threads the store's transactions ran on, for two appends."""
    ran_on: list[str] = []
    insert = sqlite_store._insert_rows

    def recorded(conn: sqlite3.Connection, *args: Any) -> int:
        ran_on.append(threading.current_thread().name)
        return insert(conn, *args)

    monkeypatch.setattr(sqlite_store, "_insert_rows", recorded)
    store = await SqliteEventStore.open(tmp_path / "events.db")
    try:
        await store.append("c1", 0, _events(2), durable=durable)
        await store.append("c1", 2, _events(1), durable=durable)
        assert [item.seq for item in await store.read("c1")] == [1, 2, 3]
    finally:
        await store.close()
    return ran_on


async def test_a_commit_that_does_not_sync_runs_on_the_callers_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = threading.current_thread().name
    assert await _append_threads(tmp_path, monkeypatch, durable=False) == [here, here]


async def test_a_durable_commit_runs_on_the_writers_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran_on = await _append_threads(tmp_path, monkeypatch, durable=True)
    assert ran_on == ["keel-sqlite-writer-0"] * 2


async def test_a_file_locked_by_another_writer_is_waited_for_on_the_writers_thread(
    tmp_path: Path,
) -> None:
    path = tmp_path / "events.db"
    store = await SqliteEventStore.open(path)
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        other.execute("BEGIN IMMEDIATE")  # another process's writer, say
        appending = asyncio.ensure_future(store.append("c1", 0, _events(2), durable=False))
        await asyncio.sleep(0)  # one loop step: the append finds the lock taken, hands over
        assert not appending.done()
        other.execute("COMMIT")
        assert [item.seq for item in await appending] == [1, 2]
        timeout = await store._threads().writer.call(
            lambda conn: conn.execute("PRAGMA busy_timeout").fetchone()[0]
        )
        assert timeout == BUSY_TIMEOUT_MS  # the borrowed connection's setting is back
    finally:
        other.close()
        await store.close()


async def test_the_writer_checkpoints_on_its_thread_after_enough_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran_on: list[str] = []

    def recorded(conn: sqlite3.Connection) -> None:
        ran_on.append(threading.current_thread().name)
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)")

    monkeypatch.setattr(sqlite_store, "_checkpoint", recorded)
    monkeypatch.setattr(sqlite_store, "CHECKPOINT_BYTES", 1_000)
    store = await SqliteEventStore.open(tmp_path / "events.db")
    try:
        await store.append("c1", 0, _events(1), durable=False)  # a few hundred bytes
        assert ran_on == []
        await store.append("c1", 1, _events(10), durable=False)  # past 1,000: checkpointed
        assert ran_on == ["keel-sqlite-writer-0"]
        await store.append("c1", 11, _events(1), durable=False)  # counted from zero again
        assert ran_on == ["keel-sqlite-writer-0"]
        assert len(await store.read("c1")) == 12
    finally:
        await store.close()


async def test_a_tail_read_runs_on_the_callers_thread_and_a_whole_log_on_a_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran_on: list[str] = []
    read_rows = sqlite_store._read_rows

    def recorded(conn: sqlite3.Connection, *args: Any) -> list[tuple[int, str]]:
        ran_on.append(threading.current_thread().name)
        return read_rows(conn, *args)

    monkeypatch.setattr(sqlite_store, "_read_rows", recorded)
    store = await SqliteEventStore.open(tmp_path / "events.db")
    try:
        await store.append("c1", 0, _events(3), durable=False)
        assert [item.seq for item in await store.read("c1", after_seq=1)] == [2, 3]
        assert [item.seq for item in await store.read("c1")] == [1, 2, 3]
    finally:
        await store.close()
    assert ran_on[0] == threading.current_thread().name
    assert ran_on[1].startswith("keel-sqlite-reader-")
