"""The threads that own the SQLite connections: jobs, errors, stopping, sharing."""

import sqlite3
import threading
from pathlib import Path

import pytest

from keel.stores.sqlite_threads import ConnectionThreads, Connector, acquire_file, release_file


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
