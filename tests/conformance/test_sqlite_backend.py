"""SQLite specifics beyond the shared contract: schema, migrations, WAL, the URL factory."""

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Table, UniqueConstraint, insert, inspect, select, text
from sqlalchemy.exc import IntegrityError

from keel.errors import ConcurrencyConflict, StoreError
from keel.events.codec import SCHEMA_VERSION
from keel.events.errors import EventDecodeError
from keel.events.model import SkillActivated
from keel.stores import sqlite as sqlite_backend
from keel.stores import tables
from keel.stores.errors import StoreSchemaTooNew, UnsupportedStoreUrl
from keel.stores.factory import open_store
from keel.stores.memory import InMemoryEventStore
from keel.stores.migrations import MIGRATIONS
from keel.stores.sql import SqlEventStore
from keel.stores.sqlite import SqliteEventStore, create_sqlite_engine


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteEventStore]:
    opened = await SqliteEventStore.open(tmp_path / "events.db")
    yield opened
    await opened.close()


def _row(seq: int) -> dict[str, object]:
    return {
        "conversation_id": "c",
        "seq": seq,
        "kind": "skill_activated",
        "schema_version": 1,
        "data": '{"type":"skill_activated","v":1,"skill_id":"s"}',
        "recorded_at": 0.0,
    }


def test_migrations_are_numbered_from_one_without_gaps() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    assert all(m.description for m in MIGRATIONS)


async def test_migrated_schema_matches_the_table_definitions(tmp_path: Path) -> None:
    engine = create_sqlite_engine(tmp_path / "schema.db")
    await SqlEventStore(engine).migrate()
    async with engine.connect() as conn:
        shape = await conn.run_sync(
            lambda sync: {
                name: (
                    [(c["name"], c["nullable"]) for c in inspect(sync).get_columns(name)],
                    [u["column_names"] for u in inspect(sync).get_unique_constraints(name)],
                    _found_indexes(inspect(sync).get_indexes(name)),
                )
                for name in inspect(sync).get_table_names()
            }
        )
    await engine.dispose()
    expected = {
        table.name: (
            [(c.name, c.nullable) for c in table.columns],
            _unique_columns(table),
            _index_columns(table),
        )
        for table in tables.metadata.sorted_tables
    }
    assert shape == expected


def _unique_columns(table: Table) -> list[list[str]]:
    return [list(c.columns.keys()) for c in table.constraints if isinstance(c, UniqueConstraint)]


def _index_columns(table: Table) -> list[tuple[str | None, list[str]]]:
    return sorted((i.name, list(i.columns.keys())) for i in table.indexes)


def _found_indexes(found: Sequence[Mapping[str, Any]]) -> list[tuple[str | None, list[str]]]:
    """Declared indexes (not those backing a unique constraint)."""
    return sorted(
        (i["name"], list(i["column_names"])) for i in found if "duplicates_constraint" not in i
    )


async def test_migrations_are_recorded_and_applied_once(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    first = await SqliteEventStore.open(path)
    assert await first.migrate() == []
    await first.close()
    second = await SqliteEventStore.open(path)
    engine = create_sqlite_engine(path)
    async with engine.connect() as conn:
        rows = (await conn.execute(select(tables.schema_migrations))).all()
    await engine.dispose()
    await second.close()
    assert [(row.version, row.description) for row in rows] == [
        (m.version, m.description) for m in MIGRATIONS
    ]


async def test_a_database_from_a_newer_keel_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    await (await SqliteEventStore.open(path)).close()
    engine = create_sqlite_engine(path)
    async with engine.begin() as conn:
        await conn.execute(
            insert(tables.schema_migrations).values(
                version=len(MIGRATIONS) + 1, description="from the future", applied_at=0.0
            )
        )
    await engine.dispose()
    with pytest.raises(StoreSchemaTooNew) as info:
        await SqliteEventStore.open(path)
    assert info.value.code == "keel.store.schema_too_new"


async def test_connections_use_wal_and_wait_for_locks(tmp_path: Path) -> None:
    engine = create_sqlite_engine(tmp_path / "wal.db")
    async with engine.connect() as conn:
        mode = (await conn.execute(text("PRAGMA journal_mode"))).scalar_one()
        timeout = (await conn.execute(text("PRAGMA busy_timeout"))).scalar_one()
    await engine.dispose()
    assert (mode, timeout) == ("wal", 10_000)


async def test_the_database_rejects_a_duplicate_seq(
    store: SqliteEventStore, tmp_path: Path
) -> None:
    engine = create_sqlite_engine(tmp_path / "events.db")
    async with engine.begin() as conn:
        await conn.execute(insert(tables.events).values(**_row(1)))
    with pytest.raises(IntegrityError):
        async with engine.begin() as conn:
            await conn.execute(insert(tables.events).values(**_row(1)))
    await engine.dispose()


async def test_a_unique_violation_becomes_a_conflict_and_writes_nothing(
    store: SqliteEventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Simulate the race the pre-check cannot see (e.g. PostgreSQL under READ COMMITTED):
    # the check inside the transaction reports a stale last seq, the insert then collides.
    await store.append("c", 0, [SkillActivated(skill_id="a"), SkillActivated(skill_id="b")])
    real = sqlite_backend._stored_last_seq
    calls = 0

    def stale_once(conn: sqlite3.Connection, conversation_id: str) -> int:
        nonlocal calls
        calls += 1
        return 1 if calls == 1 else real(conn, conversation_id)

    monkeypatch.setattr(sqlite_backend, "_stored_last_seq", stale_once)
    with pytest.raises(ConcurrencyConflict) as info:
        await store.append("c", 1, [SkillActivated(skill_id="x"), SkillActivated(skill_id="y")])
    assert (info.value.expected, info.value.actual) == (1, 2)
    assert isinstance(info.value.__cause__, sqlite3.IntegrityError)
    assert calls == 2  # the writer's stale check, then the re-read after the collision
    monkeypatch.undo()
    assert [item.event.skill_id for item in await store.read("c")] == ["a", "b"]  # type: ignore[union-attr]


async def test_rows_hold_the_encoded_event(store: SqliteEventStore, tmp_path: Path) -> None:
    await store.append("c", 0, [SkillActivated(skill_id="s", timestamp=3.5)])
    engine = create_sqlite_engine(tmp_path / "events.db")
    async with engine.connect() as conn:
        row = (await conn.execute(select(tables.events))).one()
    await engine.dispose()
    assert (row.conversation_id, row.seq, row.kind, row.schema_version) == (
        "c",
        1,
        "skill_activated",
        SCHEMA_VERSION,
    )
    assert json.loads(row.data) == {
        "type": "skill_activated",
        "v": SCHEMA_VERSION,
        "skill_id": "s",
        "timestamp": 3.5,
        "metadata": {},
    }


async def test_undecodable_rows_raise_a_store_error(
    store: SqliteEventStore, tmp_path: Path
) -> None:
    engine = create_sqlite_engine(tmp_path / "events.db")
    async with engine.begin() as conn:
        await conn.execute(
            insert(tables.events).values(**{**_row(1), "data": '{"type":"x","v":1}'})
        )
    await engine.dispose()
    with pytest.raises(EventDecodeError) as info:
        await store.read("c")
    assert isinstance(info.value, StoreError)


async def test_open_store_memory() -> None:
    store = await open_store("memory://")
    assert isinstance(store, InMemoryEventStore)
    await store.close()


@pytest.mark.parametrize("scheme", ["sqlite", "sqlite+aiosqlite"])
async def test_open_store_sqlite_creates_parent_folders(tmp_path: Path, scheme: str) -> None:
    path = tmp_path / "deep" / "er" / "events.db"
    store = await open_store(f"{scheme}:///{path}")
    assert isinstance(store, SqliteEventStore)
    await store.append("c", 0, [SkillActivated(skill_id="s")])
    await store.close()
    assert path.is_file()


async def test_open_store_sqlite_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = await open_store("sqlite:///.keel/events.db")
    await store.close()
    assert (tmp_path / ".keel" / "events.db").is_file()


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+psycopg2://localhost/keel",
        "mysql://x",
        "events.db",
        "sqlite://",
        "sqlite:///",
        "sqlite:///:memory:",
        "sqlite:///x.db?mode=ro",
        "sqlite:///x.db?synchronous=off",
        "sqlite:///x.db?synchronous=full&mode=ro",
        "memory://named",
    ],
)
async def test_open_store_rejects_unknown_urls(url: str) -> None:
    with pytest.raises(UnsupportedStoreUrl) as info:
        await open_store(url)
    assert info.value.code == "keel.store.url"


async def test_concurrent_first_opens_migrate_once(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    stores = await asyncio.gather(*(SqliteEventStore.open(path) for _ in range(4)))
    await stores[0].append("c", 0, [SkillActivated(skill_id="s")])
    assert await stores[3].last_seq("c") == 1
    assert [await s.migrate() for s in stores] == [[], [], [], []]
    for opened in stores:
        await opened.close()


# The sqlite3 hot path: one writer thread per file, files of the SQLAlchemy path -------


async def test_a_file_written_through_sqlalchemy_opens_reads_and_continues(
    tmp_path: Path,
) -> None:
    # The SQLAlchemy store (aiosqlite) is what wrote every SQLite file before the sqlite3
    # path; its files must open, read and take appends, and it must read what we append.
    path = tmp_path / "events.db"
    engine = create_sqlite_engine(path)
    old = SqlEventStore(engine)
    await old.migrate()
    await old.append("c", 0, [SkillActivated(skill_id="a"), SkillActivated(skill_id="b")])
    store = await SqliteEventStore.open(path)
    try:
        assert [item.event for item in await store.read("c")] == [
            SkillActivated(skill_id="a"),
            SkillActivated(skill_id="b"),
        ]
        assert await store.migrate() == []
        await store.append("c", 2, [SkillActivated(skill_id="c")])
        with pytest.raises(ConcurrencyConflict):
            await old.append("c", 2, [SkillActivated(skill_id="late")])
        assert [item.event for item in await old.read("c")][-1] == SkillActivated(skill_id="c")
        assert await old.list_conversations() == await store.list_conversations()
    finally:
        await store.close()
        await engine.dispose()


def _pragma(conn: sqlite3.Connection, name: str) -> object:
    return conn.execute(f"PRAGMA {name}").fetchone()[0]


@pytest.mark.parametrize(("mode", "value"), [("FULL", 2), ("NORMAL", 1)])
async def test_event_connections_use_wal_and_the_synchronous_setting(
    tmp_path: Path, mode: sqlite_backend.Synchronous, value: int
) -> None:
    store = await SqliteEventStore.open(tmp_path / "events.db", synchronous=mode)
    try:
        threads = store._threads()
        for pool in (threads.writer, threads.readers):
            assert await pool.call(_pragma, "journal_mode") == "wal"
            assert await pool.call(_pragma, "busy_timeout") == 10_000
            assert await pool.call(_pragma, "synchronous") == value
    finally:
        await store.close()


async def test_the_default_synchronous_setting_is_the_documented_one(tmp_path: Path) -> None:
    store = await SqliteEventStore.open(tmp_path / "events.db")
    try:
        found = await store._threads().writer.call(_pragma, "synchronous")
    finally:
        await store.close()
    assert found == {"NORMAL": 1, "FULL": 2}[sqlite_backend.SYNCHRONOUS]


async def test_stores_on_one_file_share_one_writer_until_the_last_closes(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    first, second = await SqliteEventStore.open(path), await SqliteEventStore.open(path)
    other = await SqliteEventStore.open(tmp_path / "other.db")
    shared = first._threads()
    assert second._threads() is shared
    assert other._threads() is not shared
    await first.close()
    await second.append("c", 0, [SkillActivated(skill_id="s")])
    assert await second.last_seq("c") == 1
    await second.close()
    await other.close()
    third = await SqliteEventStore.open(path)
    assert third._threads() is not shared
    assert await third.last_seq("c") == 1
    await third.close()


async def test_a_closed_store_raises_a_store_error(tmp_path: Path) -> None:
    store = await SqliteEventStore.open(tmp_path / "events.db")
    await store.close()
    with pytest.raises(StoreError, match="closed"):
        await store.append("c", 0, [SkillActivated(skill_id="s")])
    with pytest.raises(StoreError, match="closed"):
        await store.read("c")


async def test_a_cancelled_append_leaves_the_writer_usable(store: SqliteEventStore) -> None:
    appending = asyncio.create_task(store.append("c", 0, [SkillActivated(skill_id="s")]))
    await asyncio.sleep(0)
    appending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await appending
    # The transaction was handed over before the cancellation: the cancelled append ended
    # only once it had committed, so the next one sees it.
    assert await store.last_seq("c") == 1
    await store.append("c", 1, [SkillActivated(skill_id="t")])
    assert await store.last_seq("c") == 2


async def test_a_database_error_is_a_store_error(store: SqliteEventStore) -> None:
    def drop_events(conn: sqlite3.Connection) -> None:
        conn.execute("DROP TABLE events")

    await store._threads().writer.call(drop_events)
    with pytest.raises(StoreError, match="append to 'c' failed: no such table"):
        await store.append("c", 0, [SkillActivated(skill_id="s")])
    with pytest.raises(StoreError, match="reading 'c' failed"):
        await store.read("c")


async def test_a_large_batch_is_one_transaction(store: SqliteEventStore) -> None:
    # All or nothing: a batch whose last row fails leaves none of its rows behind.
    def refuse_seq(conn: sqlite3.Connection, seq: int) -> None:
        conn.execute(
            f"CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.seq = {seq} "
            "BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )

    await store._threads().writer.call(refuse_seq, 500)
    batch = [SkillActivated(skill_id=f"s{i}") for i in range(500)]
    with pytest.raises(StoreError, match="refused"):
        await store.append("c", 0, batch)
    assert await store.read("c") == []
    assert await store.last_seq("c") == 0
    await store.append("c", 0, batch[:499])
    assert [item.seq for item in await store.read("c", after_seq=497)] == [498, 499]


async def test_text_that_is_not_utf8_is_a_store_error(store: SqliteEventStore) -> None:
    with pytest.raises(StoreError, match="not valid UTF-8"):
        await store.append("c", 0, [SkillActivated(skill_id="caf\udc00")])
    assert await store.last_seq("c") == 0


@pytest.mark.parametrize(
    ("query", "value"), [("", 1), ("?synchronous=full", 2), ("?synchronous=NORMAL", 1)]
)
async def test_open_store_sqlite_takes_the_synchronous_setting(
    tmp_path: Path, query: str, value: int
) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'events.db'}{query}")
    assert isinstance(store, SqliteEventStore)
    try:
        assert await store._threads().writer.call(_pragma, "synchronous") == value
    finally:
        await store.close()


async def test_a_durable_append_is_synced_for_that_commit_alone(tmp_path: Path) -> None:
    # On a NORMAL file a durable append runs as FULL (the WAL synced at its commit), then
    # the connection is NORMAL again; a FULL file needs no switch.
    store = await SqliteEventStore.open(tmp_path / "events.db", synchronous="NORMAL")
    seen: list[str] = []
    writer = store._threads().writer
    try:
        await writer.call(lambda conn: conn.set_trace_callback(seen.append))
        await store.append("c", 0, [SkillActivated(skill_id="a")], durable=False)
        relaxed, seen[:] = list(seen), []
        await store.append("c", 1, [SkillActivated(skill_id="b")], durable=True)
        synced = list(seen)
        assert await writer.call(_pragma, "synchronous") == 1
        await writer.call(lambda conn: conn.set_trace_callback(None))
    finally:
        await store.close()
    assert not any("synchronous" in s for s in relaxed)
    assert synced[0] == "PRAGMA synchronous = FULL" and "BEGIN IMMEDIATE" in synced
    assert synced[-1] == "PRAGMA synchronous = NORMAL"
    assert synced.index("COMMIT") < len(synced) - 1
