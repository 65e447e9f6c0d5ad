"""Rows of the plan tables and the SQL statements `SqlPlanStore` shares: upserts on either
dialect, the signal-count bookkeeping, and reading rows back as port values."""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlalchemy import Table, delete
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from keel.plans.store_port import AntiEntry, Observation, TemplateRow
from keel.stores.tables import plan_anti_entries as anti_t
from keel.stores.tables import plan_observations as obs_t
from keel.stores.tables import plan_signal_counts as counts_t
from keel.stores.tables import plan_templates as rows_t

ROW_FIELDS = tuple(c.name for c in rows_t.columns)
OBS_FIELDS = tuple(c.name for c in obs_t.columns if c.name != "id")


def upsert(
    conn: AsyncConnection, table: Table, values: dict[str, Any], keys: tuple[str, ...]
) -> Any:
    """INSERT ... ON CONFLICT (keys) DO UPDATE: concurrent writers of one key wait for
    each other instead of failing (SQLite and PostgreSQL share the syntax)."""
    dialect_insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    statement = dialect_insert(table).values(**values)
    return statement.on_conflict_do_update(
        index_elements=list(keys),
        set_={name: statement.excluded[name] for name in values if name not in keys},
    )


Key = tuple[str, str, str, str, float]
"""(scope, intent_sig, shape_hash, signal, weight): one row of `plan_signal_counts`."""


def evidence_key(o: Observation) -> Key | None:
    """The signal count an observation adds to (None: it has no signal, or is exact-only)."""
    if o.exact_only:
        return None
    return (o.scope, o.intent_sig, o.shape_hash, o.signal, o.signal_weight)


async def count_signals(conn: AsyncConnection, changes: Counter[Key | None]) -> None:
    """Add `changes` to `plan_signal_counts` (keys in order, so concurrent writers lock rows
    in one order); rows that reach zero are deleted. Unsignalled changes are ignored."""
    names = ("scope", "intent_sig", "shape_hash", "signal", "weight")
    dialect_insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    for key in sorted(k for k in changes if k is not None and k[3] and changes[k]):
        add = dialect_insert(counts_t).values(**dict(zip(names, key, strict=True)), n=changes[key])
        await conn.execute(
            add.on_conflict_do_update(
                index_elements=list(names), set_={"n": counts_t.c.n + add.excluded.n}
            )
        )
        if changes[key] < 0:
            same = [counts_t.c[name] == value for name, value in zip(names, key, strict=True)]
            await conn.execute(delete(counts_t).where(*same, counts_t.c.n <= 0))


def template_of(row: Any) -> TemplateRow:
    values = {name: getattr(row, name) for name in ROW_FIELDS}
    values["effectful"] = bool(values["effectful"])
    if values["embedding"] is not None:
        values["embedding"] = bytes(values["embedding"])
    return TemplateRow(**values)


def observation_of(row: Any) -> Observation:
    values = {name: getattr(row, name) for name in OBS_FIELDS}
    values["effectful"] = bool(values["effectful"])
    values["exact_only"] = bool(values["exact_only"])
    return Observation(**values)


def sorted_anti(rows: list[Any]) -> list[AntiEntry]:
    entries = [AntiEntry(**{c.name: getattr(r, c.name) for c in anti_t.columns}) for r in rows]
    return sorted(entries, key=lambda e: (e.scope, e.intent_sig, e.shape_hash))
