"""The SQL tables of the event store, as SQLAlchemy Core objects shared by every dialect.

These describe the *current* schema, for queries. The schema itself is created and changed
only by `keel.stores.migrations`; a test checks that migrating an empty database gives
exactly these tables. Types are portable (SQLite, PostgreSQL): JSON is stored as text,
vectors as bytes. Besides the event log, the database holds the agents' knowledge indexes
(`knowledge_indexes`, `knowledge_chunks`, used by `keel.knowledge.sql_store`).
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
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
