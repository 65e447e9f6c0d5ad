"""The plan cache facade (plan-cache spec §3.2, §3.7, §3.12-§3.14): lookup, record, feedback.

    cache = PlanCache(store=store, scope="agent/skill")
    found = await cache.lookup(request, catalog=catalog, now=now)
    if isinstance(found, Hit): ...       # run found.plan with found.slots (served=True)
    else: ...                            # plan with found.intent, excluding found.exclusions
    await cache.record(request, executed=plan, intent=intent, catalog=catalog, now=now,
                       turn_id=turn_id, origin="planner", served=found if hit else None)
    await cache.feedback(turn_id, "approve", now=now)

Lookup goes L0 (the exact key of the normalised request, language and scope; the entry
stores the request's intent, so a hit costs no intent extraction) -> intent extraction ->
L1 (the champions recorded for the intent signature, best lower bound first, each passing
`keel.plans.admission`; anti-entries are consulted here, not only by the planner) -> a
`Miss` carrying the intent and the shapes the planner must avoid. Every step of the way is a
`Decision(layer, hit, reason, entry_id)`, one telemetry event each.

Record compiles the executed plan (`keel.plans.compiler`) into a template, writes the L0
entry for the exact request (every cacheable success; `exact_only` templates go nowhere
else) and an L1 observation; promotion to L1 happens on feedback (`keel.plans.feedback`).
Turns served by L0 write an observation too, so feedback on them reaches L1. Rows:
`keel.plans.entries`.

The values the cache speaks in (plan-cache spec §3.14): its configuration, the decisions
it reports (one telemetry event each), and the result of a lookup.

Reasons of a `Decision`:

* misses: `no_entry`, `signature`, `context_bound`, `anti_entry`, `status`,
  `binder_missing_slot`, `binder_ambiguous`, `binder_coverage`, `polarity`, `licence`,
  `verb_coverage`, `validator`, `intent_incomplete`, `disabled`;
* hits: `hit`;
* records: `recorded`, `revalidated` (a stale L1 entry made fresh again), `shadow` (a shadow
  champion seeded, Metnos preset), `uncacheable:<reason>`.

A finished turn to record is a `TurnRecord`.

What the cache learns from finished turns (plan-cache spec §3.6, §3.12): records, served
failures and feedback (`Learner`).

* A planned turn's plan is compiled (`keel.plans.compiler`) into a template; a cacheable one
  (it also passes the licence, verb-coverage and validator checks it would meet on a hit)
  becomes the L0 entry of the exact request (last success wins) and an L1 observation. An
  `exact_only` template is marked in its `meta` and never reaches L1.
* An L1-served turn writes the L0 entry of its exact request and an observation; an
  L0-served turn writes an observation only (so feedback on it reaches L1; Metnos wrote
  none).
* A fresh success on a stale L1 entry (or one whose signatures moved) re-validates it.
* Feedback marks the turn's observations (`PlanStore.observations_for_turn`), deletes the
  L0 entry of the turn's request on an explicit reject, and applies
  `keel.plans.feedback.judge` to the (intent, shape), whose evidence comes from the store's
  signal counts (no observation is read back for it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final, Literal

from keel.plans.admission import AdmissionPolicy, Admitted, Candidate, Rejected, admit, check_plan
from keel.plans.catalog import Catalog
from keel.plans.compiler import Uncacheable
from keel.plans.entries import (
    CompileOptions,
    Source,
    candidate_of,
    l0_row,
    l1_key,
    l1_row,
    observation_of,
    refreshed,
    source_of,
)
from keel.plans.evidence import SERVABLE, SIGNALS, Evidence, ranked
from keel.plans.feedback import FeedbackRules, Judgement, judge, shadow_seedable, signal_weight
from keel.plans.intent import Intent
from keel.plans.intents import IntentExtractor
from keel.plans.maintenance import MaintenanceConfig, MaintenanceReport, run_maintenance
from keel.plans.normalise import l0_key
from keel.plans.plan import Plan, shape_hash
from keel.plans.signatures import logic_signature, pool_sig, tools_sig
from keel.plans.store_port import Observation, PlanStore, TemplateRow
from keel.tools.frozen import freeze_json

__all__ = [
    "CacheConfig",
    "Decision",
    "DecisionLayer",
    "Hit",
    "Miss",
    "PlanCache",
    "Reason",
    "TurnRecord",
]

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


class PlanCache:
    """L0 and L1 over a `PlanStore`, for one scope (agent, skill)."""

    def __init__(
        self,
        *,
        store: PlanStore,
        scope: str,
        config: CacheConfig | None = None,
        extractor_synonyms: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.store = store
        self.scope = scope
        self.config = config or CacheConfig()
        self._synonyms = extractor_synonyms
        self._extractors: dict[str, IntentExtractor] = {}
        self._learner = Learner(store=store, scope=scope, config=self.config)

    def extract(self, request: str, catalog: Catalog, *, lang: str = "en") -> Intent:
        """The intent of `request` in `lang` (model-free, one extractor per catalog version)."""
        epoch = hashlib.sha256(
            "\n".join(f"{n}:{t.digest}" for n, t in sorted(catalog.items())).encode()
        ).hexdigest()
        extractor = self._extractors.get(epoch)
        if extractor is None:
            if len(self._extractors) >= 8:
                self._extractors.pop(next(iter(self._extractors)))
            extractor = IntentExtractor.for_catalog(catalog, self._synonyms)
            self._extractors[epoch] = extractor
        return extractor.extract(request, lang=lang)

    # -- lookup ----------------------------------------------------------------------

    async def lookup(
        self,
        request: str,
        *,
        catalog: Catalog,
        now: float,
        lang: str = "en",
        context_bound: bool = False,
    ) -> Hit | Miss:
        """The entry that may serve `request`, or a miss with the intent to plan for."""
        if not self.config.enabled or context_bound:
            reason = "disabled" if not self.config.enabled else "context_bound"
            intent = self.extract(request, catalog, lang=lang)
            return Miss(intent=intent, decisions=(Decision(layer="l0", hit=False, reason=reason),))
        decisions: list[Decision] = []
        early = self.extract(request, catalog, lang=lang) if self.config.extract_before_l0 else None
        hit = await self._l0(request, catalog, now, lang, early, decisions)
        if hit is not None:
            return hit
        intent = early if early is not None else self.extract(request, catalog, lang=lang)
        anti = await self.store.anti_entries(self.scope, intent.signature, now)
        exclusions = tuple(sorted({a.shape_hash for a in anti}))
        if not self.config.l1 or not intent.complete:
            reason = "disabled" if not self.config.l1 else "intent_incomplete"
            decisions.append(Decision(layer="l1", hit=False, reason=reason))
        else:
            hit = await self._l1(request, catalog, now, intent, frozenset(exclusions), decisions)
            if hit is not None:
                return hit
        return Miss(intent=intent, decisions=tuple(decisions), exclusions=exclusions)

    async def _l0(
        self,
        request: str,
        catalog: Catalog,
        now: float,
        lang: str,
        intent: Intent | None,
        decisions: list[Decision],
    ) -> Hit | None:
        if not self.config.l0:
            decisions.append(Decision(layer="l0", hit=False, reason="disabled"))
            return None
        row = await self.store.get_by_key(
            "l0", self.scope, l0_key(request, lang=lang, scope=self.scope)
        )
        if row is None:
            decisions.append(Decision(layer="l0", hit=False, reason="no_entry"))
            return None
        blocked = await self._blocked(row.intent_sig, now)
        candidate, verdict = self._verdict(row, request, catalog, intent, blocked, exact=True)
        if isinstance(verdict, Rejected):
            decisions.append(
                Decision(layer="l0", hit=False, reason=verdict.reason, entry_id=row.id)
            )
            if verdict.reason == "signature":
                await self.store.delete(row.id)
            return None
        assert candidate is not None
        return await self._serve(
            row,
            candidate.plan,
            verdict,
            candidate.stored_intent,
            now,
            decisions,
            extracted=intent is not None,
        )

    async def _l1(
        self,
        request: str,
        catalog: Catalog,
        now: float,
        intent: Intent,
        blocked: frozenset[str],
        decisions: list[Decision],
    ) -> Hit | None:
        rows = await self.store.by_intent(self.scope, intent.signature)
        order = ranked(rows, self.config.feedback.confidence_z)
        if not order:
            reason, entry = ("status", rows[-1].id) if rows else ("no_entry", None)
            decisions.append(Decision(layer="l1", hit=False, reason=reason, entry_id=entry))
            return None
        if not self.config.admission.anti_entries:
            blocked = frozenset()
        for row in order[: self.config.max_l1_candidates]:
            candidate, verdict = self._verdict(row, request, catalog, intent, blocked, exact=False)
            if isinstance(verdict, Rejected):
                decisions.append(
                    Decision(layer="l1", hit=False, reason=verdict.reason, entry_id=row.id)
                )
                if verdict.reason == "signature":
                    await self.store.put(replace(row, status="stale"))
                continue
            assert candidate is not None
            return await self._serve(
                row, candidate.plan, verdict, intent, now, decisions, extracted=True
            )
        return None

    def _verdict(
        self,
        row: TemplateRow,
        request: str,
        catalog: Catalog,
        intent: Intent | None,
        blocked: frozenset[str],
        *,
        exact: bool,
    ) -> tuple[Candidate | None, Admitted | Rejected]:
        """Read the entry back and run the admission checks (`intent` None: the stored one)."""
        candidate = candidate_of(row)
        if candidate is None:
            return None, Rejected(reason="signature", detail="unreadable")
        verdict = admit(
            candidate,
            request=request,
            intent=intent if intent is not None else candidate.stored_intent,
            catalog=catalog,
            blocked=blocked,
            exact=exact,
            policy=self.config.admission,
            gazetteers=self.config.compile_options.gazetteers,
            logic=logic_signature(self.config.logic_version),
        )
        return candidate, verdict

    async def _blocked(self, intent_sig: str, now: float) -> frozenset[str]:
        if not self.config.admission.anti_entries or not intent_sig:
            return frozenset()
        return frozenset(
            a.shape_hash for a in await self.store.anti_entries(self.scope, intent_sig, now)
        )

    async def _serve(
        self,
        row: TemplateRow,
        plan: Plan,
        verdict: Admitted,
        intent: Intent,
        now: float,
        decisions: list[Decision],
        *,
        extracted: bool,
    ) -> Hit:
        served = replace(row, n_served=row.n_served + 1, last_served_at=now)
        await self.store.put(served)
        decisions.append(Decision(layer=row.layer, hit=True, reason="hit", entry_id=row.id))
        return Hit(
            layer=row.layer,
            entry=served,
            plan=plan,
            slots=verdict.slots,
            intent=intent,
            decisions=tuple(decisions),
            intent_extracted=extracted,
        )

    # -- learning --------------------------------------------------------------------

    async def record(
        self,
        request: str,
        *,
        executed: Plan,
        intent: Intent,
        catalog: Catalog,
        now: float,
        turn_id: str,
        origin: str,
        served: Hit | None = None,
        ok: bool = True,
        lang: str = "en",
    ) -> Decision:
        """Record a finished turn; the first of `record_all`'s decisions."""
        turn = TurnRecord(
            request=request,
            executed=executed,
            intent=intent,
            catalog=catalog,
            now=now,
            turn_id=turn_id,
            origin=origin,
            served=served,
            ok=ok,
            lang=lang,
        )
        return (await self.record_all(turn))[0]

    async def record_all(self, turn: TurnRecord) -> tuple[Decision, ...]:
        """Record a finished turn (`Learner.record_all`): one decision
        per layer touched."""
        return await self._learner.record_all(turn)

    async def served_failed(self, hit: Hit, *, now: float, committed: bool) -> None:
        """A served plan failed: its L0 entry is deleted, an L1 entry kept."""
        await self._learner.served_failed(hit, now=now, committed=committed)

    async def feedback(self, turn_id: str, signal: str, *, now: float) -> str:
        """Apply `approve`, `reject`, `repeat`, `implicit_ok` or `implicit_fail` to a turn;
        says what changed (`Learner.feedback`)."""
        return await self._learner.feedback(turn_id, signal, now=now)

    async def maintain(self, catalog: Catalog, *, now: float) -> MaintenanceReport:
        """Nightly maintenance (`keel.plans.maintenance`) of this cache's scope."""
        return await run_maintenance(
            self.store,
            catalog,
            now=now,
            config=self.config.maintenance,
            options=self.config.compile_options,
            scope=self.scope,
            logic=logic_signature(self.config.logic_version),
        )


# Learning: records, served failures and feedback.

EXACT_ONLY: Final = "exact_only"
"""The `meta` flag of a template that may serve only its exact request."""


class Learner:
    """Records and feedback for one scope."""

    def __init__(self, *, store: PlanStore, scope: str, config: CacheConfig) -> None:
        self.store = store
        self.scope = scope
        self.config = config

    async def record_all(self, turn: TurnRecord) -> tuple[Decision, ...]:
        """Record a finished turn: the L0 entry of the request (a planned or L1-served turn)
        and an L1 observation; one decision per layer touched."""
        if not self.config.enabled:
            return (Decision(layer="l0", hit=False, reason="disabled"),)
        if not turn.ok:
            return (Decision(layer="l0", hit=False, reason="uncacheable:failed_step"),)
        if turn.served is not None:
            return await self._record_served(
                turn.request, turn.served, turn.turn_id, turn.now, turn.lang
            )
        made = self._template(turn.request, turn.executed, turn.intent, turn.catalog, turn.origin)
        if isinstance(made, Decision):
            return (made,)
        template, source = made
        first, source = await self._write_l0(turn.request, template, source, turn.now, turn.lang)
        return (first, await self._observe(turn.turn_id, template, source, None, turn.now))

    def _template(
        self, request: str, executed: Plan, intent: Intent, catalog: Catalog, origin: str
    ) -> tuple[Plan, Source] | Decision:
        """The template of a planned turn and its source, or why it is not cached: the
        compiler refuses it, or it would fail the licence, verb-coverage or validator
        check on its own exact repeat."""
        compiled = self.config.compile_options.compile(
            executed, request=request, catalog=catalog, intent=intent
        )
        if isinstance(compiled, Uncacheable):
            return Decision(layer="l0", hit=False, reason=f"uncacheable:{compiled.reason}")
        template = compiled.template
        problem = check_plan(
            template, intent, catalog, compiled.bindings, policy=self.config.admission
        )
        tools = tools_sig(template, catalog)
        if problem is not None or not tools:
            reason = problem.reason if problem is not None else "unknown_tool"
            return Decision(layer="l0", hit=False, reason=f"uncacheable:{reason}")
        if compiled.exact_only:
            meta = freeze_json({**template.meta, EXACT_ONLY: True})
            template = replace(template, meta=meta)  # type: ignore[arg-type]
        source = Source(
            request=request.strip(),
            intent=intent,
            slot_sig=compiled.slot_sig,
            bindings=compiled.bindings,
            tools_sig=tools,
            pool_sig=pool_sig(intent, catalog),
            logic_sig=logic_signature(self.config.logic_version),
            effectful=compiled.effectful,
            exact_only=compiled.exact_only,
            origin=origin,
        )
        return template, source

    async def _write_l0(
        self, request: str, template: Plan, source: Source, now: float, lang: str
    ) -> tuple[Decision, Source]:
        if not self.config.l0:
            return Decision(layer="l0", hit=False, reason="disabled"), source
        key = l0_key(request, lang=lang, scope=self.scope)
        row = l0_row(key=key, scope=self.scope, plan=template, source=source, now=now)
        await self.store.put(row)
        decision = Decision(layer="l0", hit=True, reason="recorded", entry_id=row.id)
        return decision, replace(source, l0_id=row.id)

    async def _record_served(
        self, request: str, hit: Hit, turn_id: str, now: float, lang: str
    ) -> tuple[Decision, ...]:
        row = hit.entry
        source = Source(
            request=request.strip(),
            intent=hit.intent,
            slot_sig=row.slot_sig,
            bindings=hit.slots,
            tools_sig=row.tools_sig,
            pool_sig=row.pool_sig,
            logic_sig=row.logic_sig,
            effectful=row.effectful,
            exact_only=hit.plan.meta.get(EXACT_ONLY) is True,
            l0_id=row.id if hit.layer == "l0" else None,
            served=hit.layer,
            origin=row.origin if hit.layer == "l0" else "l1",
        )
        if hit.layer == "l1":
            first, source = await self._write_l0(request, hit.plan, source, now, lang)
            return (first, await self._observe(turn_id, hit.plan, source, row.id, now))
        if not self.config.l0_observations:
            return (Decision(layer="l1", hit=False, reason="disabled"),)
        return (await self._observe(turn_id, hit.plan, source, row.id, now),)

    async def _observe(
        self, turn_id: str, template: Plan, source: Source, template_id: str | None, now: float
    ) -> Decision:
        if not self.config.l1:
            return Decision(layer="l1", hit=False, reason="disabled")
        shape = shape_hash(template)
        key = l1_key(source.intent.signature, source.slot_sig, shape)
        rows = await self.store.by_intent(self.scope, source.intent.signature)
        existing = next((r for r in rows if r.key == key), None) if source.intent.complete else None
        observation = observation_of(
            turn_id=turn_id,
            scope=self.scope,
            plan=template,
            source=source,
            template_id=template_id or (existing.id if existing else None),
            now=now,
        )
        await self.store.add_observation(observation)
        if source.exact_only:
            return Decision(layer="l1", hit=False, reason="uncacheable:exact_only")
        if not source.intent.complete:
            return Decision(layer="l1", hit=False, reason="intent_incomplete")
        if existing is not None:
            return await self._refresh(existing, template, source)
        seeded = await self._seed_shadow(rows, template, shape, source, now)
        return seeded or Decision(layer="l1", hit=True, reason="recorded")

    async def _refresh(self, row: TemplateRow, template: Plan, source: Source) -> Decision:
        """A fresh success re-validates a stale entry (or one whose signatures moved)."""
        sigs = (source.tools_sig, source.pool_sig, source.logic_sig)
        if row.status != "stale" and sigs == (row.tools_sig, row.pool_sig, row.logic_sig):
            return Decision(layer="l1", hit=True, reason="recorded", entry_id=row.id)
        status = "active" if row.status == "stale" else row.status
        fresh = refreshed(row, plan=template, source=source, status=status)
        await self.store.put(fresh)
        return Decision(layer="l1", hit=True, reason="revalidated", entry_id=row.id)

    async def _seed_shadow(
        self,
        rows: Sequence[TemplateRow],
        template: Plan,
        shape: str,
        source: Source,
        now: float,
    ) -> Decision | None:
        rules = self.config.feedback
        if not rules.shadow_seeding:
            return None
        seen = await self.store.count_observations(self.scope, source.intent.signature)
        if not shadow_seedable(
            steps=len(template.tool_steps),
            intent_observations=seen,
            has_champion=any(r.status in SERVABLE for r in rows),
            effectful=source.effectful,
            rules=rules,
        ):
            return None
        row = l1_row(
            scope=self.scope, plan_json=template.dumps(), shape=shape, source=source, now=now
        )
        await self.store.put(replace(row, status="shadow"))
        return Decision(layer="l1", hit=True, reason="shadow", entry_id=row.id)

    async def served_failed(self, hit: Hit, *, now: float, committed: bool) -> None:
        """A served plan failed: its L0 entry is deleted; an L1 entry is kept (feedback
        demotes). Whether to fall through (`committed` effects forbid it) is the loop's
        call."""
        del now, committed
        if hit.layer == "l0":
            await self.store.delete(hit.entry.id)

    async def feedback(self, turn_id: str, signal: str, *, now: float) -> str:
        """Apply a signal to the turn's observations; says what changed (comma-separated:
        `l0_deleted`, `promoted`, `demoted`, `reactivated`, `confirmed`, `updated`,
        `anti_repeat`, `none`; or `no_observation`, `unknown_signal`)."""
        if signal not in SIGNALS:
            return "unknown_signal"
        found = await self.store.observations_for_turn(turn_id)
        mine = _newest_first([o for o in found if o.scope == self.scope])
        if not mine:
            return "no_observation"
        rules = self.config.feedback
        await self.store.set_signal(turn_id, signal, signal_weight(signal, rules))
        changes: list[str] = []
        for observation in mine:
            changes += await self._apply(observation, signal, now)
        return ",".join(changes) or "none"

    async def _apply(self, observation: Observation, signal: str, now: float) -> list[str]:
        source = source_of(observation)
        if source is None:
            return []
        changes: list[str] = []
        if signal == "reject" and source.l0_id and await self.store.delete(source.l0_id):
            changes.append("l0_deleted")
        if source.exact_only or not source.intent.complete or not self.config.l1:
            return changes
        intent_sig, shape = observation.intent_sig, observation.shape_hash
        evidence, existing = await self._state(intent_sig, shape, source.slot_sig)
        verdict = judge(
            signal,
            evidence=evidence,
            existing=existing,
            candidate=l1_row(
                scope=self.scope,
                plan_json=observation.plan_json,
                shape=shape,
                source=source,
                now=now,
            ),
            serving=existing is not None
            and source.served == "l1"
            and observation.template_id == existing.id,
            scope=self.scope,
            intent_sig=intent_sig,
            shape_hash=shape,
            now=now,
            rules=self.config.feedback,
        )
        await self._commit(verdict, intent_sig, shape)
        return [*changes, verdict.change]

    async def _state(
        self, intent_sig: str, shape: str, slot_sig: str
    ) -> tuple[Evidence, TemplateRow | None]:
        """The evidence on an (intent, shape) and its L1 entry, if any."""
        counts = await self.store.signal_counts(self.scope, intent_sig, shape)
        evidence = Evidence.of_counts(counts)
        rows = await self.store.by_intent(self.scope, intent_sig)
        key = l1_key(intent_sig, slot_sig, shape)
        return evidence, next((r for r in rows if r.key == key), None)

    async def _commit(self, verdict: Judgement, intent_sig: str, shape: str) -> None:
        if verdict.row is not None:
            await self.store.put(verdict.row)
        if verdict.anti is not None:
            await self.store.put_anti(verdict.anti)
        if verdict.lift_anti:
            await self.store.delete_anti(self.scope, intent_sig, shape)


def _newest_first(observations: Sequence[Observation]) -> list[Observation]:
    """By `ts` descending, later insertions first among equal times."""
    order = sorted(enumerate(observations), key=lambda p: (-p[1].ts, -p[0]))
    return [o for _, o in order]
