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
    Column,
    Connection,
    Float,
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
