"""`MemoryPlanStore`: the `PlanStore` port in process memory (tests, benchmarks).

Same observable behaviour as `keel.plans.sql_store.SqlPlanStore` (one conformance suite
runs on both): the same orders, the same upsert and flush rules. Nothing survives the
process. Not thread-safe; safe under asyncio because no method awaits between reading and
writing its state.

Orders (shared with the SQL store):

* `entries`: newest first (`created_at` descending, then `id`);
* `by_intent`: oldest first (`created_at`, then `id`);
* `observations`, `observations_for_turn`: insertion order; `recent_observations`: newest
  first (`ts`, then insertion);
* `signal_counts`: by (signal, weight);
* `all_anti`: by (scope, intent_sig, shape_hash); `journal`: by step id.

Observations are indexed by turn and by (scope, intent, shape), kept in (ts, insertion)
order for `recent_observations` (an insertion with a non-decreasing `ts` appends), and the
signal counts of every (scope, intent, shape) are kept up to date as observations are
added and signalled, so no call scans the whole history.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections import Counter
from collections.abc import Sequence

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

STATUSES: tuple[Status, ...] = ("active", "shadow", "demoted", "stale")
"""Every template status, in the order `counts` reports them."""


def _newest_first(row: TemplateRow) -> tuple[float, str]:
    return (-row.created_at, row.id)


class MemoryPlanStore:
    """`PlanStore` in memory."""

    def __init__(self) -> None:
        self._rows: dict[str, TemplateRow] = {}
        self._by_key: dict[tuple[str, str, str], str] = {}
        self._l1_by_intent: dict[tuple[str, str], set[str]] = {}
        self._log = _ObservationLog()
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
        found = [self._rows[i] for i in self._l1_by_intent.get((scope, intent_sig), ())]
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
        if row.layer == "l1":
            self._l1_by_intent.setdefault((row.scope, row.intent_sig), set()).add(row.id)

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
            self._log = _ObservationLog()
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
        result["observations"] = len(self._log.items)
        result["anti"] = len(self._anti)
        return result

    def _drop(self, entry_id: str) -> bool:
        row = self._rows.pop(entry_id, None)
        if row is None:
            return False
        del self._by_key[(row.layer, row.scope, row.key)]
        if row.layer == "l1":
            same_intent = self._l1_by_intent[(row.scope, row.intent_sig)]
            same_intent.discard(entry_id)
            if not same_intent:
                del self._l1_by_intent[(row.scope, row.intent_sig)]
        return True

    # -- observations ----------------------------------------------------------------

    async def add_observation(self, observation: Observation) -> None:
        """See `PlanStore.add_observation`."""
        self._log.add(observation)

    async def observations(
        self, scope: str, intent_sig: str, shape_hash: str | None = None
    ) -> list[Observation]:
        """See `PlanStore.observations`: insertion order."""
        return [self._log.items[n] for n in self._log.numbers(scope, intent_sig, shape_hash)]

    async def observations_for_turn(self, turn_id: str) -> list[Observation]:
        """See `PlanStore.observations_for_turn`: insertion order."""
        return [self._log.items[n] for n in self._log.by_turn.get(turn_id, ())]

    async def count_observations(
        self, scope: str, intent_sig: str, shape_hash: str | None = None
    ) -> int:
        """See `PlanStore.count_observations`."""
        return len(self._log.numbers(scope, intent_sig, shape_hash))

    async def signal_counts(
        self, scope: str, intent_sig: str, shape_hash: str
    ) -> list[SignalCount]:
        """See `PlanStore.signal_counts`: by (signal, weight)."""
        tally = self._log.tallies.get((scope, intent_sig, shape_hash), Counter())
        return [
            SignalCount(signal=signal, weight=weight, count=count)
            for (signal, weight), count in sorted(tally.items())
            if signal and count > 0
        ]

    async def recent_observations(self, limit: int = 30) -> list[Observation]:
        """See `PlanStore.recent_observations`: newest first (by `ts`, then insertion)."""
        newest = self._log.order[max(len(self._log.order) - max(limit, 0), 0) :]
        return [self._log.items[n] for _, n in reversed(newest)]

    async def set_signal(self, turn_id: str, signal: str, weight: float) -> None:
        """See `PlanStore.set_signal`: every observation of the turn."""
        for number in self._log.by_turn.get(turn_id, ()):
            self._log.replace(
                number,
                dataclasses.replace(self._log.items[number], signal=signal, signal_weight=weight),
            )

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


class _ObservationLog:
    """Observations by insertion number, with the indexes the port's queries need."""

    def __init__(self) -> None:
        self.items: dict[int, Observation] = {}
        self.order: list[tuple[float, int]] = []
        """(ts, number), ascending: the newest are at the end."""
        self.by_turn: dict[str, list[int]] = {}
        self.by_intent: dict[tuple[str, str], list[int]] = {}
        self.by_shape: dict[tuple[str, str, str], list[int]] = {}
        self.tallies: dict[tuple[str, str, str], Counter[tuple[str, float]]] = {}
        """(scope, intent, shape) -> (signal, weight) -> L1-evidence observations."""

    def add(self, observation: Observation) -> None:
        number = len(self.items) + 1
        self.items[number] = observation
        bisect.insort(self.order, (observation.ts, number))
        o = observation
        self.by_turn.setdefault(o.turn_id, []).append(number)
        self.by_intent.setdefault((o.scope, o.intent_sig), []).append(number)
        self.by_shape.setdefault((o.scope, o.intent_sig, o.shape_hash), []).append(number)
        self._count(o, 1)

    def replace(self, number: int, observation: Observation) -> None:
        """Replace an observation by one that differs in its signal only."""
        self._count(self.items[number], -1)
        self.items[number] = observation
        self._count(observation, 1)

    def numbers(self, scope: str, intent_sig: str, shape_hash: str | None) -> list[int]:
        if shape_hash is None:
            return self.by_intent.get((scope, intent_sig), [])
        return self.by_shape.get((scope, intent_sig, shape_hash), [])

    def _count(self, o: Observation, delta: int) -> None:
        if o.exact_only:
            return
        tally = self.tallies.setdefault((o.scope, o.intent_sig, o.shape_hash), Counter())
        tally[(o.signal, o.signal_weight)] += delta
        if tally[(o.signal, o.signal_weight)] <= 0:
            del tally[(o.signal, o.signal_weight)]
