"""`SqlPlanStore`: the plan cache in the event store's SQL database (SQLite, PostgreSQL).

Tables `plan_templates`, `plan_observations`, `plan_signal_counts`, `plan_anti_entries` and
`plan_journal` are created by the store migrations (`keel.stores.migrations`, versions 3
and 4), so opening the event store prepares them. Upserts are `INSERT ... ON CONFLICT DO
UPDATE` (concurrent writers of one key queue, the last one wins); `put` first drops a row
holding the same id under another key. A duplicate key that still escapes (two writers of
one id under different keys) is retried. SQLite's write lock serialises writers anyway.
Orders match `keel.plans.memory_store` (one conformance suite runs on both); string ties
are broken bytewise on every dialect. A turn's observations are found through the
`turn_id` index; the signal counts of every (intent, shape) live in `plan_signal_counts`,
changed in the same transaction as the observations they count (`add_observation`,
`set_signal`), so reading the evidence of an (intent, shape) costs one primary-key lookup
however long its history. Database failures become `StoreError`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from sqlalchemy import Table, and_, delete, func, insert, not_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from keel.errors import StoreError
from keel.plans.memory_store import STATUSES
from keel.plans.store_port import (
    AntiEntry,
    FlushLayer,
    JournalEntry,
    Layer,
    Observation,
    SignalCount,
    Status,
    TemplateRow,
)
from keel.stores.sql import DB_ERRORS, WRITE_OPTION
from keel.stores.tables import plan_anti_entries as anti_t
from keel.stores.tables import plan_journal as journal_t
from keel.stores.tables import plan_observations as obs_t
from keel.stores.tables import plan_signal_counts as counts_t
from keel.stores.tables import plan_templates as rows_t

_UPSERT_ATTEMPTS = 3
_CHUNK = 500

Write = Callable[[AsyncConnection], Awaitable[Any]]


class SqlPlanStore:
    """`PlanStore` on a migrated Keel database (`SqlEventStore.engine`)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        bytewise = engine.dialect.name == "postgresql"
        self._id_order = rows_t.c.id.collate("C") if bytewise else rows_t.c.id

    # -- plumbing --------------------------------------------------------------------

    async def _read(self, what: str, query: Any) -> list[Any]:
        try:
            async with self._engine.connect() as conn:
                return list((await conn.execute(query)).all())
        except DB_ERRORS as exc:
            raise StoreError(f"reading {what} failed: {exc}") from exc

    async def _write(self, what: str, work: Write) -> Any:
        """Run `work` in a write transaction; retry a lost duplicate-key race."""
        for attempt in range(1, _UPSERT_ATTEMPTS + 1):
            try:
                async with self._engine.connect() as conn:
                    conn = await conn.execution_options(**{WRITE_OPTION: True})
                    async with conn.begin():
                        return await work(conn)
            except IntegrityError as exc:
                if attempt == _UPSERT_ATTEMPTS:
                    raise StoreError(f"{what} failed: {exc}") from exc
            except DB_ERRORS as exc:
                raise StoreError(f"{what} failed: {exc}") from exc
        raise AssertionError("unreachable")

    # -- templates -------------------------------------------------------------------

    async def get(self, entry_id: str) -> TemplateRow | None:
        """See `PlanStore.get`."""
        found = await self._read("a plan entry", select(rows_t).where(rows_t.c.id == entry_id))
        return template_of(found[0]) if found else None

    async def get_by_key(self, layer: Layer, scope: str, key: str) -> TemplateRow | None:
        """See `PlanStore.get_by_key`."""
        query = select(rows_t).where(
            rows_t.c.layer == layer, rows_t.c.scope == scope, rows_t.c.key == key
        )
        found = await self._read("a plan entry", query)
        return template_of(found[0]) if found else None

    async def by_intent(self, scope: str, intent_sig: str) -> list[TemplateRow]:
        """See `PlanStore.by_intent`: L1 rows, oldest first."""
        query = (
            select(rows_t)
            .where(rows_t.c.scope == scope, rows_t.c.intent_sig == intent_sig)
            .where(rows_t.c.layer == "l1")
            .order_by(rows_t.c.created_at, self._id_order)
        )
        return [template_of(r) for r in await self._read("plan entries", query)]

    async def put(self, row: TemplateRow) -> None:
        """See `PlanStore.put`."""
        values = {name: getattr(row, name) for name in ROW_FIELDS}
        same_key = and_(
            rows_t.c.layer == row.layer, rows_t.c.scope == row.scope, rows_t.c.key == row.key
        )

        async def work(conn: AsyncConnection) -> None:
            await conn.execute(delete(rows_t).where(rows_t.c.id == row.id, not_(same_key)))
            await conn.execute(upsert(conn, rows_t, values, ("layer", "scope", "key")))

        await self._write(f"storing plan entry {row.id!r}", work)

    async def delete(self, entry_id: str) -> bool:
        """See `PlanStore.delete`."""
        return await self.delete_many([entry_id]) == 1

    async def delete_many(self, entry_ids: Sequence[str]) -> int:
        """See `PlanStore.delete_many`: how many of the ids existed."""
        ids = sorted(set(entry_ids))

        async def work(conn: AsyncConnection) -> int:
            deleted = 0
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                result = await conn.execute(delete(rows_t).where(rows_t.c.id.in_(chunk)))
                deleted += int(result.rowcount)
            return deleted

        return int(await self._write("deleting plan entries", work)) if ids else 0

    async def flush(self, layer: FlushLayer) -> int:
        """See `PlanStore.flush`: the number of template rows deleted."""

        async def work(conn: AsyncConnection) -> int:
            rows = (
                delete(rows_t) if layer == "all" else delete(rows_t).where(rows_t.c.layer == layer)
            )
            deleted = int((await conn.execute(rows)).rowcount)
            if layer in ("l1", "all"):
                await conn.execute(delete(obs_t))
                await conn.execute(delete(counts_t))
                await conn.execute(delete(anti_t))
            return deleted

        return int(await self._write(f"flushing the plan cache ({layer})", work))

    async def entries(
        self, *, layer: Layer | None = None, status: Status | None = None, limit: int = 100
    ) -> list[TemplateRow]:
        """See `PlanStore.entries`: newest first, at most `limit`."""
        if limit < 1:
            return []
        query = select(rows_t).order_by(rows_t.c.created_at.desc(), self._id_order).limit(limit)
        if layer is not None:
            query = query.where(rows_t.c.layer == layer)
        if status is not None:
            query = query.where(rows_t.c.status == status)
        return [template_of(r) for r in await self._read("plan entries", query)]

    async def counts(self) -> dict[str, int]:
        """See `PlanStore.counts`."""
        by_status = select(rows_t.c.layer, rows_t.c.status, func.count()).group_by(
            rows_t.c.layer, rows_t.c.status
        )
        result = {"l0": 0} | {f"l1_{s}": 0 for s in STATUSES}
        for layer, status, n in await self._read("plan cache counts", by_status):
            name = "l0" if layer == "l0" else f"l1_{status}"
            result[name] = result.get(name, 0) + int(n)
        for name, table in (("observations", obs_t), ("anti", anti_t)):
            found = await self._read("plan cache counts", select(func.count()).select_from(table))
            result[name] = int(found[0][0])
        return result

    # -- observations ----------------------------------------------------------------

    async def add_observation(self, observation: Observation) -> None:
        """See `PlanStore.add_observation`."""
        values = {name: getattr(observation, name) for name in OBS_FIELDS}

        async def work(conn: AsyncConnection) -> None:
            await conn.execute(insert(obs_t), [values])
            await count_signals(conn, Counter({evidence_key(observation): 1}))

        await self._write("recording a plan observation", work)

    async def observations(
        self, scope: str, intent_sig: str, shape_hash: str | None = None
    ) -> list[Observation]:
        """See `PlanStore.observations`: insertion order."""
        query = (
            select(obs_t)
            .where(obs_t.c.scope == scope, obs_t.c.intent_sig == intent_sig)
            .order_by(obs_t.c.id)
        )
        if shape_hash is not None:
            query = query.where(obs_t.c.shape_hash == shape_hash)
        return [observation_of(r) for r in await self._read("plan observations", query)]

    async def observations_for_turn(self, turn_id: str) -> list[Observation]:
        """See `PlanStore.observations_for_turn`: insertion order."""
        query = select(obs_t).where(obs_t.c.turn_id == turn_id).order_by(obs_t.c.id)
        return [observation_of(r) for r in await self._read("plan observations", query)]

    async def count_observations(
        self, scope: str, intent_sig: str, shape_hash: str | None = None
    ) -> int:
        """See `PlanStore.count_observations`."""
        query = (
            select(func.count())
            .select_from(obs_t)
            .where(obs_t.c.scope == scope, obs_t.c.intent_sig == intent_sig)
        )
        if shape_hash is not None:
            query = query.where(obs_t.c.shape_hash == shape_hash)
        return int((await self._read("plan observation counts", query))[0][0])

    async def signal_counts(
        self, scope: str, intent_sig: str, shape_hash: str
    ) -> list[SignalCount]:
        """See `PlanStore.signal_counts`: read from `plan_signal_counts`, by (signal, weight)."""
        query = select(counts_t.c.signal, counts_t.c.weight, counts_t.c.n).where(
            counts_t.c.scope == scope,
            counts_t.c.intent_sig == intent_sig,
            counts_t.c.shape_hash == shape_hash,
            counts_t.c.n > 0,
        )
        found = [
            SignalCount(signal=str(signal), weight=float(weight), count=int(n))
            for signal, weight, n in await self._read("plan signal counts", query)
        ]
        return sorted(found, key=lambda c: (c.signal.encode(), c.weight))

    async def recent_observations(self, limit: int = 30) -> list[Observation]:
        """See `PlanStore.recent_observations`: newest first (by `ts`, then insertion)."""
        if limit < 1:
            return []
        query = select(obs_t).order_by(obs_t.c.ts.desc(), obs_t.c.id.desc()).limit(limit)
        return [observation_of(r) for r in await self._read("plan observations", query)]

    async def set_signal(self, turn_id: str, signal: str, weight: float) -> None:
        """See `PlanStore.set_signal`: every observation of the turn, and the signal counts
        (the turn's rows are locked first, so concurrent signals on a turn count once)."""
        mine = obs_t.c.turn_id == turn_id
        fields = (obs_t.c.scope, obs_t.c.intent_sig, obs_t.c.shape_hash, obs_t.c.exact_only)
        before = select(*fields, obs_t.c.signal, obs_t.c.signal_weight).where(mine)
        query = update(obs_t).where(mine).values(signal=signal, signal_weight=weight)

        async def work(conn: AsyncConnection) -> None:
            changes: Counter[Key | None] = Counter()
            for scope, intent, shape, exact, old, old_weight in await conn.execute(
                before.with_for_update()
            ):
                if not exact:
                    changes[(scope, intent, shape, old, float(old_weight))] -= 1
                    changes[(scope, intent, shape, signal, weight)] += 1
            await conn.execute(query)
            await count_signals(conn, changes)

        await self._write(f"recording feedback for turn {turn_id!r}", work)

    # -- anti-entries ----------------------------------------------------------------

    async def put_anti(self, entry: AntiEntry) -> None:
        """See `PlanStore.put_anti`: replaces the entry for the same shape."""
        values = {c.name: getattr(entry, c.name) for c in anti_t.columns}

        async def work(conn: AsyncConnection) -> None:
            await conn.execute(upsert(conn, anti_t, values, ("scope", "intent_sig", "shape_hash")))

        await self._write("storing an anti-entry", work)

    async def anti_entries(self, scope: str, intent_sig: str, now: float) -> list[AntiEntry]:
        """See `PlanStore.anti_entries`: those not expired at `now`."""
        query = select(anti_t).where(
            anti_t.c.scope == scope, anti_t.c.intent_sig == intent_sig, anti_t.c.expires_at > now
        )
        return sorted_anti(await self._read("anti-entries", query))

    async def delete_anti(self, scope: str, intent_sig: str, shape_hash: str) -> None:
        """See `PlanStore.delete_anti`."""

        key = (anti_t.c.scope == scope, anti_t.c.intent_sig == intent_sig)

        async def work(conn: AsyncConnection) -> None:
            await conn.execute(delete(anti_t).where(*key, anti_t.c.shape_hash == shape_hash))

        await self._write("deleting an anti-entry", work)

    async def all_anti(self) -> list[AntiEntry]:
        """See `PlanStore.all_anti`: expired ones included."""
        return sorted_anti(await self._read("anti-entries", select(anti_t)))

    # -- effect journal --------------------------------------------------------------

    async def journal(self, turn_id: str) -> list[JournalEntry]:
        """See `PlanStore.journal`: by step id."""
        query = (
            select(journal_t).where(journal_t.c.turn_id == turn_id).order_by(journal_t.c.step_id)
        )
        return [
            JournalEntry(**{c.name: getattr(r, c.name) for c in journal_t.columns})
            for r in await self._read(f"the journal of turn {turn_id!r}", query)
        ]

    async def write_journal(self, entry: JournalEntry) -> None:
        """See `PlanStore.write_journal`."""
        values = {c.name: getattr(entry, c.name) for c in journal_t.columns}

        async def work(conn: AsyncConnection) -> None:
            await conn.execute(upsert(conn, journal_t, values, ("turn_id", "step_id")))

        await self._write(f"writing the journal of turn {entry.turn_id!r}", work)


# Rows of the plan tables and the statements the store shares: upserts on either dialect,
# the signal-count bookkeeping, and reading rows back as port values.

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
