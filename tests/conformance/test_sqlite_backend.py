"""SQLite specifics beyond the shared contract: schema, migrations, WAL, the URL factory."""

import asyncio
import json
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
    real = SqlEventStore._last_seq
    calls = 0

    async def stale_once(conn: object, conversation_id: str) -> int:
        nonlocal calls
        calls += 1
        return 1 if calls == 1 else await real(conn, conversation_id)  # type: ignore[arg-type]

    monkeypatch.setattr(SqlEventStore, "_last_seq", staticmethod(stale_once))
    with pytest.raises(ConcurrencyConflict) as info:
        await store.append("c", 1, [SkillActivated(skill_id="x"), SkillActivated(skill_id="y")])
    assert (info.value.expected, info.value.actual) == (1, 2)
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
