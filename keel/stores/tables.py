"""The SQL tables of the event store, as SQLAlchemy Core objects shared by every dialect.

These describe the *current* schema, for queries. The schema itself is created and changed
only by `keel.stores.migrations`; a test checks that migrating an empty database gives
exactly these tables. Types are portable (SQLite, PostgreSQL): JSON is stored as text,
vectors as bytes. Besides the event log, the database holds the agents' knowledge indexes
(`knowledge_indexes`, `knowledge_chunks`, used by `keel.knowledge.sql_store`) and the plan
cache (`plan_templates`, `plan_observations`, `plan_signal_counts`, `plan_anti_entries`,
`plan_journal`, used by `keel.plans.sql_store`).
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    true,
)

metadata = MetaData()

# SQLite only auto-increments a column declared exactly INTEGER PRIMARY KEY.
_ROW_ID = BigInteger().with_variant(Integer(), "sqlite")

events = Table(
    "events",
    metadata,
    Column("id", _ROW_ID, primary_key=True, autoincrement=True),
    Column("conversation_id", String(255), nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("kind", String(64), nullable=False),
    Column("schema_version", Integer, nullable=False),
    Column("data", Text, nullable=False),
    Column("recorded_at", Float, nullable=False),
    # The database itself enforces optimistic concurrency: two writers cannot both store
    # the same (conversation, seq), whatever their isolation level.
    UniqueConstraint("conversation_id", "seq", name="uq_events_conversation_seq"),
)
"""One row per event. `id` is a global append order; `data` is the encoded event (JSON)."""

schema_migrations = Table(
    "schema_migrations",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("description", Text, nullable=False),
    Column("applied_at", Float, nullable=False),
)
"""Which numbered migrations have been applied, and when."""

knowledge_indexes = Table(
    "knowledge_indexes",
    metadata,
    Column("name", String(255), primary_key=True),
    Column("fingerprint", String(128), nullable=False),
    Column("embedder", String(255), nullable=False),
    Column("dimension", Integer, nullable=False),
    Column("chunk_count", Integer, nullable=False),
    Column("built_at", Float, nullable=False),
)
"""One row per knowledge index (one per agent): what it was built from (`keel.knowledge`)."""

knowledge_chunks = Table(
    "knowledge_chunks",
    metadata,
    Column("index_name", String(255), primary_key=True),
    Column("position", Integer, primary_key=True, autoincrement=False),
    Column("source", Text, nullable=False),
    Column("heading", Text, nullable=False),
    Column("text", Text, nullable=False),
    Column("text_hash", String(64), nullable=False),
    Column("vector", LargeBinary, nullable=False),
)
"""The chunks of each index, in order; `vector` is little-endian float32 (BLOB / BYTEA)."""

plan_templates = Table(
    "plan_templates",
    metadata,
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
"""Plan cache entries (`keel.plans.store_port.TemplateRow`): L0 exact entries and L1
candidates. One row per (layer, scope, key)."""

plan_observations = Table(
    "plan_observations",
    metadata,
    Column("id", _ROW_ID, primary_key=True, autoincrement=True),
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
    Index("ix_plan_observations_scope_intent", "scope", "intent_sig", "shape_hash"),
    Index("ix_plan_observations_turn", "turn_id"),
)
"""Recorded outcomes of plans (`Observation`); `id` keeps insertion order. The columns from
`slot_sig` on (migration 4) hold the source of the observed template."""

plan_signal_counts = Table(
    "plan_signal_counts",
    metadata,
    Column("scope", String(255), primary_key=True),
    Column("intent_sig", Text, primary_key=True),
    Column("shape_hash", String(255), primary_key=True),
    Column("signal", String(32), primary_key=True),
    Column("weight", Float, primary_key=True),
    Column("n", Integer, nullable=False),
)
"""How many L1-evidence observations (not `exact_only`, with a signal) of an (intent,
shape) carry a signal at a weight: `plan_observations` aggregated, kept up to date by the
plan store as observations are added and signalled (`SignalCount`)."""

plan_anti_entries = Table(
    "plan_anti_entries",
    metadata,
    Column("scope", String(255), primary_key=True),
    Column("intent_sig", Text, primary_key=True),
    Column("shape_hash", String(255), primary_key=True),
    Column("weight", Float, nullable=False),
    Column("expires_at", Float, nullable=False),
    Column("reason", Text, nullable=False),
)
"""Shapes barred from serving an intent until `expires_at` (`AntiEntry`)."""

plan_journal = Table(
    "plan_journal",
    metadata,
    Column("turn_id", String(255), primary_key=True),
    Column("step_id", Integer, primary_key=True, autoincrement=False),
    Column("tool", Text, nullable=False),
    Column("idem_key", Text, nullable=False),
    Column("args_hash", String(255), nullable=False),
    Column("status", String(16), nullable=False),
    Column("result_json", Text, nullable=False),
    Column("ts", Float, nullable=False),
)
"""The effect journal: one row per effectful step of a turn (`JournalEntry`)."""
