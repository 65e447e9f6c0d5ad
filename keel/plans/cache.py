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

Identity (seed 003: "resolved again in the current user's context"): nothing in a key names
the customer, so an entry may serve anyone, and it carries nothing of the customer it was
recorded for. Values it took from that customer's memory are `${MEMORY:key}` refs, read
again from `memory` (the entries the skill may read in the asking conversation) on every
hit; an entry whose refs are not all set there is refused (`memory_unset`). Any other value
from the conversation made the plan uncacheable when it was recorded (`record(context=)`,
`keel.plans.provenance`).

Record compiles the executed plan (`keel.plans.compiler`) into a template, writes the L0
entry for the exact request (every cacheable success; `exact_only` templates go nowhere
else) and an L1 observation; promotion to L1 happens on feedback (`keel.plans.feedback`).
Turns served by L0 write an observation too, so feedback on them reaches L1. Rows:
`keel.plans.entries`.

Its values are in `keel.plans.cache_types`, what it learns from finished turns in
`keel.plans.learning`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import replace

from keel.plans.admission import Admitted, Candidate, Rejected, admit
from keel.plans.cache_types import (
    CacheConfig,
    Decision,
    DecisionLayer,
    Hit,
    Miss,
    Reason,
    TurnRecord,
)
from keel.plans.catalog import Catalog
from keel.plans.entries import (
    candidate_of,
)
from keel.plans.evidence import ranked
from keel.plans.intent import Intent
from keel.plans.intents import IntentExtractor
from keel.plans.learning import Learner
from keel.plans.maintenance import MaintenanceReport, run_maintenance
from keel.plans.normalise import l0_key
from keel.plans.plan import Plan
from keel.plans.provenance import NO_CONTEXT, RecordContext
from keel.plans.refs import MemoryRef, refs_in
from keel.plans.signatures import logic_signature
from keel.plans.store_port import PlanStore, TemplateRow

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
        memory: Mapping[str, object] | None = None,
    ) -> Hit | Miss:
        """The entry that may serve `request`, or a miss with the intent to plan for.
        `memory` (qualified key -> value the skill may read) resolves `${MEMORY:key}`;
        None: no memory, so an entry with such refs is refused."""
        memory = memory if memory is not None else {}
        if not self.config.enabled or context_bound:
            reason = "disabled" if not self.config.enabled else "context_bound"
            intent = self.extract(request, catalog, lang=lang)
            return Miss(intent=intent, decisions=(Decision(layer="l0", hit=False, reason=reason),))
        decisions: list[Decision] = []
        early = self.extract(request, catalog, lang=lang) if self.config.extract_before_l0 else None
        hit = await self._l0(request, catalog, now, lang, early, decisions, memory)
        if hit is not None:
            return hit
        intent = early if early is not None else self.extract(request, catalog, lang=lang)
        anti = await self.store.anti_entries(self.scope, intent.signature, now)
        exclusions = tuple(sorted({a.shape_hash for a in anti}))
        if not self.config.l1 or not intent.complete:
            reason = "disabled" if not self.config.l1 else "intent_incomplete"
            decisions.append(Decision(layer="l1", hit=False, reason=reason))
        else:
            hit = await self._l1(
                request, catalog, now, intent, frozenset(exclusions), decisions, memory, lang
            )
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
        memory: Mapping[str, object],
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
        candidate, verdict = self._verdict(
            row, request, catalog, intent, blocked, memory, lang, exact=True
        )
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
        memory: Mapping[str, object],
        lang: str,
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
            candidate, verdict = self._verdict(
                row, request, catalog, intent, blocked, memory, lang, exact=False
            )
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
        memory: Mapping[str, object],
        lang: str,
        *,
        exact: bool,
    ) -> tuple[Candidate | None, Admitted | Rejected]:
        """Read the entry back and run the admission checks (`intent` None: the stored one;
        a clause is read in `lang`), then check that its `${MEMORY:key}` refs are set in
        `memory`."""
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
            read=lambda clause: self.extract(clause, catalog, lang=lang),
        )
        if isinstance(verdict, Admitted):
            unset = unset_memory(candidate.plan, memory)
            if unset:
                return candidate, Rejected(reason="memory_unset", detail=", ".join(unset))
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
        context: RecordContext = NO_CONTEXT,
    ) -> Decision:
        """Record a finished turn; the first of `record_all`'s decisions. `context` is what
        the conversation held besides the request (memory, earlier turns, this turn's
        outputs): a value from it is re-resolved (`${MEMORY:key}`) or not cached."""
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
            context=context,
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


def memory_refs(plan: Plan) -> list[str]:
    """The memory keys `plan`'s `${MEMORY:key}` refs name (arguments and final message)."""
    found = refs_in([step.plain_args() for step in plan.steps]) + refs_in(plan.final_message)
    return sorted({ref.key for ref in found if isinstance(ref, MemoryRef)})


def unset_memory(plan: Plan, memory: Mapping[str, object]) -> list[str]:
    """The memory keys of `plan` with no value in `memory` (unset, or not readable)."""
    return [key for key in memory_refs(plan) if memory.get(key) in (None, "")]
