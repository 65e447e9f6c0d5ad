"""`MemoryPlanStore`: the `PlanStore` port in process memory (tests, benchmarks).

Same observable behaviour as `keel.plans.sql_store.SqlPlanStore` (one conformance suite
runs on both): the same orders, the same upsert and flush rules. Nothing survives the
process. Not thread-safe; safe under asyncio because no method awaits between reading and
writing its state.

Orders (shared with the SQL store):

* `entries`: newest first (`created_at` descending, then `id`);
* `by_intent`: oldest first (`created_at`, then `id`);
* `observations`: insertion order; `recent_observations`: newest first (`ts`, then insertion);
* `all_anti`: by (scope, intent_sig, shape_hash); `journal`: by step id.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from keel.plans.store_port import (
    AntiEntry,
    FlushLayer,
    JournalEntry,
    Layer,
    Observation,
    Status,
    TemplateRow,
)

STATUSES: tuple[Status, ...] = ("active", "shadow", "demoted", "stale")
"""Every template status, in the order `counts` reports them."""


def _newest_first(row: TemplateRow) -> tuple[float, str]:
    return (-row.created_at, row.id)


class MemoryPlanStore:
    """`PlanStore` in memory."""

    def __init__(self) -> None:
        self._rows: dict[str, TemplateRow] = {}
        self._by_key: dict[tuple[str, str, str], str] = {}
        self._observations: list[tuple[int, Observation]] = []
        self._next_observation = 0
        self._anti: dict[tuple[str, str, str], AntiEntry] = {}
        self._journal: dict[tuple[str, int], JournalEntry] = {}

    # -- templates -------------------------------------------------------------------

    async def get(self, entry_id: str) -> TemplateRow | None:
        """See `PlanStore.get`."""
        return self._rows.get(entry_id)

    async def get_by_key(self, layer: Layer, scope: str, key: str) -> TemplateRow | None:
        """See `PlanStore.get_by_key`."""
        entry_id = self._by_key.get((layer, scope, key))
        return None if entry_id is None else self._rows[entry_id]

    async def by_intent(self, scope: str, intent_sig: str) -> list[TemplateRow]:
        """See `PlanStore.by_intent`: L1 rows, oldest first."""
        found = [
            r
            for r in self._rows.values()
            if r.layer == "l1" and r.scope == scope and r.intent_sig == intent_sig
        ]
        return sorted(found, key=lambda r: (r.created_at, r.id))

    async def put(self, row: TemplateRow) -> None:
        """See `PlanStore.put`: replaces the row with the same id and the row with the same
        (layer, scope, key), if they exist."""
        clash = self._by_key.get((row.layer, row.scope, row.key))
        if clash is not None:
            self._drop(clash)
        self._drop(row.id)
        self._rows[row.id] = row
        self._by_key[(row.layer, row.scope, row.key)] = row.id

    async def delete(self, entry_id: str) -> bool:
        """See `PlanStore.delete`."""
        return self._drop(entry_id)

    async def delete_many(self, entry_ids: Sequence[str]) -> int:
        """See `PlanStore.delete_many`: how many of the ids existed."""
        return sum([self._drop(i) for i in set(entry_ids)])

    async def flush(self, layer: FlushLayer) -> int:
        """See `PlanStore.flush`: the number of template rows deleted."""
        doomed = [i for i, r in self._rows.items() if layer == "all" or r.layer == layer]
        for entry_id in doomed:
            self._drop(entry_id)
        if layer in ("l1", "all"):
            self._observations.clear()
            self._anti.clear()
        return len(doomed)

    async def entries(
        self, *, layer: Layer | None = None, status: Status | None = None, limit: int = 100
    ) -> list[TemplateRow]:
        """See `PlanStore.entries`: newest first, at most `limit` (none when `limit` < 1)."""
        found = [
            r
            for r in self._rows.values()
            if (layer is None or r.layer == layer) and (status is None or r.status == status)
        ]
        return sorted(found, key=_newest_first)[: max(limit, 0)]

    async def counts(self) -> dict[str, int]:
        """See `PlanStore.counts`."""
        result = {"l0": 0} | {f"l1_{s}": 0 for s in STATUSES}
        for row in self._rows.values():
            name = "l0" if row.layer == "l0" else f"l1_{row.status}"
            result[name] = result.get(name, 0) + 1
        result["observations"] = len(self._observations)
        result["anti"] = len(self._anti)
        return result

    def _drop(self, entry_id: str) -> bool:
        row = self._rows.pop(entry_id, None)
        if row is None:
            return False
        del self._by_key[(row.layer, row.scope, row.key)]
        return True

    # -- observations ----------------------------------------------------------------

    async def add_observation(self, observation: Observation) -> None:
        """See `PlanStore.add_observation`."""
        self._next_observation += 1
        self._observations.append((self._next_observation, observation))

    async def observations(
        self, scope: str, intent_sig: str, shape_hash: str | None = None
    ) -> list[Observation]:
        """See `PlanStore.observations`: insertion order."""
        return [
            o
            for _, o in self._observations
            if o.scope == scope
            and o.intent_sig == intent_sig
            and (shape_hash is None or o.shape_hash == shape_hash)
        ]

    async def recent_observations(self, limit: int = 30) -> list[Observation]:
        """See `PlanStore.recent_observations`: newest first (by `ts`, then insertion)."""
        ordered = sorted(self._observations, key=lambda p: (-p[1].ts, -p[0]))
        return [o for _, o in ordered[: max(limit, 0)]]

    async def set_signal(self, turn_id: str, signal: str, weight: float) -> None:
        """See `PlanStore.set_signal`: every observation of the turn."""
        self._observations = [
            (n, dataclasses.replace(o, signal=signal, signal_weight=weight))
            if o.turn_id == turn_id
            else (n, o)
            for n, o in self._observations
        ]

    # -- anti-entries ----------------------------------------------------------------

    async def put_anti(self, entry: AntiEntry) -> None:
        """See `PlanStore.put_anti`: replaces the entry for the same shape."""
        self._anti[(entry.scope, entry.intent_sig, entry.shape_hash)] = entry

    async def anti_entries(self, scope: str, intent_sig: str, now: float) -> list[AntiEntry]:
        """See `PlanStore.anti_entries`: those not expired at `now` (expires_at > now)."""
        return [
            e
            for k, e in sorted(self._anti.items())
            if k[:2] == (scope, intent_sig) and e.expires_at > now
        ]

    async def delete_anti(self, scope: str, intent_sig: str, shape_hash: str) -> None:
        """See `PlanStore.delete_anti`."""
        self._anti.pop((scope, intent_sig, shape_hash), None)

    async def all_anti(self) -> list[AntiEntry]:
        """See `PlanStore.all_anti`: expired ones included."""
        return [e for _, e in sorted(self._anti.items())]

    # -- effect journal --------------------------------------------------------------

    async def journal(self, turn_id: str) -> list[JournalEntry]:
        """See `PlanStore.journal`: by step id."""
        return [e for (t, _), e in sorted(self._journal.items()) if t == turn_id]

    async def write_journal(self, entry: JournalEntry) -> None:
        """See `PlanStore.write_journal`."""
        self._journal[(entry.turn_id, entry.step_id)] = entry
