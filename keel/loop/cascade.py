"""The plan cascade inside the turn loop (plan-cache spec §3.2), before the model is asked.

The engine holds one `Cascade` (one `PlanCache` per skill, on one `PlanStore`) when the
agent enables `plan_cache`; each turn gets a `CascadeTurn` from it, the loop's `TurnPlans`
port (`keel.loop.turn`). The first time a turn would ask the model to act for a skill (its
prose, not an ordered block's step), `before_model` sends the request to the skill's cache:

1. an L0 or L1 hit runs the cached plan through `TurnInvoker` (the same validation, gates
   and confirmations as a model's calls) and answers with the plan's final message:
   **no model call**; a plan with no final message gets one model call to word the answer;
2. a miss on a skill with `planner: true` asks the model for one whole plan
   (`keel.loop.cascade_planner`);
3. any other miss goes on to the ordinary tool-calling loop, whose tool sequence is
   compiled into a plan when the turn ends well (`after_turn`, `keel.plans.from_turn`).

A served plan that fails before any effect committed falls through to the model (the
transcript holds what ran); one that fails after an effect committed says so honestly and
stops: nothing runs twice. A plan paused at a confirmation goes on after the approval
(`after_approval`). Every decision is a `plan_cache_decided` event; every run a
`plan_executed` event.

Also what every turn gives the cache: the filler answers (asked once per entry, filler and
request, then kept) and the implicit feedback the next turn gives a cached answer (spec
§3.12): the same intent asked again within a minute reads as a rejection, anything else as
a weak approval.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace

from keel.events.model import BotMessage, Event, PlanCacheDecided, ToolExecuted
from keel.loop import stack
from keel.loop.cascade_context import readable_memory, record_context, run_outputs
from keel.loop.cascade_planner import FORMAT, ask_text, plan_with_model
from keel.loop.cascade_run import (
    PendingRecord,
    PlanTurn,
    emit_decisions,
    emit_record,
    epoch,
    finish_plan,
    partial,
    run_plan,
    step_result,
    turn_catalog,
)
from keel.loop.errors import PlanFeedbackRefused
from keel.loop.recorder import Recorder
from keel.loop.turn import Next, TurnContext
from keel.plans.cache import CacheConfig, Hit, PlanCache
from keel.plans.catalog import Catalog
from keel.plans.from_turn import last_served, loop_plan, turn_skill
from keel.plans.intent import Intent
from keel.plans.memory_store import MemoryPlanStore
from keel.plans.normalise import normalise
from keel.plans.plan import Plan, parse_plan
from keel.plans.skill_catalog import catalog_for_skill
from keel.plans.store_port import PlanStore
from keel.project.definition import AgentDefinition, Skill
from keel.tools.dispatch import ToolRun

FILLER_MEMORY = 10_000
"""Filler answers kept (oldest dropped first)."""
REPHRASE_SECONDS = 60.0
"""The same intent asked again this soon after a cached answer is an implicit rejection."""


def skill_logic_version(definition: AgentDefinition | None, skill_id: str) -> str:
    """16 hex over what, besides Keel's code, decides a skill's plans: its skill.md (prose,
    blocks, constraints) and the planner prompt. Editing the skill retires its entries."""
    skill = definition.skill(skill_id) if definition is not None else None
    if definition is None or skill is None:
        return ""
    try:
        text = (definition.root / skill.document.file).read_text(encoding="utf-8")
    except OSError:
        text = repr(skill.document.paragraphs)
    return hashlib.sha256(f"{text}\n{FORMAT}".encode()).hexdigest()[:16]


class Cascade:
    """The engine's plan cascade: one cache per agent skill, on one `PlanStore`."""

    def __init__(
        self,
        *,
        store: PlanStore,
        agent: str,
        config: CacheConfig | None = None,
        definition: AgentDefinition | None = None,
    ) -> None:
        """With `definition`, each skill's cache folds a digest of the skill's file and the
        planner prompt into its logic signature (`skill_logic_version`)."""
        self.store = store
        self.agent = agent
        self.config = config or CacheConfig()
        self.definition = definition
        self._caches: dict[str, PlanCache] = {}
        self._fillers: dict[tuple[str, str, str], str] = {}
        self._catalogs: dict[tuple[int, tuple[str, ...]], tuple[Skill, Catalog]] = {}

    def for_turn(self) -> CascadeTurn:
        """The cascade as one turn sees it (its state lives only for that turn)."""
        return CascadeTurn(scope=self, cascade=self)

    def for_skill(self, skill_id: str) -> PlanCache:
        """The cache of `skill_id` (made on first use)."""
        cache = self._caches.get(skill_id)
        if cache is None:
            version = skill_logic_version(self.definition, skill_id)
            config = replace(self.config, logic_version=version)
            cache = PlanCache(store=self.store, scope=f"{self.agent}/{skill_id}", config=config)
            self._caches[skill_id] = cache
        return cache

    def catalog(self, skill: Skill, names: tuple[str, ...]) -> Catalog:
        """`catalog_for_skill`, kept per skill object and admitted names (digests read the
        tools' source once; a reloaded project brings new skill objects)."""
        key = (id(skill), names)
        found = self._catalogs.get(key)
        if found is None or found[0] is not skill:
            if len(self._catalogs) >= 256:
                self._catalogs.clear()
            found = (skill, catalog_for_skill(skill, names=names))
            self._catalogs[key] = found
        return found[1]

    @staticmethod
    def lang(definition: AgentDefinition) -> str:
        """The language part of the L0 key."""
        return definition.config.language or "en"

    async def fillers(self, t: TurnContext, plan: Plan) -> dict[str, str]:
        """Each filler's text: kept per (filler prompt, normalised request), so a repeat costs
        no model call (spec §3.11); else asked once, on the filler's tier."""
        if not plan.fillers:
            return {}
        request = normalise(t.user_text)
        answers: dict[str, str] = {}
        for name, filler in plan.fillers.items():
            key = (filler.prompt, filler.tier, request)
            if key not in self._fillers:
                if len(self._fillers) >= FILLER_MEMORY:
                    self._fillers.pop(next(iter(self._fillers)))
                text = await ask_text(
                    t, filler.prompt, t.user_text, tier=filler.tier, purpose="filler"
                )
                lines = (text or filler.default).strip().splitlines()
                self._fillers[key] = lines[0] if lines else ""
            answers[name] = self._fillers[key]
        return answers

    async def implicit_signal(self, t: TurnContext, intent: Intent) -> None:
        """Feedback the previous turn's cached answer gets from this request (spec §3.12)."""
        served = last_served(t.history)
        if served is None:
            return
        turn_id, skill_id, at, previous = served
        again = bool(intent.signature) and intent.signature == previous
        signal = "implicit_fail" if again and epoch(t) - at <= REPHRASE_SECONDS else "implicit_ok"
        await self.for_skill(skill_id).feedback(turn_id, signal, now=epoch(t))

    async def feedback(
        self,
        recorder: Recorder,
        history: tuple[Event, ...],
        turn_id: str,
        signal: str,
        now: float,
    ) -> str:
        """Explicit feedback on a turn's plan (see `Engine.feedback`); returns what changed."""
        conversation_id = recorder.conversation_id
        if signal not in ("approve", "reject", "repeat"):
            raise PlanFeedbackRefused(conversation_id, turn_id, f"unknown signal {signal!r}")
        skill_id = turn_skill(history, turn_id)
        if skill_id is None:
            raise PlanFeedbackRefused(conversation_id, turn_id, "no plan ran in that turn")
        changed = await self.for_skill(skill_id).feedback(turn_id, signal, now=now)
        await recorder.emit(
            PlanCacheDecided(layer="feedback", hit=False, reason=f"{signal}:{changed}")
        )
        return changed

    async def maintain(self, definition: AgentDefinition, now: float) -> dict[str, int]:
        """Run maintenance (spec §3.13) on every skill's cache against its current tools;
        returns the counts of what changed, summed over skills."""
        totals: dict[str, int] = {}
        for skill_id, skill in sorted(definition.skills.items()):
            report = await self.for_skill(skill_id).maintain(catalog_for_skill(skill), now=now)
            for name, count in asdict(report).items():
                totals[name] = totals.get(name, 0) + int(count)
        return totals


@dataclass(kw_only=True, eq=False)
class CascadeTurn(PlanTurn):
    """The cascade within one turn: the loop's `TurnPlans` port (`keel.loop.turn`)."""

    cascade: Cascade

    async def before_model(self, t: TurnContext) -> Next | None:
        """Consult the cascade (at most once a turn); None lets the loop ask the model."""
        skill = self._cache_skill(t)
        if skill is None:
            return None
        self.tried = True
        cache = self.cascade.for_skill(skill.skill_id)
        catalog = turn_catalog(t, self.cascade, skill)
        with t.timed("plans.lookup"):
            found = await cache.lookup(
                t.user_text,
                catalog=catalog,
                now=epoch(t),
                lang=self.cascade.lang(t.definition),
                memory=readable_memory(t, skill),  # `${MEMORY:key}` is this customer's
            )
        await emit_decisions(t, found.decisions, found.intent)
        await self.cascade.implicit_signal(t, found.intent)
        self.pending = PendingRecord(skill_id=skill.skill_id, intent=found.intent)
        if isinstance(found, Hit):
            return await self._serve(t, skill, cache, catalog, found)
        if skill.document.planner:
            return await plan_with_model(t, self, skill, cache, catalog, found)
        return None

    async def after_approval(
        self, t: TurnContext, skill_id: str, resume: Mapping[str, object], run: ToolRun
    ) -> Next | None:
        """The approved call of a plan's paused step ran: run the rest of the plan on the
        same journal (completed effects are taken from it, never repeated); None when there
        is nothing to go on with. A planner's plan that completes is recorded then, like
        one that never paused (a cached plan's entry already exists)."""
        skill = t.definition.skill(skill_id)
        plan, errors = parse_plan(resume.get("plan"))
        step, source = resume.get("step"), resume.get("source")
        if skill is None or plan is None or errors or not isinstance(step, int):
            return None
        if run.is_error or source not in ("l0", "l1", "l3"):
            return None
        slots = resume.get("slots")
        entry_id = resume.get("entry_id")
        approved = step_result(run)  # its output decoded, as for any step
        catalog = turn_catalog(t, self.cascade, skill)
        intent = Intent.from_json(resume.get("intent"))
        execution = await run_plan(
            t,
            self.cascade,
            skill,
            catalog,
            plan,
            source=str(source),
            slots=slots if isinstance(slots, Mapping) else {},
            entry_id=entry_id if isinstance(entry_id, str) else None,
            intent=intent,
            journal_key=str(resume.get("journal", "")) or None,
            approved={step: approved},
        )
        if execution.status == "ok" and source == "l3":  # a served plan's entry exists already
            request = str(resume.get("request", ""))
            decision = await self.cascade.for_skill(skill.skill_id).record(
                request,
                executed=plan,
                intent=intent,
                catalog=catalog,
                now=epoch(t),
                turn_id=t.turn_id,
                origin="planner",
                context=record_context(t, skill, {i: r.text for i, r in execution.results.items()}),
            )
            await emit_record(t, decision, intent)
        if execution.status in ("ok", "paused"):
            return await finish_plan(t, execution)
        return await partial(t, (plan, execution)) if execution.committed else None

    async def after_turn(self, t: TurnContext, outcome: Next) -> None:
        """The turn ended with `outcome`: a clean tool-calling turn after a miss becomes the
        skill's plan. Clean: it ended waiting for the user (not paused, not cut short),
        every tool run succeeded, and every run was one of the skill's own tools (a turn
        that also wrote memory through `set_fields` or activated a skill is not one plan)."""
        pending, self.pending = self.pending, None
        if pending is None or outcome is not Next.WAIT:
            return
        skill = t.definition.skill(pending.skill_id)
        if skill is None or t.state.pending_confirmation is not None:
            return
        runs = [e for e in t.recorder.events if isinstance(e, ToolExecuted)]
        if not runs or any(r.is_error or r.tool_name not in skill.tools for r in runs):
            return
        if any(r.metadata.get("plan") is not None or r.metadata.get("source") for r in runs):
            return
        plan = loop_plan(runs, _last_reply(t), t.user_text)
        cache = self.cascade.for_skill(skill.skill_id)
        decision = await cache.record(
            t.user_text,
            executed=plan,
            intent=pending.intent,
            catalog=turn_catalog(t, self.cascade, skill),
            now=epoch(t),
            turn_id=t.turn_id,
            origin="loop",
            context=record_context(t, skill, run_outputs(runs)),
        )
        await emit_record(t, decision, pending.intent)

    def _cache_skill(self, t: TurnContext) -> Skill | None:
        """The skill whose cache this turn may consult, or None (see the module docstring)."""
        if self.tried or t.model_calls or t.attachments:
            return None
        config = t.definition.config.plan_cache
        skill = t.active_skill
        if not config.enabled or skill is None or not skill.document.plan_cache:
            return None
        text = t.user_text.strip()
        if not text or text.startswith(("set:", "/")) or t.state.pending_confirmation is not None:
            return None
        return skill if stack.top_block(t.state) is None else None

    async def _serve(
        self, t: TurnContext, skill: Skill, cache: PlanCache, catalog: Catalog, hit: Hit
    ) -> Next | None:
        """Run a cached plan (no model call) and finish the turn from its outcome."""
        execution = await run_plan(
            t,
            self.cascade,
            skill,
            catalog,
            hit.plan,
            source=hit.layer,
            slots=hit.slots,
            entry_id=hit.entry.id,
            intent=hit.intent,
        )
        self.pending = None  # a served plan is recorded here, not compiled again at turn end
        if execution.status == "paused":
            return Next.PAUSED  # recorded when the approval lets it finish (`after_approval`)
        if execution.status == "ok":
            decision = await cache.record(
                t.user_text,
                executed=hit.plan,
                intent=hit.intent,
                catalog=catalog,
                now=epoch(t),
                turn_id=t.turn_id,
                origin=hit.layer,
                served=hit,
            )
            await emit_record(t, decision, hit.intent)
            return await finish_plan(t, execution)
        committed = bool(execution.committed)
        await cache.served_failed(hit, now=epoch(t), committed=committed)
        return await partial(t, (hit.plan, execution)) if committed else None


def _last_reply(t: TurnContext) -> str:
    replies = [
        e.text
        for e in t.recorder.events
        if isinstance(e, BotMessage) and e.response_source == "llm"
    ]
    return replies[-1] if replies else ""


def plan_store_for(store: object) -> PlanStore:
    """The plan store beside an event store: its SQL database, or memory for a memory store."""
    engine = getattr(store, "engine", None)
    if engine is not None:
        from keel.plans.sql_store import SqlPlanStore  # lazy: SQLAlchemy

        return SqlPlanStore(engine)
    return MemoryPlanStore()


def default_cascade(definition: AgentDefinition, store: object) -> Cascade | None:
    """The cascade on `store`'s database when the agent enables `plan_cache`, else None."""
    if not definition.config.plan_cache.enabled:
        return None
    config = definition.config
    agent = config.id or config.name or definition.root.name
    layers = CacheConfig(l0=config.plan_cache.l0, l1=config.plan_cache.l1)
    return Cascade(store=plan_store_for(store), agent=agent, config=layers, definition=definition)
