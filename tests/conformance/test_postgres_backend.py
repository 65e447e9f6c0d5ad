"""PostgreSQL: the whole store contract, plus schema, migrations, URLs and advisory locks.

Every test works in its own fresh schema (`pg_harness`), so the file may run in parallel
with itself. Lock states are observed in `pg_locks`, not guessed with sleeps.
"""

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from typing import Any, TypeVar

import asyncpg
import pytest
from sqlalchemy import Table, UniqueConstraint, insert, inspect, select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from keel.errors import ConcurrencyConflict, StoreError
from keel.events.codec import SCHEMA_VERSION
from keel.events.model import SkillActivated
from keel.ids import FakeClock
from keel.stores import tables
from keel.stores.conformance import CHECKS, Check, PostgresHarness
from keel.stores.conformance.samples import messages
from keel.stores.errors import StoreSchemaTooNew, UnsupportedStoreUrl
from keel.stores.factory import open_store
from keel.stores.migrations import MIGRATIONS
from keel.stores.postgres import PostgresEventStore, advisory_key, create_postgres_engine

T = TypeVar("T")


async def _bounded(awaitable: Awaitable[T], seconds: float = 10) -> T:
    return await asyncio.wait_for(awaitable, seconds)


async def _open(harness: PostgresHarness) -> PostgresEventStore:
    store = await harness.open()
    assert isinstance(store, PostgresEventStore)
    return store


@pytest.fixture
async def admin(postgres_url: str) -> AsyncIterator[AsyncEngine]:
    """A plain autocommit engine for looking behind the store's back."""
    engine = create_postgres_engine(postgres_url, pool_size=3, autocommit=True)
    yield engine
    await engine.dispose()


def _lock_ids(key: int) -> dict[str, int]:
    # pg_locks shows a bigint advisory key as two oids and objsubid 1.
    unsigned = key & 0xFFFF_FFFF_FFFF_FFFF
    return {"classid": unsigned >> 32, "objid": unsigned & 0xFFFF_FFFF}


async def _lock_holders(engine: AsyncEngine, key: int) -> tuple[int, int]:
    """(sessions holding, sessions waiting for) the advisory lock `key` in this database."""
    query = text(
        "SELECT count(*) FILTER (WHERE granted), count(*) FILTER (WHERE NOT granted) "
        "FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 "
        "AND classid = :classid AND objid = :objid "
        "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )
    async with engine.connect() as conn:
        held, waiting = (await conn.execute(query, _lock_ids(key))).one()
    return int(held), int(waiting)


async def _until_lock_state(engine: AsyncEngine, key: int, held: int, waiting: int) -> None:
    async def poll() -> None:
        while await _lock_holders(engine, key) != (held, waiting):
            pass

    await _bounded(poll())


# The contract ------------------------------------------------------------------------


@pytest.mark.parametrize("check", CHECKS, ids=[check.name for check in CHECKS])
async def test_store_contract(pg_harness: PostgresHarness, check: Check) -> None:
    assert check.applies_to(pg_harness.capabilities)
    await check.run(pg_harness)


# Schema and migrations ----------------------------------------------------------------


async def test_migrated_schema_matches_the_table_definitions(
    pg_harness: PostgresHarness, admin: AsyncEngine
) -> None:
    await pg_harness.open()
    schema = pg_harness.schema

    def shape(sync: object) -> dict[str, object]:
        found = inspect(sync)
        return {
            name: (
                [(c["name"], c["nullable"]) for c in found.get_columns(name, schema=schema)],
                [u["column_names"] for u in found.get_unique_constraints(name, schema=schema)],
                _found_indexes(found.get_indexes(name, schema=schema)),
            )
            for name in found.get_table_names(schema=schema)
        }

    async with admin.connect() as conn:
        found = await conn.run_sync(shape)
        data_type = await _column_type(conn, schema, "events", "data")
    assert found == {
        table.name: (
            [(c.name, c.nullable) for c in table.columns],
            _unique_columns(table),
            _index_columns(table),
        )
        for table in tables.metadata.sorted_tables
    }
    assert data_type == "text"  # JSON is stored as text, exactly as the codec wrote it


def _unique_columns(table: Table) -> list[list[str]]:
    return [list(c.columns.keys()) for c in table.constraints if isinstance(c, UniqueConstraint)]


def _index_columns(table: Table) -> list[tuple[str | None, list[str]]]:
    return sorted((i.name, list(i.columns.keys())) for i in table.indexes)


def _found_indexes(found: Sequence[Mapping[str, Any]]) -> list[tuple[str | None, list[str]]]:
    """Declared indexes (not those backing a unique constraint)."""
    return sorted(
        (i["name"], list(i["column_names"])) for i in found if "duplicates_constraint" not in i
    )


async def _column_type(conn: AsyncConnection, schema: str, table: str, column: str) -> str:
    query = text(
        "SELECT data_type FROM information_schema.columns "
        "WHERE table_schema = :schema AND table_name = :table AND column_name = :column"
    )
    params = {"schema": schema, "table": table, "column": column}
    return str((await conn.execute(query, params)).scalar_one())


async def test_concurrent_first_opens_migrate_once(pg_harness: PostgresHarness) -> None:
    stores = await asyncio.gather(*(_open(pg_harness) for _ in range(4)))
    await stores[0].append("c", 0, [SkillActivated(skill_id="s")])
    assert await stores[3].last_seq("c") == 1
    assert [await store.migrate() for store in stores] == [[], [], [], []]
    engine = create_postgres_engine(pg_harness.url, schema=pg_harness.schema, pool_size=1)
    async with engine.connect() as conn:
        rows = (await conn.execute(select(tables.schema_migrations))).all()
    await engine.dispose()
    assert [(row.version, row.description) for row in rows] == [
        (m.version, m.description) for m in MIGRATIONS
    ]


async def test_migrations_wait_for_the_advisory_lock(
    pg_harness: PostgresHarness, admin: AsyncEngine
) -> None:
    key = advisory_key("keel.migrate", pg_harness.schema, "")
    async with admin.connect() as blocker:
        await blocker.execute(text("SELECT pg_advisory_lock(CAST(:k AS bigint))"), {"k": key})
        opening = asyncio.create_task(_open(pg_harness))
        await _until_lock_state(admin, key, held=1, waiting=1)
        assert not opening.done()
        await blocker.execute(text("SELECT pg_advisory_unlock(CAST(:k AS bigint))"), {"k": key})
    store = await _bounded(opening)
    assert store.migration_key() == key
    assert await store.migrate() == []


async def test_a_database_from_a_newer_keel_is_refused(pg_harness: PostgresHarness) -> None:
    await pg_harness.open()
    await pg_harness.close()
    engine = create_postgres_engine(pg_harness.url, schema=pg_harness.schema, pool_size=1)
    async with engine.begin() as conn:
        await conn.execute(
            insert(tables.schema_migrations).values(
                version=len(MIGRATIONS) + 1, description="from the future", applied_at=0.0
            )
        )
    await engine.dispose()
    with pytest.raises(StoreSchemaTooNew):
        await pg_harness.open()


async def test_rows_hold_the_encoded_event_as_text(
    pg_harness: PostgresHarness, admin: AsyncEngine
) -> None:
    store = await _open(pg_harness)
    await store.append("c", 0, [SkillActivated(skill_id="s", timestamp=3.5)])
    async with admin.connect() as conn:
        row = (await conn.execute(text(f'SELECT * FROM "{pg_harness.schema}".events'))).one()
    assert (row.conversation_id, row.seq, row.kind, row.schema_version) == (
        "c",
        1,
        "skill_activated",
        SCHEMA_VERSION,
    )
    assert json.loads(row.data)["skill_id"] == "s"


async def test_an_insert_racing_in_read_committed_becomes_a_conflict(
    pg_harness: PostgresHarness, admin: AsyncEngine
) -> None:
    # Another writer has inserted seq 2 but not committed: our append checks last seq 1,
    # then its insert waits on the unique index and fails once the other one commits.
    store = await _open(pg_harness)
    await store.append("c", 0, [SkillActivated(skill_id="a")])
    other = create_postgres_engine(pg_harness.url, schema=pg_harness.schema, pool_size=1)
    try:
        async with other.connect() as conn:
            transaction = await conn.begin()
            await conn.execute(
                insert(tables.events).values(
                    conversation_id="c",
                    seq=2,
                    kind="skill_activated",
                    schema_version=SCHEMA_VERSION,
                    data='{"type":"skill_activated","v":1,"skill_id":"other"}',
                    recorded_at=0.0,
                )
            )
            pid = (await conn.execute(text("SELECT pg_backend_pid()"))).scalar_one()
            batch = [SkillActivated(skill_id="x"), SkillActivated(skill_id="y")]
            appending = asyncio.create_task(store.append("c", 1, batch))
            await _until_blocked_by(admin, pid)
            await transaction.commit()
    finally:
        await other.dispose()
    with pytest.raises(ConcurrencyConflict) as info:
        await _bounded(appending)
    assert (info.value.expected, info.value.actual) == (1, 2)
    assert [item.seq for item in await store.read("c")] == [1, 2]


async def _until_blocked_by(engine: AsyncEngine, pid: int) -> None:
    query = text("SELECT count(*) FROM pg_stat_activity WHERE :pid = ANY(pg_blocking_pids(pid))")

    async def poll() -> None:
        while True:
            async with engine.connect() as conn:
                if (await conn.execute(query, {"pid": pid})).scalar_one():
                    return

    await _bounded(poll())


# Advisory locks across store instances (like separate processes) ------------------------


async def test_lock_blocks_another_instance_on_the_server_until_released(
    pg_harness: PostgresHarness, admin: AsyncEngine
) -> None:
    first, second = await _open(pg_harness), await _open(pg_harness)
    key = first.lock_key("conv")
    assert key == second.lock_key("conv")
    entered = asyncio.Event()

    async def contender() -> None:
        async with second.conversation_lock("conv"):
            entered.set()

    async with first.conversation_lock("conv"):
        await _until_lock_state(admin, key, held=1, waiting=0)
        waiting = asyncio.create_task(contender())
        await _until_lock_state(admin, key, held=1, waiting=1)
        assert not entered.is_set()
    await _bounded(waiting)
    assert entered.is_set()
    await _until_lock_state(admin, key, held=0, waiting=0)


async def test_a_waiter_cancelled_on_the_server_leaves_no_lock(
    pg_harness: PostgresHarness, admin: AsyncEngine
) -> None:
    first, second = await _open(pg_harness), await _open(pg_harness)
    key = first.lock_key("conv")

    async def contender() -> None:
        async with second.conversation_lock("conv"):
            raise AssertionError("the cancelled waiter got the lock")

    async with first.conversation_lock("conv"):
        waiting = asyncio.create_task(contender())
        await _until_lock_state(admin, key, held=1, waiting=1)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        await _until_lock_state(admin, key, held=1, waiting=0)
    await _until_lock_state(admin, key, held=0, waiting=0)
    async with second.conversation_lock("conv"):
        await _until_lock_state(admin, key, held=1, waiting=0)


async def test_a_lock_granted_as_the_waiter_is_cancelled_is_not_kept(
    pg_harness: PostgresHarness, admin: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The race a cancellation can lose: the server grants the lock, then the task is
    # cancelled before it sees the answer. That connection must not go back to the pool.
    first, second = await _open(pg_harness), await _open(pg_harness)
    key = first.lock_key("conv")
    real_execute = asyncpg.Connection.execute

    async def granted_then_cancelled(self: asyncpg.Connection, query: str, *a: object) -> str:
        result = await real_execute(self, query, *a)
        if "pg_advisory_lock(" in query:
            raise asyncio.CancelledError
        return result

    monkeypatch.setattr(asyncpg.Connection, "execute", granted_then_cancelled)
    with pytest.raises(asyncio.CancelledError):
        async with first.conversation_lock("conv"):
            raise AssertionError("entered the block")
    monkeypatch.undo()
    await _until_lock_state(admin, key, held=0, waiting=0)
    async with second.conversation_lock("conv"):
        pass


async def test_a_dead_holder_frees_the_lock(
    pg_harness: PostgresHarness, admin: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    # A worker that crashes mid-turn: its session ends, and so does its lock.
    first, second = await _open(pg_harness), await _open(pg_harness)
    key = first.lock_key("conv")
    query = text(
        "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
        "AND objsubid = 1 AND classid = :classid AND objid = :objid AND granted"
    )
    with caplog.at_level(logging.WARNING, logger="keel.stores.postgres"):
        async with first.conversation_lock("conv"):
            async with admin.connect() as conn:
                assert (await conn.execute(query, _lock_ids(key))).scalars().all() == [True]
            async with second.conversation_lock("conv"):
                pass
    assert "unlocking conversation 'conv' failed" in caplog.text
    async with first.conversation_lock("conv"):  # the first store recovers
        await first.append("conv", 0, messages("after", 1))


async def test_turns_of_three_workers_never_interleave(pg_harness: PostgresHarness) -> None:
    workers = [await _open(pg_harness) for _ in range(3)]

    async def turn(worker: PostgresEventStore, conversation: str, tag: str) -> None:
        async with worker.conversation_lock(conversation):
            last = await worker.last_seq(conversation)
            await worker.append(conversation, last, messages(f"{tag} user", 1))
            await asyncio.sleep(0)
            await worker.append(conversation, last + 1, messages(f"{tag} bot", 1))

    await _bounded(
        asyncio.gather(
            *(
                turn(workers[(c + m) % 3], f"conv{c}", f"c{c}m{m}")
                for c in range(5)
                for m in range(6)
            )
        )
    )
    for c in range(5):
        log = await workers[c % 3].read(f"conv{c}")
        assert [item.seq for item in log] == list(range(1, 13))
        texts = [getattr(item.event, "text", "") for item in log]
        assert all(texts[i].split()[0] == texts[i + 1].split()[0] for i in range(0, 12, 2))
        assert len({text.split()[0] for text in texts}) == 6


def test_lock_keys_are_stable_and_scoped() -> None:
    # Keys are part of the on-database contract between Keel versions: never change them.
    assert advisory_key("keel.conv", "public", "c1") == advisory_key("keel.conv", "public", "c1")
    assert advisory_key("keel.conv", "public", "c1") == -3929559793218547921
    assert advisory_key("keel.conv", "other", "c1") != advisory_key("keel.conv", "public", "c1")
    assert advisory_key("keel.migrate", "public", "") != advisory_key("keel.conv", "public", "")
    assert -(2**63) <= advisory_key("keel.conv", "s", "\udcff x") < 2**63


# URLs and opening ---------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["postgresql", "postgres", "postgresql+asyncpg"])
async def test_open_store_postgres_urls(pg_harness: PostgresHarness, scheme: str) -> None:
    writer = await _open(pg_harness)  # creates the schema
    await writer.append("c", 0, messages("m", 2))
    rest = pg_harness.url.split("://", 1)[1]
    url = f"{scheme}://{rest}?options=-csearch_path%3D{pg_harness.schema}"
    store = await open_store(url)
    try:
        assert isinstance(store, PostgresEventStore)
        assert store.schema == pg_harness.schema
        assert [item.event for item in await store.read("c")] == messages("m", 2)
    finally:
        await store.close()


@pytest.mark.parametrize("url", ["postgresql+psycopg2://h/db", "postgresql+pg8000://h/db"])
async def test_open_store_refuses_other_postgres_drivers(url: str) -> None:
    with pytest.raises(UnsupportedStoreUrl):
        await open_store(url)


async def test_postgres_open_refuses_other_urls() -> None:
    with pytest.raises(UnsupportedStoreUrl):
        await PostgresEventStore.open("sqlite:///x.db")


async def test_an_unreachable_server_is_a_store_error() -> None:
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL at") as info:
        await PostgresEventStore.open("postgresql://nobody:secret@127.0.0.1:1/nowhere")
    assert "secret" not in str(info.value)


@pytest.mark.parametrize("schema", ["Bad", "x;drop", "", "1abc", "a" * 64])
async def test_invalid_schema_names_are_refused(schema: str) -> None:
    with pytest.raises(StoreError, match="invalid schema name"):
        await PostgresEventStore.open("postgresql://h/db", schema=schema)


async def test_text_that_is_not_utf8_is_a_store_error(pg_harness: PostgresHarness) -> None:
    store = await _open(pg_harness)
    with pytest.raises(StoreError, match="not valid UTF-8") as info:
        await store.append("c", 0, [SkillActivated(skill_id="caf\udc00")])
    assert "caf" not in str(info.value)  # the event's content is not repeated in the error
    assert await store.last_seq("c") == 0


async def test_an_append_is_one_statement_however_large(
    pg_harness: PostgresHarness, admin: AsyncEngine
) -> None:
    # One round trip per append: the server counts one execution of the insert for a
    # batch of 300 events, and it numbered them in order.
    store = await _open(pg_harness)
    await store.append("c", 0, messages("m", 300))
    async with admin.connect() as conn:
        rows = (
            await conn.execute(
                text(f'SELECT seq, data FROM "{pg_harness.schema}".events ORDER BY id')
            )
        ).all()
    assert [row.seq for row in rows] == list(range(1, 301))
    assert [json.loads(row.data)["text"] for row in rows] == [f"m {i}" for i in range(1, 301)]


async def test_close_does_not_wait_forever_for_a_held_lock(
    pg_harness: PostgresHarness, admin: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A turn still inside conversation_lock when the server shuts down: close() gives its
    # connection a bounded time to come back, then cuts it (the server frees the lock).
    monkeypatch.setattr("keel.stores.postgres.CLOSE_TIMEOUT_S", 0.2)
    store = await _open(pg_harness)
    key = store.lock_key("conv")
    inside, never = asyncio.Event(), asyncio.Event()

    async def turn() -> None:
        async with store.conversation_lock("conv"):
            inside.set()
            await never.wait()

    holder = asyncio.create_task(turn())
    await inside.wait()
    await _bounded(store.close())
    await _until_lock_state(admin, key, held=0, waiting=0)
    holder.cancel()
    await asyncio.gather(holder, return_exceptions=True)


async def _session_setting(store: PostgresEventStore, name: str) -> str:
    async with store._pool.acquire() as conn:
        return str(await conn.fetchval(f"SHOW {name}"))


async def test_appends_commit_relaxed_unless_durable(pg_harness: PostgresHarness) -> None:
    # The append sessions do not wait for the WAL flush; a durable append does, in its own
    # transaction, and both keep the seq check.
    store = await _open(pg_harness)
    assert await _session_setting(store, "synchronous_commit") == "off"
    await store.append("c", 0, messages("m", 2), durable=False)
    await store.append("c", 2, messages("d", 2), durable=True)
    with pytest.raises(ConcurrencyConflict):
        await store.append("c", 2, messages("x", 1), durable=True)
    assert [e.seq for e in await store.read("c")] == [1, 2, 3, 4]
    assert await _session_setting(store, "synchronous_commit") == "off"  # SET LOCAL ended


async def test_the_url_can_make_every_commit_durable(
    postgres_url: str, pg_harness: PostgresHarness
) -> None:
    joiner = "&" if "?" in postgres_url else "?"
    store = await PostgresEventStore.open(
        f"{postgres_url}{joiner}synchronous_commit=on", schema=pg_harness.schema, clock=FakeClock()
    )
    try:
        assert await _session_setting(store, "synchronous_commit") == "on"
    finally:
        await store.close()
