"""The `PlanStore` contract, on every implementation: memory, a SQLite file, PostgreSQL.

PostgreSQL runs in a fresh schema per test (skipped when unreachable unless
`KEEL_REQUIRE_POSTGRES=1`, see conftest.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import Connection, column, insert, table, text
from sqlalchemy.ext.asyncio import AsyncEngine

from keel.errors import StoreError
from keel.plans.memory_store import MemoryPlanStore
from keel.plans.store_port import (
    AntiEntry,
    JournalEntry,
    Observation,
    PlanStore,
    SignalCount,
    TemplateRow,
)
from keel.stores import tables
from keel.stores.conformance import PostgresHarness
from keel.stores.migrations import MIGRATIONS
from keel.stores.postgres import create_postgres_engine
from keel.stores.sql import SqlEventStore
from keel.stores.sqlite import SqliteEventStore, create_sqlite_engine


def row(entry_id: str, **changes: object) -> TemplateRow:
    """A template row with every field set to something non-default."""
    base = TemplateRow(
        id=entry_id,
        layer="l0",
        scope="agent",
        key=f"k-{entry_id}",
        intent_sig="isig",
        slot_sig="ssig",
        shape_hash="shape",
        plan_json='{"steps": [{"tool": "list_files"}]}',
        stored_intent_json='{"clauses": []}',
        bindings_json='{"PATH": "/tmp/é"}',
        request_text="list the files in /tmp/é",
        tools_sig="tsig",
        pool_sig="psig",
        logic_sig="lsig",
        effectful=True,
        status="shadow",
        origin="planner",
        embedding=b"\x00\x01\xff\x80",
        embedder_id="toy:1",
        threshold=0.875,
        alpha=3.25,
        beta=1.5,
        n_served=7,
        created_at=1_700_000_000.125,
        last_served_at=1_700_000_100.5,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def obs(turn_id: str, **changes: object) -> Observation:
    base = Observation(
        turn_id=turn_id,
        scope="agent",
        intent_sig="isig",
        shape_hash="shape",
        plan_json="{}",
        template_id="t1",
        raw_plan_json='{"raw": true}',
        outcome="fail",
        signal="",
        signal_weight=0.0,
        ts=10.0,
        slot_sig="PATH:path",
        request_text="list the files in /tmp/é",
        stored_intent_json='{"clauses": [["list", "file", "", false]]}',
        bindings_json='{"PATH": "/tmp/é"}',
        tools_sig="tsig",
        pool_sig="psig",
        logic_sig="lsig",
        effectful=False,
        l0_id="l0-key",
        served="l1",
        origin="planner",
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def anti(shape: str, **changes: object) -> AntiEntry:
    base = AntiEntry(
        scope="agent", intent_sig="isig", shape_hash=shape, weight=1.0, expires_at=100.0, reason="r"
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def jentry(turn_id: str, step_id: int, **changes: object) -> JournalEntry:
    base = JournalEntry(
        turn_id=turn_id,
        step_id=step_id,
        tool="send_email",
        idem_key="idem",
        args_hash="ah",
        status="intended",
        result_json="",
        ts=5.0,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    """The implementation's name; for PostgreSQL, its URL (or a skip)."""
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return str(request.param)


@pytest.fixture
async def store(backend: str, tmp_path: Path) -> AsyncIterator[PlanStore]:
    if backend == "memory":
        yield MemoryPlanStore()
        return
    from keel.plans.sql_store import SqlPlanStore

    if backend == "sqlite":
        events: SqlEventStore = await SqliteEventStore.open(tmp_path / "plans.db")
        yield SqlPlanStore(events.engine)
        await events.close()
        return
    harness = PostgresHarness(backend)
    opened = await harness.open()
    assert isinstance(opened, SqlEventStore)
    yield SqlPlanStore(opened.engine)
    await harness.drop()


# -- templates ---------------------------------------------------------------------------


async def test_a_row_round_trips_exactly(store: PlanStore) -> None:
    saved = row("a")
    await store.put(saved)
    assert await store.get("a") == saved
    assert await store.get_by_key("l0", "agent", "k-a") == saved
    bare = row("b", embedding=None, embedder_id=None, effectful=False, status="active")
    await store.put(bare)
    assert await store.get("b") == bare


async def test_missing_rows_are_none(store: PlanStore) -> None:
    await store.put(row("a"))
    assert await store.get("zz") is None
    assert await store.get_by_key("l1", "agent", "k-a") is None
    assert await store.get_by_key("l0", "other", "k-a") is None
    assert await store.get_by_key("l0", "agent", "nope") is None


async def test_put_replaces_the_row_with_the_same_id(store: PlanStore) -> None:
    await store.put(row("a"))
    await store.put(row("a", key="k-new", n_served=9))
    assert await store.get_by_key("l0", "agent", "k-a") is None
    got = await store.get("a")
    assert got is not None and got.key == "k-new" and got.n_served == 9
    assert (await store.counts())["l0"] == 1


async def test_put_replaces_the_row_with_the_same_key(store: PlanStore) -> None:
    await store.put(row("a", key="k"))
    await store.put(row("b", key="k", n_served=1))
    assert await store.get("a") is None
    got = await store.get_by_key("l0", "agent", "k")
    assert got is not None and got.id == "b"


async def test_put_clashing_on_id_and_key_replaces_both(store: PlanStore) -> None:
    await store.put(row("a", key="ka"))
    await store.put(row("b", key="kb"))
    await store.put(row("a", key="kb"))
    assert await store.get("b") is None
    assert await store.get_by_key("l0", "agent", "ka") is None
    got = await store.get_by_key("l0", "agent", "kb")
    assert got is not None and got.id == "a"
    assert (await store.counts())["l0"] == 1


async def test_the_same_key_in_another_layer_or_scope_is_another_row(store: PlanStore) -> None:
    await store.put(row("a", key="k"))
    await store.put(row("b", key="k", layer="l1"))
    await store.put(row("c", key="k", scope="other"))
    found = [
        await store.get_by_key("l0", "agent", "k"),
        await store.get_by_key("l1", "agent", "k"),
        await store.get_by_key("l0", "other", "k"),
    ]
    assert [r.id if r else None for r in found] == ["a", "b", "c"]


async def test_by_intent_lists_l1_rows_of_the_scope_oldest_first(store: PlanStore) -> None:
    await store.put(row("new", layer="l1", status="demoted", created_at=30.0))
    await store.put(row("old", layer="l1", status="active", created_at=10.0))
    await store.put(row("l0", layer="l0", created_at=5.0))
    await store.put(row("else", layer="l1", intent_sig="other", created_at=1.0))
    await store.put(row("far", layer="l1", scope="other", created_at=1.0))
    assert [r.id for r in await store.by_intent("agent", "isig")] == ["old", "new"]
    assert await store.by_intent("agent", "missing") == []


async def test_delete_and_delete_many(store: PlanStore) -> None:
    for i in "abcd":
        await store.put(row(i))
    assert await store.delete("a") is True
    assert await store.delete("a") is False
    assert await store.delete_many(["b", "c", "zz", "b"]) == 2
    assert await store.delete_many([]) == 0
    assert [r.id for r in await store.entries()] == ["d"]


async def _fill_layers(store: PlanStore) -> None:
    await store.put(row("x0", layer="l0"))
    await store.put(row("y0", layer="l0", scope="other"))
    await store.put(row("x1", layer="l1"))
    await store.add_observation(obs("t1"))
    await store.put_anti(anti("s1"))


async def test_flush_l0_keeps_l1_observations_and_anti(store: PlanStore) -> None:
    await _fill_layers(store)
    assert await store.flush("l0") == 2
    assert await store.counts() == {
        "l0": 0,
        "l1_active": 0,
        "l1_shadow": 1,
        "l1_demoted": 0,
        "l1_stale": 0,
        "observations": 1,
        "anti": 1,
    }


async def test_flush_l1_drops_observations_and_anti_too(store: PlanStore) -> None:
    await _fill_layers(store)
    assert await store.flush("l1") == 1
    counts = await store.counts()
    assert counts["l0"] == 2 and counts["l1_shadow"] == 0
    assert counts["observations"] == 0 and counts["anti"] == 0
    assert await store.recent_observations() == [] and await store.all_anti() == []


async def test_flush_all_empties_the_cache_but_not_the_journal(store: PlanStore) -> None:
    await _fill_layers(store)
    await store.write_journal(jentry("t", 1))
    assert await store.flush("all") == 3
    assert set((await store.counts()).values()) == {0}
    assert await store.journal("t") == [jentry("t", 1)]


async def test_entries_filter_order_and_limit(store: PlanStore) -> None:
    await store.put(row("a", layer="l0", created_at=1.0))
    await store.put(row("b", layer="l1", status="active", created_at=3.0))
    await store.put(row("c", layer="l1", status="demoted", created_at=2.0))
    await store.put(row("d", layer="l1", status="active", created_at=4.0))
    assert [r.id for r in await store.entries()] == ["d", "b", "c", "a"]
    assert [r.id for r in await store.entries(layer="l1")] == ["d", "b", "c"]
    assert [r.id for r in await store.entries(status="active")] == ["d", "b"]
    assert [r.id for r in await store.entries(layer="l0", status="active")] == []
    assert [r.id for r in await store.entries(limit=2)] == ["d", "b"]
    assert await store.entries(limit=0) == []


async def test_entries_with_equal_times_break_ties_by_id(store: PlanStore) -> None:
    for i in ["b-2", "a_1", "B", "a1"]:
        await store.put(row(i, created_at=1.0))
    assert [r.id for r in await store.entries()] == sorted(["b-2", "a_1", "B", "a1"])


async def test_counts_by_layer_and_status(store: PlanStore) -> None:
    assert await store.counts() == {
        "l0": 0,
        "l1_active": 0,
        "l1_shadow": 0,
        "l1_demoted": 0,
        "l1_stale": 0,
        "observations": 0,
        "anti": 0,
    }
    await store.put(row("a", layer="l0", status="active"))
    for i, status in enumerate(["active", "active", "shadow", "demoted", "stale"]):
        await store.put(row(f"l1-{i}", layer="l1", status=status))
    await store.add_observation(obs("t1"))
    await store.add_observation(obs("t2"))
    await store.put_anti(anti("s", expires_at=0.0))
    assert await store.counts() == {
        "l0": 1,
        "l1_active": 2,
        "l1_shadow": 1,
        "l1_demoted": 1,
        "l1_stale": 1,
        "observations": 2,
        "anti": 1,
    }


# -- observations ------------------------------------------------------------------------


async def test_observations_round_trip_and_filter(store: PlanStore) -> None:
    first = obs("t1", shape_hash="s1")
    second = obs("t2", shape_hash="s2", template_id=None, outcome="ok", ts=11.0)
    await store.add_observation(first)
    await store.add_observation(second)
    await store.add_observation(obs("t3", scope="other"))
    await store.add_observation(obs("t4", intent_sig="other"))
    assert await store.observations("agent", "isig") == [first, second]
    assert await store.observations("agent", "isig", "s2") == [second]
    assert await store.observations("agent", "isig", "none") == []


async def test_recent_observations_are_newest_first(store: PlanStore) -> None:
    await store.add_observation(obs("t1", ts=2.0))
    await store.add_observation(obs("t2", ts=3.0))
    await store.add_observation(obs("t3", ts=1.0))
    await store.add_observation(obs("t4", ts=3.0))
    assert [o.turn_id for o in await store.recent_observations()] == ["t4", "t2", "t1", "t3"]
    assert [o.turn_id for o in await store.recent_observations(2)] == ["t4", "t2"]


async def test_set_signal_marks_every_observation_of_the_turn(store: PlanStore) -> None:
    await store.add_observation(obs("t1", shape_hash="a"))
    await store.add_observation(obs("t1", shape_hash="b"))
    await store.add_observation(obs("t2"))
    await store.set_signal("t1", "approve", 1.0)
    await store.set_signal("missing", "reject", 1.0)
    got = {
        (o.turn_id, o.shape_hash): (o.signal, o.signal_weight)
        for o in await store.observations("agent", "isig")
    }
    assert got == {
        ("t1", "a"): ("approve", 1.0),
        ("t1", "b"): ("approve", 1.0),
        ("t2", "shape"): ("", 0.0),
    }


async def test_an_observation_keeps_its_source_fields(store: PlanStore) -> None:
    exact = obs("t1", effectful=True, exact_only=True, l0_id=None, served="", origin="l1")
    bare = Observation(
        turn_id="t2", scope="agent", intent_sig="isig", shape_hash="shape", plan_json="{}"
    )
    await store.add_observation(exact)
    await store.add_observation(bare)
    assert await store.observations("agent", "isig") == [exact, bare]
    assert bare.stored_intent_json == "" and bare.effectful and not bare.exact_only


async def test_observations_for_turn_in_insertion_order_across_scopes(store: PlanStore) -> None:
    first = obs("t1", shape_hash="a", ts=5.0)
    other = obs("t2")
    second = obs("t1", scope="other", shape_hash="b", ts=1.0)
    for observation in (first, other, second):
        await store.add_observation(observation)
    assert await store.observations_for_turn("t1") == [first, second]
    assert await store.observations_for_turn("t2") == [other]
    assert await store.observations_for_turn("missing") == []
    await store.set_signal("t1", "approve", 1.0)
    assert [(o.shape_hash, o.signal) for o in await store.observations_for_turn("t1")] == [
        ("a", "approve"),
        ("b", "approve"),
    ]


async def test_count_observations_by_intent_and_shape(store: PlanStore) -> None:
    for turn, shape in (("t1", "a"), ("t2", "a"), ("t3", "b")):
        await store.add_observation(obs(turn, shape_hash=shape))
    await store.add_observation(obs("t4", scope="other"))
    await store.add_observation(obs("t5", exact_only=True))
    assert await store.count_observations("agent", "isig") == 4
    assert await store.count_observations("agent", "isig", "a") == 2
    assert await store.count_observations("agent", "isig", "none") == 0
    assert await store.count_observations("agent", "other") == 0


async def test_signal_counts_group_l1_evidence_by_signal_and_weight(store: PlanStore) -> None:
    plan = [
        ("t1", "shape", False),
        ("t2", "shape", False),
        ("t3", "shape", False),
        ("t4", "shape", True),  # exact-only: no L1 evidence
        ("t5", "other", False),  # another shape
        ("t6", "shape", False),  # no signal yet
    ]
    for turn, shape, exact in plan:
        await store.add_observation(obs(turn, shape_hash=shape, exact_only=exact))
    await store.add_observation(obs("t1", scope="elsewhere"))
    for turn, signal, weight in (
        ("t1", "implicit_ok", 0.3),
        ("t2", "approve", 1.0),
        ("t3", "implicit_ok", 0.3),
        ("t4", "approve", 1.0),
        ("t5", "reject", 1.0),
    ):
        await store.set_signal(turn, signal, weight)
    counts = await store.signal_counts("agent", "isig", "shape")
    assert counts == [
        SignalCount(signal="approve", weight=1.0, count=1),
        SignalCount(signal="implicit_ok", weight=0.3, count=2),
    ]
    # A later signal on a turn replaces its earlier one in the counts.
    await store.set_signal("t1", "reject", 1.0)
    await store.set_signal("t3", "implicit_ok", 0.5)
    assert await store.signal_counts("agent", "isig", "shape") == [
        SignalCount(signal="approve", weight=1.0, count=1),
        SignalCount(signal="implicit_ok", weight=0.5, count=1),
        SignalCount(signal="reject", weight=1.0, count=1),
    ]
    assert await store.signal_counts("agent", "isig", "other") == [
        SignalCount(signal="reject", weight=1.0, count=1)
    ]
    assert await store.signal_counts("agent", "isig", "none") == []
    await store.flush("l1")
    assert await store.signal_counts("agent", "isig", "shape") == []
    assert await store.observations_for_turn("t1") == []
    assert await store.count_observations("agent", "isig") == 0


async def test_recent_observations_limits_and_late_timestamps(store: PlanStore) -> None:
    for i, ts in enumerate((5.0, 1.0, 5.0, 7.0, 0.5, 7.0)):
        await store.add_observation(obs(f"t{i}", ts=ts))
    order = ["t5", "t3", "t2", "t0", "t1", "t4"]
    assert [o.turn_id for o in await store.recent_observations(100)] == order
    assert [o.turn_id for o in await store.recent_observations(3)] == order[:3]
    assert await store.recent_observations(0) == []
    assert await store.recent_observations(-1) == []
    await store.set_signal("t3", "approve", 1.0)
    assert [o.signal for o in await store.recent_observations(2)] == ["", "approve"]


# -- migration 4: an observation's source moves out of its plan JSON ----------------------

LEGACY_SOURCE = {
    "request": "list files in /tmp",
    "intent": {"clauses": [["list", "file", "", False]]},
    "slot_sig": "PATH:path",
    "bindings": {"PATH": "/tmp"},
    "tools_sig": "tsig",
    "pool_sig": "psig",
    "logic_sig": "lsig",
    "effectful": False,
    "exact_only": True,
    "l0_id": "l0-key",
    "served": "l0",
    "origin": "loop",
}


def _migrate_to(conn: Connection, version: int) -> None:
    tables.schema_migrations.create(conn, checkfirst=True)
    for migration in MIGRATIONS[:version]:
        migration.apply(conn)
        conn.execute(
            insert(tables.schema_migrations).values(
                version=migration.version, description=migration.description, applied_at=0.0
            )
        )


@pytest.fixture(params=["sqlite", "postgres"])
def sql_backend(request: pytest.FixtureRequest) -> str:
    """`sqlite`, or the URL of PostgreSQL (or a skip)."""
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return "sqlite"


async def test_migration_4_moves_a_legacy_source_into_columns(
    sql_backend: str, tmp_path: Path
) -> None:
    from keel.plans.sql_store import SqlPlanStore

    template = {"steps": [{"id": 1, "tool": "list_files"}], "meta": {"note": "kept"}}
    legacy = {**template, "meta": {"note": "kept", "cache": LEGACY_SOURCE}}
    v3 = table(
        "plan_observations",
        *(column(n) for n in ("turn_id", "scope", "intent_sig", "shape_hash", "plan_json")),
        *(column(n) for n in ("raw_plan_json", "outcome", "signal", "signal_weight", "ts")),
    )
    rows = [
        ("t1", json.dumps(legacy), "approve", 1.0),  # exact-only: not counted
        ("t2", json.dumps(template), "implicit_ok", 0.3),
        ("t3", '{"meta": {"cache": oops', "implicit_ok", 0.3),
        ("t4", json.dumps(template), "", 0.0),
    ]
    values = [
        {"turn_id": turn, "scope": "agent", "intent_sig": "list>file", "shape_hash": "s"}
        | {"plan_json": plan_json, "raw_plan_json": "", "outcome": "ok", "signal": signal}
        | {"signal_weight": weight, "ts": 1.0}
        for turn, plan_json, signal, weight in rows
    ]
    harness: PostgresHarness | None = None
    if sql_backend == "sqlite":
        engine = create_sqlite_engine(tmp_path / "v3.db")
    else:
        harness = PostgresHarness(sql_backend)
        engine = create_postgres_engine(harness.url, pool_size=1)
        async with engine.begin() as conn:
            await conn.execute(text(f'CREATE SCHEMA "{harness.schema}"'))
        await engine.dispose()
        engine = create_postgres_engine(harness.url, schema=harness.schema, pool_size=1)
    async with engine.begin() as conn:
        await conn.run_sync(lambda sync: _migrate_to(sync, 3))
        await conn.execute(insert(v3), values)
    await engine.dispose()
    events: SqlEventStore
    if harness is None:
        events = await SqliteEventStore.open(tmp_path / "v3.db")
    else:
        opened = await harness.open()
        assert isinstance(opened, SqlEventStore)
        events = opened
    try:
        assert await events.migrate() == []
        plans = SqlPlanStore(events.engine)
        (moved,) = await plans.observations_for_turn("t1")
        (plain,) = await plans.observations_for_turn("t2")
        (broken,) = await plans.observations_for_turn("t3")
        counted = await plans.signal_counts("agent", "list>file", "s")
        await plans.set_signal("t4", "reject", 1.0)
        recounted = await plans.signal_counts("agent", "list>file", "s")
    finally:
        await (harness.drop() if harness is not None else events.close())
    assert json.loads(moved.plan_json) == template
    assert (moved.request_text, moved.slot_sig, moved.l0_id) == (
        "list files in /tmp",
        "PATH:path",
        "l0-key",
    )
    assert json.loads(moved.stored_intent_json) == LEGACY_SOURCE["intent"]
    assert json.loads(moved.bindings_json) == {"PATH": "/tmp"}
    assert (moved.tools_sig, moved.pool_sig, moved.logic_sig) == ("tsig", "psig", "lsig")
    assert (moved.effectful, moved.exact_only, moved.served, moved.origin) == (
        False,
        True,
        "l0",
        "loop",
    )
    assert plain.plan_json == json.dumps(template) and plain.stored_intent_json == ""
    assert plain.effectful and not plain.exact_only and plain.l0_id is None
    assert broken.plan_json == rows[2][1] and broken.stored_intent_json == ""
    assert counted == [SignalCount(signal="implicit_ok", weight=0.3, count=2)]
    assert recounted == [*counted, SignalCount(signal="reject", weight=1.0, count=1)]


async def test_concurrent_signals_on_one_turn_count_once(store: PlanStore) -> None:
    await store.add_observation(obs("t1"))
    await store.add_observation(obs("t1", shape_hash="other"))
    signals = [("approve", 1.0), ("reject", 1.0), ("implicit_ok", 0.3), ("implicit_fail", 0.3)]
    await asyncio.gather(*(store.set_signal("t1", s, w) for s, w in signals * 2))
    final = {(o.signal, o.signal_weight) for o in await store.observations_for_turn("t1")}
    assert len(final) == 1
    ((signal, weight),) = final
    for shape in ("shape", "other"):
        assert await store.signal_counts("agent", "isig", shape) == [
            SignalCount(signal=signal, weight=weight, count=1)
        ]


async def test_an_observation_recorded_with_a_signal_counts_at_once(store: PlanStore) -> None:
    await store.add_observation(obs("t1", signal="approve", signal_weight=1.0))
    await store.add_observation(obs("t2", signal="approve", signal_weight=1.0, exact_only=True))
    assert await store.signal_counts("agent", "isig", "shape") == [
        SignalCount(signal="approve", weight=1.0, count=1)
    ]
    await store.set_signal("t1", "reject", 1.0)
    assert await store.signal_counts("agent", "isig", "shape") == [
        SignalCount(signal="reject", weight=1.0, count=1)
    ]


# -- anti-entries ------------------------------------------------------------------------


async def test_anti_entries_expire_and_replace(store: PlanStore) -> None:
    await store.put_anti(anti("s1", expires_at=100.0))
    await store.put_anti(anti("s2", expires_at=50.0))
    await store.put_anti(anti("s3", intent_sig="other"))
    assert [e.shape_hash for e in await store.anti_entries("agent", "isig", 40.0)] == ["s1", "s2"]
    assert await store.anti_entries("agent", "isig", 50.0) == [anti("s1", expires_at=100.0)]
    assert await store.anti_entries("agent", "isig", 100.0) == []
    await store.put_anti(anti("s1", expires_at=500.0, weight=2.5, reason="again"))
    assert await store.anti_entries("agent", "isig", 200.0) == [
        anti("s1", expires_at=500.0, weight=2.5, reason="again")
    ]
    assert len(await store.all_anti()) == 3


async def test_delete_anti_and_all_anti(store: PlanStore) -> None:
    await store.put_anti(anti("s2"))
    await store.put_anti(anti("s1", expires_at=0.0))
    await store.put_anti(anti("s1", scope="other"))
    await store.delete_anti("agent", "isig", "s2")
    await store.delete_anti("agent", "isig", "missing")
    assert await store.all_anti() == [anti("s1", expires_at=0.0), anti("s1", scope="other")]


# -- journal -----------------------------------------------------------------------------


async def test_journal_upserts_per_step_in_step_order(store: PlanStore) -> None:
    await store.write_journal(jentry("t", 2))
    await store.write_journal(jentry("t", 1))
    await store.write_journal(jentry("u", 1))
    done = jentry("t", 2, status="done", result_json='{"ok": "é"}', ts=6.0)
    await store.write_journal(done)
    assert await store.journal("t") == [jentry("t", 1), done]
    assert await store.journal("u") == [jentry("u", 1)]
    assert await store.journal("none") == []


# -- scale -------------------------------------------------------------------------------


async def test_two_thousand_l0_rows_smoke(store: PlanStore) -> None:
    # bench/plancache measures lookups at 10,000 entries; here the keys must stay exact.
    for i in range(2_000):
        await store.put(row(f"r{i}", key=f"key-{i}", status="active", created_at=float(i)))
    for i in (0, 1_234, 1_999):
        got = await store.get_by_key("l0", "agent", f"key-{i}")
        assert got is not None and got.id == f"r{i}"
    assert await store.get_by_key("l0", "agent", "key-2000") is None
    assert (await store.counts())["l0"] == 2_000
    assert [r.id for r in await store.entries(limit=2)] == ["r1999", "r1998"]


# -- concurrency and failures ------------------------------------------------------------


async def test_concurrent_puts_on_one_key_leave_one_row(store: PlanStore) -> None:
    await asyncio.gather(*(store.put(row(f"w{i}", key="k")) for i in range(6)))
    winner = await store.get_by_key("l0", "agent", "k")
    assert winner is not None and (await store.counts())["l0"] == 1
    assert [r.id for r in await store.entries()] == [winner.id]


async def test_a_broken_database_is_a_store_error(tmp_path: Path) -> None:
    from keel.plans.sql_store import SqlPlanStore

    events = await SqliteEventStore.open(tmp_path / "gone.db")
    plans = SqlPlanStore(events.engine)
    await events.close()
    (tmp_path / "gone.db").unlink()
    (tmp_path / "gone.db").mkdir()  # the path is now a folder: the database cannot open
    with pytest.raises(StoreError):
        await plans.get("a")
    with pytest.raises(StoreError):
        await plans.put(row("a"))
    await events.engine.dispose()


def _typed(engine: AsyncEngine) -> list[PlanStore]:
    """mypy checks that both classes satisfy the port."""
    from keel.plans.sql_store import SqlPlanStore

    return [MemoryPlanStore(), SqlPlanStore(engine)]


def test_both_stores_have_every_port_method_with_its_parameters() -> None:
    from keel.plans.sql_store import SqlPlanStore

    methods = [n for n, v in vars(PlanStore).items() if inspect.iscoroutinefunction(v)]
    assert len(methods) == 22
    for cls in (MemoryPlanStore, SqlPlanStore):
        for name in methods:
            want = inspect.signature(getattr(PlanStore, name)).parameters
            got = inspect.signature(getattr(cls, name)).parameters
            assert list(got) == list(want), (cls.__name__, name)
            assert [p.default for p in got.values()] == [p.default for p in want.values()]
