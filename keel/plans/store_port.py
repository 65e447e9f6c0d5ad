"""What the plan cache stores, and the `PlanStore` port (plan-cache spec §3.15).

Rows are plain values; the cache (`keel.plans.cache`) decides, a
store only keeps and indexes: a turn's observations, the signal counts of an (intent, shape)
(the Beta evidence of `keel.plans.evidence`), the newest observations. Implementations:
`keel.plans.memory_store.MemoryPlanStore` (tests, benchmarks) and
`keel.plans.sql_store.SqlPlanStore` (SQLite by default, PostgreSQL), in the event store's
database. Times are seconds since the epoch, passed in by the caller (injected clock).
`scope` separates agents (and skills) sharing one database.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

Layer = Literal["l0", "l1"]
Status = Literal["active", "shadow", "demoted", "stale"]
FlushLayer = Literal["l0", "l1", "all"]


@dataclass(frozen=True, kw_only=True, slots=True)
class TemplateRow:
    """One cache entry: an L0 exact entry or an L1 champion candidate."""

    id: str
    layer: Layer
    scope: str
    key: str
    """L0: H(normaliser version, lang, normalised request); L1: intent sig | slot sig."""
    intent_sig: str
    slot_sig: str
    shape_hash: str
    plan_json: str
    """The compiled template (`Plan.dumps`)."""
    stored_intent_json: str
    """The intent of the recorded request (an L0 hit skips intent extraction)."""
    bindings_json: str
    """Slot name -> value bound from the recorded request."""
    request_text: str
    """The normalised recorded request (shown in the console; the polarity check reads it)."""
    tools_sig: str
    pool_sig: str
    logic_sig: str
    effectful: bool
    status: Status = "active"
    origin: str = "engine"
    """Where the plan came from: `planner` (L3), `loop` (the tool-calling loop), `l1`
    (an L1 hit recorded as an exact entry)."""
    embedding: bytes | None = None
    embedder_id: str | None = None
    threshold: float = 0.92
    alpha: float = 1.0
    """Beta posterior of success: 1 + weighted successes."""
    beta: float = 1.0
    """1 + weighted failures."""
    n_served: int = 0
    created_at: float = 0.0
    last_served_at: float = 0.0


@dataclass(frozen=True, kw_only=True, slots=True)
class Observation:
    """One recorded outcome of a plan for an intent (feeds L1 promotion)."""

    turn_id: str
    scope: str
    intent_sig: str
    shape_hash: str
    plan_json: str
    template_id: str | None = None
    raw_plan_json: str = ""
    outcome: Literal["ok", "fail"] = "ok"
    signal: str = ""
    """`approve`, `reject`, `repeat`, `implicit_ok`, `implicit_fail`, or empty (none yet)."""
    signal_weight: float = 0.0
    ts: float = 0.0
    slot_sig: str = ""
    """The template's source (what an L1 entry promoted from this observation holds): the
    slot signature, the recorded request, its intent and bindings, and the signatures at
    record time. An empty `stored_intent_json` means no source was recorded."""
    request_text: str = ""
    stored_intent_json: str = ""
    bindings_json: str = ""
    tools_sig: str = ""
    pool_sig: str = ""
    logic_sig: str = ""
    effectful: bool = True
    exact_only: bool = False
    """The template may serve only its exact request: the observation is no L1 evidence."""
    l0_id: str | None = None
    """The L0 entry written (or serving) for the turn's request (an explicit reject deletes it)."""
    served: str = ""
    """The layer that served the turn (`l0`, `l1`), or empty for a planned turn."""
    origin: str = ""
    """Where the plan came from (`TemplateRow.origin`)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SignalCount:
    """How many L1-evidence observations of an (intent, shape) carry one signal at one weight."""

    signal: str
    weight: float
    count: int


@dataclass(frozen=True, kw_only=True, slots=True)
class AntiEntry:
    """A shape that must not serve an intent until `expires_at`."""

    scope: str
    intent_sig: str
    shape_hash: str
    weight: float
    expires_at: float
    reason: str


@dataclass(frozen=True, kw_only=True, slots=True)
class JournalEntry:
    """One effectful step of a turn: written before the call (`intended`) and after."""

    turn_id: str
    step_id: int
    tool: str
    idem_key: str
    args_hash: str
    status: Literal["intended", "done", "failed"]
    result_json: str = ""
    ts: float = 0.0


class PlanStore(Protocol):
    """Persistence for the plan cache."""

    async def get(self, entry_id: str) -> TemplateRow | None: ...
    async def get_by_key(self, layer: Layer, scope: str, key: str) -> TemplateRow | None: ...
    async def by_intent(self, scope: str, intent_sig: str) -> list[TemplateRow]:
        """L1 rows of an intent signature (any status)."""
        ...

    async def put(self, row: TemplateRow) -> None:
        """Insert, or replace the row with the same (layer, scope, key) or id."""
        ...

    async def delete(self, entry_id: str) -> bool: ...
    async def flush(self, layer: FlushLayer) -> int:
        """Delete every entry of a layer (L1 also drops observations and anti-entries)."""
        ...

    async def entries(
        self, *, layer: Layer | None = None, status: Status | None = None, limit: int = 100
    ) -> list[TemplateRow]: ...
    async def counts(self) -> dict[str, int]:
        """`l0`, `l1_active`, `l1_shadow`, `l1_demoted`, `l1_stale`, `observations`, `anti`."""
        ...

    async def add_observation(self, observation: Observation) -> None: ...
    async def observations(
        self, scope: str, intent_sig: str, shape_hash: str | None = None
    ) -> list[Observation]: ...
    async def observations_for_turn(self, turn_id: str) -> list[Observation]:
        """Every observation of a turn (any scope), in insertion order."""
        ...

    async def count_observations(
        self, scope: str, intent_sig: str, shape_hash: str | None = None
    ) -> int:
        """How many observations `observations` would return."""
        ...

    async def signal_counts(
        self, scope: str, intent_sig: str, shape_hash: str
    ) -> list[SignalCount]:
        """The signals on an (intent, shape): observations that are L1 evidence (not
        `exact_only`) and carry a signal, counted by (signal, weight), in that order."""
        ...

    async def recent_observations(self, limit: int = 30) -> list[Observation]:
        """The newest observations first (by `ts`, then insertion)."""
        ...

    async def set_signal(self, turn_id: str, signal: str, weight: float) -> None:
        """Set the signal (and its weight) of every observation of a turn."""
        ...

    async def put_anti(self, entry: AntiEntry) -> None: ...
    async def anti_entries(self, scope: str, intent_sig: str, now: float) -> list[AntiEntry]: ...
    async def delete_anti(self, scope: str, intent_sig: str, shape_hash: str) -> None: ...
    async def all_anti(self) -> list[AntiEntry]: ...
    async def journal(self, turn_id: str) -> list[JournalEntry]: ...
    async def write_journal(self, entry: JournalEntry) -> None:
        """Insert or replace the (turn_id, step_id) entry."""
        ...

    async def delete_many(self, entry_ids: Sequence[str]) -> int: ...
