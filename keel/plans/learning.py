"""What the plan cache learns from finished turns (plan-cache spec §3.6, §3.12): records,
served failures and feedback (`Learner`), for one scope.

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

from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from keel.plans.admission import check_plan
from keel.plans.cache_types import CacheConfig, Decision, Hit, TurnRecord
from keel.plans.compiler import Uncacheable
from keel.plans.entries import (
    Source,
    l0_row,
    l1_key,
    l1_row,
    observation_of,
    refreshed,
    source_of,
)
from keel.plans.evidence import SERVABLE, SIGNALS, Evidence
from keel.plans.feedback import Judgement, judge, shadow_seedable, signal_weight
from keel.plans.normalise import l0_key
from keel.plans.plan import Plan, shape_hash
from keel.plans.signatures import logic_signature, pool_sig, tools_sig
from keel.plans.store_port import Observation, PlanStore, TemplateRow
from keel.tools.frozen import freeze_json

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
        made = self._template(turn)
        if isinstance(made, Decision):
            return (made,)
        template, source = made
        first, source = await self._write_l0(turn.request, template, source, turn.now, turn.lang)
        return (first, await self._observe(turn.turn_id, template, source, None, turn.now))

    def _template(self, turn: TurnRecord) -> tuple[Plan, Source] | Decision:
        """The template of a planned turn and its source, or why it is not cached: the
        compiler refuses it (a value from the conversation it cannot re-resolve, among
        others), or it would fail the licence, verb-coverage or validator check on its own
        exact repeat."""
        request, intent, catalog, origin = turn.request, turn.intent, turn.catalog, turn.origin
        compiled = self.config.compile_options.compile(
            turn.executed, request=request, catalog=catalog, intent=intent, context=turn.context
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
