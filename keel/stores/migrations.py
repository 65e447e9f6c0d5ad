"""Append-only, numbered schema migrations for the SQL event store.

Rules: never edit or reorder an existing migration; add a new one with the next number.
Each migration builds the tables it needs from its own frozen definitions (not from
`keel.stores.tables`, which always shows the newest shape), so replaying migration 1 on a
new database still creates the version-1 shape that migration 2 expects. All pending
migrations run in one transaction, recorded in `schema_migrations`.
"""

from __future__ import annotations

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
    insert,
    select,
)

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
