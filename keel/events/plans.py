"""Events recording the plan cache's work: each cache decision, and each plan run.

Added in schema version 5. Like routing decisions they record, not change: the tool runs
of a plan are their own `tool_executed` events (with `metadata.plan` = the plan's source
layer and `metadata.plan_step` = its step id), so the fold ignores both kinds. They are in
the log so every turn says where its actions came from (a cached entry, the planner, the
tool-calling loop) and why a cached plan was or was not used.
"""

from dataclasses import dataclass, field
from typing import Literal

from keel.events.base import EMPTY, EventBase, JsonMapping

PlanLayer = Literal["l0", "l1", "l3", "record", "feedback"]
PlanRunStatus = Literal["ok", "failed", "paused", "refused"]


@dataclass(frozen=True, kw_only=True, slots=True)
class PlanCacheDecided(EventBase):
    """One decision of the plan cascade for the turn's request.

    `layer` is where it was taken: `l0` (exact entry), `l1` (intent champion), `l3` (the
    planner proposed, validated, repaired), `record` (what was stored after the turn) or
    `feedback` (a signal changed entries). `reason` is a code: `hit`, `no_entry`,
    `signature`, `binder_coverage`, `polarity`, `licence`, `validator`, `recorded`,
    `uncacheable:<why>`, ... (docs/plans.md lists them all).
    """

    kind = "plan_cache_decided"

    layer: PlanLayer
    hit: bool
    reason: str
    entry_id: str | None = None
    intent: str = ""
    """The intent signature the decision was taken for (`verb:object>...`), when known."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PlanExecuted(EventBase):
    """A plan ran (from the cache or the planner): what it was, and how it ended."""

    kind = "plan_executed"

    source: Literal["l0", "l1", "l3"]
    status: PlanRunStatus
    shape_hash: str
    entry_id: str | None = None
    plan: JsonMapping = field(default_factory=lambda: EMPTY)
    """The plan as stored (`plan/1` JSON; cached plans hold `${SLOT:...}` refs)."""
    slots: JsonMapping = field(default_factory=lambda: EMPTY)
    """Slot values bound from this request (PII-free by construction: the user's words)."""
    steps_run: int = 0
    failed_step: int | None = None
    committed: tuple[int, ...] = ()
    """Effectful steps that completed (never run again for this turn)."""
    error_code: str | None = None
