"""Append-only, numbered schema migrations for the SQL event store.

Rules: never edit or reorder an existing migration; add a new one with the next number.
Each migration builds the tables it needs from its own frozen definitions (not from
`keel.stores.tables`, which always shows the newest shape), so replaying migration 1 on a
new database still creates the version-1 shape that migration 2 expects. All pending
migrations run in one transaction, recorded in `schema_migrations`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Connection,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    bindparam,
    column,
    false,
    func,
    insert,
    select,
    table,
    text,
    true,
    update,
)
from sqlalchemy.schema import CreateColumn

from keel.stores import tables
from keel.stores.errors import StoreSchemaTooNew


@dataclass(frozen=True, kw_only=True, slots=True)
class Migration:
    """One schema step: `apply` runs inside the migration transaction."""

    version: int
    description: str
    apply: Callable[[Connection], None]


def _m0001_events(conn: Connection) -> None:
    md = MetaData()
    Table(
        "events",
        md,
        Column(
            "id",
            BigInteger().with_variant(Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        Column("conversation_id", String(255), nullable=False),
        Column("seq", BigInteger, nullable=False),
        Column("kind", String(64), nullable=False),
        Column("schema_version", Integer, nullable=False),
        Column("data", Text, nullable=False),
        Column("recorded_at", Float, nullable=False),
        UniqueConstraint("conversation_id", "seq", name="uq_events_conversation_seq"),
    )
    md.create_all(conn)


def _m0002_knowledge(conn: Connection) -> None:
    md = MetaData()
    Table(
        "knowledge_indexes",
        md,
        Column("name", String(255), primary_key=True),
        Column("fingerprint", String(128), nullable=False),
        Column("embedder", String(255), nullable=False),
        Column("dimension", Integer, nullable=False),
        Column("chunk_count", Integer, nullable=False),
        Column("built_at", Float, nullable=False),
    )
    Table(
        "knowledge_chunks",
        md,
        Column("index_name", String(255), primary_key=True),
        Column("position", Integer, primary_key=True, autoincrement=False),
        Column("source", Text, nullable=False),
        Column("heading", Text, nullable=False),
        Column("text", Text, nullable=False),
        Column("text_hash", String(64), nullable=False),
        Column("vector", LargeBinary, nullable=False),
    )
    md.create_all(conn)


def _m0003_plans(conn: Connection) -> None:
    md = MetaData()
    row_id = BigInteger().with_variant(Integer(), "sqlite")
    Table(
        "plan_templates",
        md,
        Column("id", String(255), primary_key=True),
        Column("layer", String(8), nullable=False),
        Column("scope", String(255), nullable=False),
        Column("key", Text, nullable=False),
        Column("intent_sig", Text, nullable=False),
        Column("slot_sig", Text, nullable=False),
        Column("shape_hash", String(255), nullable=False),
        Column("plan_json", Text, nullable=False),
        Column("stored_intent_json", Text, nullable=False),
        Column("bindings_json", Text, nullable=False),
        Column("request_text", Text, nullable=False),
        Column("tools_sig", Text, nullable=False),
        Column("pool_sig", Text, nullable=False),
        Column("logic_sig", Text, nullable=False),
        Column("effectful", Boolean, nullable=False),
        Column("status", String(16), nullable=False),
        Column("origin", Text, nullable=False),
        Column("embedding", LargeBinary, nullable=True),
        Column("embedder_id", Text, nullable=True),
        Column("threshold", Float, nullable=False),
        Column("alpha", Float, nullable=False),
        Column("beta", Float, nullable=False),
        Column("n_served", Integer, nullable=False),
        Column("created_at", Float, nullable=False),
        Column("last_served_at", Float, nullable=False),
        UniqueConstraint("layer", "scope", "key", name="uq_plan_templates_layer_scope_key"),
        Index("ix_plan_templates_scope_intent", "scope", "intent_sig"),
    )
    Table(
        "plan_observations",
        md,
        Column("id", row_id, primary_key=True, autoincrement=True),
        Column("turn_id", String(255), nullable=False),
        Column("scope", String(255), nullable=False),
        Column("intent_sig", Text, nullable=False),
        Column("shape_hash", String(255), nullable=False),
        Column("plan_json", Text, nullable=False),
        Column("template_id", String(255), nullable=True),
        Column("raw_plan_json", Text, nullable=False),
        Column("outcome", String(8), nullable=False),
        Column("signal", String(32), nullable=False),
        Column("signal_weight", Float, nullable=False),
        Column("ts", Float, nullable=False),
        Index("ix_plan_observations_scope_intent", "scope", "intent_sig", "shape_hash"),
        Index("ix_plan_observations_turn", "turn_id"),
    )
    Table(
        "plan_anti_entries",
        md,
        Column("scope", String(255), primary_key=True),
        Column("intent_sig", Text, primary_key=True),
        Column("shape_hash", String(255), primary_key=True),
        Column("weight", Float, nullable=False),
        Column("expires_at", Float, nullable=False),
        Column("reason", Text, nullable=False),
    )
    Table(
        "plan_journal",
        md,
        Column("turn_id", String(255), primary_key=True),
        Column("step_id", Integer, primary_key=True, autoincrement=False),
        Column("tool", Text, nullable=False),
        Column("idem_key", Text, nullable=False),
        Column("args_hash", String(255), nullable=False),
        Column("status", String(16), nullable=False),
        Column("result_json", Text, nullable=False),
        Column("ts", Float, nullable=False),
    )
    md.create_all(conn)


def _m0004_observation_sources(conn: Connection) -> None:
    """The source of an observation's template in columns (it was JSON under the plan's
    `meta.cache`, re-parsed on every feedback), existing rows moved over; the signal counts
    of every (intent, shape), counted from the existing observations."""
    md = MetaData()
    added = Table(
        "plan_observations",
        md,
        Column("slot_sig", Text, nullable=False, server_default=""),
        Column("request_text", Text, nullable=False, server_default=""),
        Column("stored_intent_json", Text, nullable=False, server_default=""),
        Column("bindings_json", Text, nullable=False, server_default=""),
        Column("tools_sig", Text, nullable=False, server_default=""),
        Column("pool_sig", Text, nullable=False, server_default=""),
        Column("logic_sig", Text, nullable=False, server_default=""),
        Column("effectful", Boolean, nullable=False, server_default=true()),
        Column("exact_only", Boolean, nullable=False, server_default=false()),
        Column("l0_id", String(255), nullable=True),
        Column("served", String(8), nullable=False, server_default=""),
        Column("origin", Text, nullable=False, server_default=""),
    )
    for added_column in added.columns:
        spec = CreateColumn(added_column).compile(dialect=conn.dialect)
        conn.execute(text(f"ALTER TABLE plan_observations ADD COLUMN {spec}"))
    target = table(
        "plan_observations",
        column("id", Integer),
        column("plan_json", Text),
        *(column(c.name, c.type) for c in added.columns),
    )
    legacy = conn.execute(
        select(target.c.id, target.c.plan_json).where(target.c.plan_json.like('%"cache":%'))
    ).all()
    moved = [
        {"row_id": row_id, **values}
        for row_id, plan_json in legacy
        if (values := _m0004_source(plan_json)) is not None
    ]
    if moved:
        conn.execute(update(target).where(target.c.id == bindparam("row_id")), moved)
    counts = Table(
        "plan_signal_counts",
        md,
        Column("scope", String(255), primary_key=True),
        Column("intent_sig", Text, primary_key=True),
        Column("shape_hash", String(255), primary_key=True),
        Column("signal", String(32), primary_key=True),
        Column("weight", Float, primary_key=True),
        Column("n", Integer, nullable=False),
    )
    counts.create(conn)
    o = table(
        "plan_observations",
        *(column(n) for n in ("scope", "intent_sig", "shape_hash", "signal", "signal_weight")),
        column("exact_only", Boolean),
    )
    keys = (o.c.scope, o.c.intent_sig, o.c.shape_hash, o.c.signal, o.c.signal_weight)
    evidence = (
        select(*keys, func.count())
        .where(o.c.signal != "", o.c.exact_only == false())
        .group_by(*keys)
    )
    conn.execute(insert(counts).from_select([c.name for c in counts.columns], evidence))


def _m0004_source(plan_json: str) -> dict[str, object] | None:
    """Migration 4's reading of a version-3 observation plan: the columns, or None."""
    try:
        data = json.loads(plan_json)
    except ValueError:
        return None
    meta = data.get("meta") if isinstance(data, dict) else None
    raw = meta.pop("cache", None) if isinstance(meta, dict) else None
    if not isinstance(raw, dict):
        return None
    bindings, l0_id = raw.get("bindings"), raw.get("l0_id")
    return {
        "plan_json": json.dumps(data, sort_keys=True, separators=(",", ":")),
        "slot_sig": str(raw.get("slot_sig", "")),
        "request_text": str(raw.get("request", "")),
        "stored_intent_json": json.dumps(raw.get("intent"), sort_keys=True),
        "bindings_json": json.dumps(bindings if isinstance(bindings, dict) else {}, sort_keys=True),
        "tools_sig": str(raw.get("tools_sig", "")),
        "pool_sig": str(raw.get("pool_sig", "")),
        "logic_sig": str(raw.get("logic_sig", "")),
        "effectful": raw.get("effectful") is not False,
        "exact_only": raw.get("exact_only") is True,
        "l0_id": l0_id if isinstance(l0_id, str) else None,
        "served": str(raw.get("served", "")),
        "origin": str(raw.get("origin", "planner")),
    }


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        version=1,
        description="events: one row per event, unique (conversation_id, seq)",
        apply=_m0001_events,
    ),
    Migration(
        version=2,
        description="knowledge_indexes, knowledge_chunks: the knowledge index (chunks, vectors)",
        apply=_m0002_knowledge,
    ),
    Migration(
        version=3,
        description="plan_templates, plan_observations, plan_anti_entries, plan_journal: "
        "the plan cache",
        apply=_m0003_plans,
    ),
    Migration(
        version=4,
        description="plan_observations: the source of the observed template in columns "
        "(slot_sig ... origin, exact_only), moved out of the plan's meta.cache; "
        "plan_signal_counts: the signals of each (intent, shape), counted",
        apply=_m0004_observation_sources,
    ),
)
"""Every migration, in order. Append only."""


def migrate(conn: Connection, *, now: float) -> list[int]:
    """Apply the migrations `conn`'s database lacks; return the versions applied.

    Runs on a sync connection (use `AsyncConnection.run_sync`) inside the caller's
    transaction. Raises `StoreSchemaTooNew` if the database knows migrations this code
    does not.
    """
    # The bookkeeping table is the one thing outside the numbered list: its shape is fixed.
    tables.schema_migrations.create(conn, checkfirst=True)
    applied = set(conn.execute(select(tables.schema_migrations.c.version)).scalars())
    known = {m.version for m in MIGRATIONS}
    if applied - known:
        raise StoreSchemaTooNew(
            f"database has schema migration(s) {sorted(applied - known)} unknown to this "
            f"Keel (it knows up to {max(known)}); upgrade Keel"
        )
    done: list[int] = []
    for migration in MIGRATIONS:
        if migration.version in applied:
            continue
        migration.apply(conn)
        conn.execute(
            insert(tables.schema_migrations).values(
                version=migration.version, description=migration.description, applied_at=now
            )
        )
        done.append(migration.version)
    return done
