"""The plan caches of one engine: one `PlanCache` per skill, on the conversation store.

Also what every plan run needs from the turn: the runtime values `${RUNTIME:...}` may name,
the filler answers (asked once per entry, filler and request, then kept), and the implicit
feedback the next turn gives a cached answer (spec §3.12): the same intent asked again
within a minute reads as a rejection, anything else as a weak approval.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

from keel.events.model import Event, PlanCacheDecided, PlanExecuted, ToolExecuted, TurnStarted
from keel.loop.errors import PlanFeedbackRefused
from keel.loop.recorder import Recorder
from keel.loop.turn import TurnContext
from keel.plans.cache import CacheConfig, PlanCache
from keel.plans.catalog import Catalog
from keel.plans.intent import Intent
from keel.plans.normalise import normalise
from keel.plans.plan import Plan
from keel.plans.skill_catalog import catalog_for_skill
from keel.plans.store_port import PlanStore
from keel.project.definition import AgentDefinition, Skill

FILLER_MEMORY = 10_000
"""Filler answers kept (oldest dropped first)."""
REPHRASE_SECONDS = 60.0
"""The same intent asked again this soon after a cached answer is an implicit rejection."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PendingRecord:
    """A turn that missed the cache: what to compile its tool calls for at the end."""

    skill_id: str
    intent: Intent


def skill_logic_version(definition: AgentDefinition | None, skill_id: str) -> str:
    """16 hex over what, besides Keel's code, decides a skill's plans: its skill.md (prose,
    blocks, constraints) and the planner prompt. Editing the skill retires its entries."""
    skill = definition.skill(skill_id) if definition is not None else None
    if definition is None or skill is None:
        return ""
    from keel.loop.planner import FORMAT

    try:
        text = (definition.root / skill.document.file).read_text(encoding="utf-8")
    except OSError:
        text = repr(skill.document.paragraphs)
    return hashlib.sha256(f"{text}\n{FORMAT}".encode()).hexdigest()[:16]


def epoch(t: TurnContext) -> float:
    """The turn's clock as epoch seconds."""
    return t.clock.now().timestamp()


def runtime_values(t: TurnContext) -> dict[str, object]:
    """What `${RUNTIME:key}` resolves to in this turn."""
    now = t.clock.now()
    return {
        "actor": t.recorder.conversation_id,
        "lang": t.definition.config.language or "en",
        "channel": "api",
        "turn_id": t.turn_id,
        "now": now.isoformat(),
        "today": now.date().isoformat(),
    }


class PlanCaches:
    """The engine's plan caches, one scope per agent skill, on one `PlanStore`."""

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
        from keel.loop.planner import ask_text

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

    async def implicit_signal(self, t: TurnContext, cache: PlanCache, intent: Intent) -> None:
        """Feedback the previous turn's cached answer gets from this request."""
        served = _last_served(t)
        if served is None:
            return
        turn_id, skill_id, at, previous = served
        again = bool(intent.signature) and intent.signature == previous
        signal = "implicit_fail" if again and epoch(t) - at <= REPHRASE_SECONDS else "implicit_ok"
        await self.for_skill(skill_id).feedback(turn_id, signal, now=epoch(t))


def _last_served(t: TurnContext) -> tuple[str, str, float, str] | None:
    """(turn id, skill id, time, intent) of the previous turn when the cache served it."""
    turn_id: str | None = None
    run: PlanExecuted | None = None
    skill_id: str | None = None
    intent = ""
    for event in t.history:
        if isinstance(event, TurnStarted):
            turn_id, run, skill_id, intent = event.turn_id, None, None, ""
        elif isinstance(event, PlanExecuted) and event.source in ("l0", "l1"):
            run = event
        elif isinstance(event, ToolExecuted) and event.metadata.get("plan") is not None:
            found = event.metadata.get("skill_id")
            skill_id = found if isinstance(found, str) else skill_id
        elif event.kind == "plan_cache_decided" and getattr(event, "hit", False):
            intent = str(getattr(event, "intent", ""))
    if turn_id is None or run is None or run.status != "ok" or skill_id is None:
        return None
    return turn_id, skill_id, run.timestamp, intent


def plan_store_for(store: object) -> PlanStore:
    """The plan store beside an event store: its SQL database, or memory for a memory store."""
    engine = getattr(store, "engine", None)
    if engine is not None:
        from keel.plans.sql_store import SqlPlanStore

        return SqlPlanStore(engine)
    from keel.plans.memory_store import MemoryPlanStore

    return MemoryPlanStore()


def default_caches(definition: AgentDefinition, store: object) -> PlanCaches | None:
    """Caches on `store`'s database when the agent enables `plan_cache`, else None."""
    if not definition.config.plan_cache.enabled:
        return None
    config = definition.config
    agent = config.id or config.name or definition.root.name
    layers = CacheConfig(l0=config.plan_cache.l0, l1=config.plan_cache.l1)
    return PlanCaches(
        store=plan_store_for(store), agent=agent, config=layers, definition=definition
    )


def turn_skill(history: tuple[Event, ...], turn_id: str) -> str | None:
    """The skill whose plan turn `turn_id` ran or recorded (from its tool runs)."""
    inside = False
    for event in history:
        if isinstance(event, TurnStarted):
            inside = event.turn_id == turn_id
        elif inside and isinstance(event, ToolExecuted):
            found = event.metadata.get("skill_id")
            if isinstance(found, str):
                return found
    return None


async def maintain_all(
    caches: PlanCaches, definition: AgentDefinition, now: float
) -> dict[str, int]:
    """Run maintenance (spec §3.13) on every skill's cache against its current tools;
    returns the counts of what changed, summed over skills."""
    from dataclasses import asdict

    totals: dict[str, int] = {}
    for skill_id, skill in sorted(definition.skills.items()):
        report = await caches.for_skill(skill_id).maintain(catalog_for_skill(skill), now=now)
        for name, count in asdict(report).items():
            totals[name] = totals.get(name, 0) + int(count)
    return totals


async def give_feedback(
    caches: PlanCaches,
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
    changed = await caches.for_skill(skill_id).feedback(turn_id, signal, now=now)
    await recorder.emit(PlanCacheDecided(layer="feedback", hit=False, reason=f"{signal}:{changed}"))
    return changed
