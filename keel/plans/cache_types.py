"""The values the plan cache speaks in (plan-cache spec §3.14): its configuration, the
decisions it reports (one telemetry event each), the result of a lookup, and a finished turn
to record (`TurnRecord`).

Reasons of a `Decision`:

* misses: `no_entry`, `signature`, `context_bound`, `anti_entry`, `status`,
  `binder_missing_slot`, `binder_ambiguous`, `binder_coverage`, `binder_ids`, `polarity`,
  `correction`, `extra_clause` (a content clause of the request the template does not
  cover), `literal_choice`, `licence`,
  `verb_coverage`, `validator`, `intent_incomplete`, `disabled`, `memory_unset` (a
  `${MEMORY:key}` of the entry has no value the skill may read in this conversation);
* hits: `hit`;
* records: `recorded`, `revalidated` (a stale L1 entry made fresh again), `shadow` (a shadow
  champion seeded, Metnos preset), `uncacheable:<reason>` (`context_value`: a value came
  from the conversation and cannot be re-resolved for another customer).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from keel.plans.admission import AdmissionPolicy
from keel.plans.catalog import Catalog
from keel.plans.entries import (
    CompileOptions,
)
from keel.plans.feedback import FeedbackRules
from keel.plans.intent import Intent
from keel.plans.maintenance import MaintenanceConfig
from keel.plans.plan import Plan
from keel.plans.provenance import NO_CONTEXT, RecordContext
from keel.plans.store_port import TemplateRow

# Values: the configuration, decisions and lookup results.

Reason = str
DecisionLayer = Literal["l0", "l1", "l3", "record", "feedback"]
"""Where a decision was taken (the `plan_cache_decided` event's vocabulary); the cache
itself reports `l0` and `l1` decisions, the loop adds `l3`, `record` and `feedback`."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CacheConfig:
    """Every knob of the cache, with the spec's defaults."""

    enabled: bool = True
    l0: bool = True
    l1: bool = True
    extract_before_l0: bool = False
    """Metnos runs its intent model before L0; here an L0 hit reuses the stored intent."""
    l0_observations: bool = True
    """Turns served by L0 write an L1 observation (feedback on them reaches L1)."""
    max_l1_candidates: int = 3
    logic_version: str = ""
    """What else decides plans besides Keel's code (the skill's text, the planner prompt,
    the model): part of every entry's logic signature (`signatures.logic_signature`)."""
    admission: AdmissionPolicy = field(default_factory=AdmissionPolicy)
    feedback: FeedbackRules = field(default_factory=FeedbackRules)
    maintenance: MaintenanceConfig = field(default_factory=MaintenanceConfig)
    compile_options: CompileOptions = field(default_factory=CompileOptions)

    @classmethod
    def metnos_defaults(cls) -> CacheConfig:
        """Metnos's published defaults where they map onto this design (spec §1.5-§1.14).

        Flipped: promotion on one approve for any template (`MIN_OBS` 1), shadow seeding
        after 4 steps / 2 observations, demotion only at 3 rejects over all history, no
        immediate demotion of the serving entry on a reject; no binder coverage, polarity
        or licence checks; L1 lookup ignores anti-entries (they only exclude shapes for
        the planner); the intent is extracted before L0; L0-served turns write no L1
        observation. Kept: L0 exact key, signatures, required-verb coverage, validator,
        aging numbers (14 d / 30 d / 500, 90 d / 30 d), anti TTLs (30 d / 1 h). There is
        no semantic (L0b) layer here, so Metnos's static cosine thresholds have no knob.
        """
        return cls(
            extract_before_l0=True,
            l0_observations=False,
            admission=AdmissionPolicy(
                coverage=False, polarity=False, licence=False, anti_entries=False
            ),
            feedback=FeedbackRules.metnos(),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    """One cache decision (one `plan_cache_decided` event)."""

    layer: DecisionLayer
    hit: bool
    reason: Reason
    entry_id: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Hit:
    """A cached template admitted for the request."""

    layer: Literal["l0", "l1"]
    entry: TemplateRow
    plan: Plan
    """The template; run it with `slots` and `served=True`."""
    slots: Mapping[str, object]
    intent: Intent
    decisions: tuple[Decision, ...]
    intent_extracted: bool = False
    """Whether intent extraction ran for this lookup (never on a plain L0 hit)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Miss:
    """Nothing served: plan with `intent`, avoiding the `exclusions` shapes."""

    intent: Intent
    decisions: tuple[Decision, ...]
    exclusions: tuple[str, ...] = ()
    intent_extracted: bool = True


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnRecord:
    """A finished turn to record (`PlanCache.record`, `Learner.record_all`)."""

    request: str
    executed: Plan
    """The plan the turn ran."""
    intent: Intent
    catalog: Catalog
    now: float
    turn_id: str
    origin: str
    """Where the plan came from (`planner`, `loop`, the layer that served it, ...)."""
    served: Hit | None = None
    """The cache hit that served the turn; None for a planned turn."""
    ok: bool = True
    """Whether every step succeeded (a failed turn is not cached)."""
    lang: str = "en"
    context: RecordContext = NO_CONTEXT
    """What the conversation held besides the request: memory, earlier turns, this turn's
    outputs (`keel.plans.provenance`); values from it are re-resolved or not cached."""
