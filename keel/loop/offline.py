"""Where the loop would call the model: route, fill or answer without one when it can.

`offline_step` is asked first each time the deterministic pass wants the model. It
returns what the loop does instead, or None to call the model after all:

* **no skill active**: the offline router (`routing.offline`) routes a confident message
  (`routing_decided`, source `router`, tier None, with its confidence); when unsure, a
  message holding values that only one eligible skill's `extract:` entries find (an
  email, a pattern, a gazetteer name, a date) routes to that skill; otherwise it defers to
  the model, or with no model asks which skill was meant, with buttons for the best
  candidates that run without one (each a `/skill_id` slash command); where extraction
  runs, the routed skill's collect entries the message already holds are filled before
  the first collect asks (`keel.loop.activation_fill`). With no model, small talk
  (`keel.routing.smalltalk`: hello, thanks, yes, no, bye) is answered with no routing;

* **a `collect` step waits**: its entry's typed extractor (`extraction`) fills an
  unambiguous value (hooks run as for `set_fields`); otherwise the model is asked, or with
  no model the step's question is asked again;
* **with no model only**: a skill that cannot run without one (`no_model.runs_without_model`)
  is not run: `utter_skill_needs_model` says so when it is asked for, before any of its
  questions; an `instructions` step or prose is served by the extractors of the active
  skill's `extract:` entries, a hybrid skill enters the block its prose points to and
  completes when its blocks are done, a pending confirmation is settled by a yes or a no;
  a message with no value for the waiting step that is a stop ("never mind") cancels the
  skills, and one the router clearly routes to another eligible skill starts that skill
  (the waiting one is parked, and offered again after it); anything else gets the fixed
  reply `utter_needs_model`, the reason in the turn's `turn_ended` (`metadata.detail`),
  and the skills are cancelled so the user is not stuck.
"""

from __future__ import annotations

from keel.events.model import (
    BotMessage,
    RoutingDecided,
    SkillActivated,
    SkillCompleted,
)
from keel.extract import Found
from keel.extract.fill import extract, spec_for
from keel.llm.none import has_model
from keel.llm.port import Model
from keel.loop import activation_fill, lifecycle, stack
from keel.loop.deliver import render_response
from keel.loop.machine import frame_block
from keel.loop.memory_ops import Refusal, plan_write
from keel.loop.no_model import (
    NOT_UNDERSTOOD,
    SKILL_NEEDS_MODEL,
    announce_limits,
    can_do,
    confirm,
    drop_stack,
    model_bound,
    needs_model,
    prose,
    resume,
    runs_without_model,
    say_offering,
    skill_buttons,
    skill_needs_model,
)
from keel.loop.offer import eligible_skills
from keel.loop.post_write import write_with_hook
from keel.loop.turn import Next, TurnContext
from keel.memory import MemoryField
from keel.project.definition import AgentDefinition, Skill
from keel.project.offline_config import RouterConfig, runs
from keel.routing.router import Decision, OfflineRouter
from keel.routing.smalltalk import SmallTalk, small_talk
from keel.skills import CollectStep

CLARIFY = "utter_offline_clarify"
ASK_NEXT = "utter_offline_ask_next"
"""With no model: what can I do for you (a yes, a hello, a skill done with nothing more to
route), with a button per eligible skill that runs without a model."""
GOODBYE = "utter_offline_goodbye"
WELCOME = "utter_offline_welcome"
STOPPED = "utter_offline_stopped"
ANYTHING_ELSE = frozenset({"utter_ask_wants_to_continue", WELCOME})
"""Responses that ask whether there is anything else: a "no" to them is a goodbye."""
VALUE_KINDS = frozenset({"email", "pattern", "gazetteer", "date"})
"""Extractors whose values point to a skill when the router is unsure (not enum phrases,
which the embedder reads, nor numbers, yes/no or whole texts, which any message holds)."""


def routes_offline(definition: AgentDefinition, model: Model) -> bool:
    """Whether turns of `definition` served by `model` route with the offline router."""
    return runs(definition.config.offline.router.enabled, has_model=has_model(model))


async def warm_router(router: OfflineRouter, definition: AgentDefinition) -> None:
    """Embed the skills' texts ahead of the first routed message."""
    await router.warm(tuple(s.document for s in definition.skills.values()))


async def offline_step(t: TurnContext) -> Next | None:
    """What to do instead of calling the model now, or None to call it."""
    with_model = has_model(t.model)
    if t.user_text.startswith("set:"):
        return None if with_model else await needs_model(t, "button tap")
    if not t.user_text.strip():
        return None if with_model else await _not_understood(t)
    if t.state.pending_confirmation is not None:
        return None if with_model else await confirm(t)
    if lifecycle.resume_offer(t) is not None:
        return None if with_model else await resume(t)
    if not with_model and (bound := model_bound(t)) is not None:
        return await skill_needs_model(t, bound)
    if t.active_skill is None:
        return await _route(t, t.router)
    return await _fill(t, t.active_skill)


async def tapped(t: TurnContext) -> Next | None:
    """Right after `/skill_id` activated a skill: with no model, a skill that cannot run
    without one is said so at once, before any of its steps asks (None: go on)."""
    if has_model(t.model) or (bound := model_bound(t)) is None:
        return None
    return await skill_needs_model(t, bound)


async def greeted(t: TurnContext) -> None:
    """After the session-start greeting, with no model: say once which skills need one
    (only where the session start said something: no greeting, no note)."""
    if not has_model(t.model) and t.delivered:
        await announce_limits(t)


async def _not_understood(t: TurnContext) -> Next:
    await t.utter(NOT_UNDERSTOOD)
    return Next.WAIT


async def _route(t: TurnContext, router: OfflineRouter) -> Next | None:
    config = t.definition.config.offline.router
    with_model = has_model(t.model)
    eligible = tuple(s.skill_id for s in eligible_skills(t.definition, t.state))
    key = "route:" + ",".join(eligible)
    if not eligible or key in t.offline_tried:
        if with_model:
            return None
        # The message was routed once in this turn already (its skill has finished).
        return Next.WAIT if t.delivered else await needs_model(t, "no skill to route to")
    if not runs(config.enabled, has_model=with_model):
        return None if with_model else await _clarify(t, _runnable(t, eligible, config), None)
    t.offline_tried.add(key)
    talk = None if with_model else small_talk(t.user_text)
    if talk is not None:
        return await _small_talk(t, talk, eligible)
    documents = tuple(s.document for s in t.definition.skills.values())
    with t.timed("route"):
        decision = await router.route(documents, eligible, t.user_text, config)
    skill_id, reason = decision.skill_id, ""
    if skill_id is None and (by_values := _by_values(t, eligible)) is not None:
        skill_id, reason = by_values
    if skill_id is not None:
        await t.emit(
            RoutingDecided(
                source="router",
                skill_id=skill_id,
                tier=None,
                confidence=decision.confidence,
                candidates=eligible,
                reason=reason,
            )
        )
        await lifecycle.drop_resume_offer(t)
        if not with_model and not runs_without_model(t.definition, skill_id):
            return await skill_needs_model(t, skill_id)
        await lifecycle.activate(t, skill_id, interrupt=False)
        if runs(t.definition.config.offline.extraction, has_model=with_model):
            # The routed message may already hold what the skill's collects ask for.
            await activation_fill.fill_extracted(t, skill_id)
        return Next.CONTINUE
    if with_model:
        return None
    if any(isinstance(e, SkillCompleted) for e in t.recorder.events):
        # A skill finished in this turn (say, sign-in) and the message asks nothing more:
        # ask what the user needs (not "anything else?": nothing was asked yet).
        await _record_none(t, decision, eligible)
        await say_offering(t, ASK_NEXT, can_do(t))
        return Next.WAIT
    ranked = tuple(r.skill_id for r in decision.ranking)
    return await _clarify(t, _runnable(t, ranked, config), decision)


def _runnable(t: TurnContext, ranked: tuple[str, ...], config: RouterConfig) -> tuple[str, ...]:
    """The first `choices` skills of `ranked`, leaving out (with no model) those that
    cannot run without one."""
    if has_model(t.model):
        return ranked[: config.choices]
    return tuple(s for s in ranked if runs_without_model(t.definition, s))[: config.choices]


def _by_values(t: TurnContext, eligible: tuple[str, ...]) -> tuple[str, str] | None:
    """The one eligible skill whose `extract:` entries find the most values in the message
    (emails, patterns, gazetteer names, dates), and which entries did; None on a tie."""
    found: dict[str, list[str]] = {}
    for skill_id in eligible:
        for field in t.definition.memory.fields_of(skill_id):
            spec = field.extract
            if spec is None or spec.kind not in VALUE_KINDS or not field.llm_settable:
                continue
            if isinstance(extract(field, spec, t.user_text, t.definition.root), Found):
                found.setdefault(skill_id, []).append(field.name)
    most = max((len(names) for names in found.values()), default=0)
    best = [skill_id for skill_id, names in found.items() if len(names) == most]
    if most == 0 or len(best) != 1:
        return None
    return best[0], "values in the message: " + ", ".join(found[best[0]])


def _asked_anything_else(t: TurnContext) -> bool:
    for event in reversed(t.all_events()):
        if isinstance(event, BotMessage):
            return event.utter_action in ANYTHING_ELSE
    return False


async def _small_talk(t: TurnContext, talk: SmallTalk, eligible: tuple[str, ...]) -> Next:
    """Hello, thanks, yes, no, bye with no skill active and no model: answered directly."""
    await t.emit(
        RoutingDecided(
            source="none",
            skill_id=None,
            tier=None,
            candidates=eligible,
            reason=f"small talk: {talk}",
        )
    )
    if talk == "empty":
        await t.utter(NOT_UNDERSTOOD)
    elif talk == "goodbye" or (talk == "no" and _asked_anything_else(t)):
        await t.utter(GOODBYE)
    elif talk == "thanks":
        await t.utter(WELCOME)
    else:
        await say_offering(t, ASK_NEXT, can_do(t))
    return Next.WAIT


async def _record_none(
    t: TurnContext, decision: Decision | None, candidates: tuple[str, ...]
) -> None:
    confidence = decision.confidence if decision is not None else None
    await t.emit(
        RoutingDecided(
            source="none", skill_id=None, tier=None, confidence=confidence, candidates=candidates
        )
    )


async def _clarify(t: TurnContext, choices: tuple[str, ...], decision: Decision | None) -> Next:
    """Ask which skill was meant, one button (a slash command) per candidate."""
    if not choices:
        return await needs_model(t, "no skill that runs without a model fits")
    await _record_none(t, decision, choices)
    buttons = skill_buttons(t, choices)
    text = "Which of these do you mean?"
    rendered = render_response(t.definition, t.state, CLARIFY)
    if rendered is not None:
        text = rendered.text
    message = BotMessage(
        text=text, buttons=buttons, utter_action=CLARIFY, response_source="verbatim"
    )
    await t.say(message)
    return Next.WAIT


def _waiting_step(t: TurnContext) -> tuple[str, object] | None:
    """(frame id, step) of the block step the model is asked about, if a block runs."""
    frame = stack.top_block(t.state)
    if frame is None:
        return None
    found = frame_block(t.definition, frame)
    if found is None:
        return None
    return frame.frame_id, found[1].step(frame.step_id or "")


async def _fill(t: TurnContext, skill: Skill) -> Next | None:
    waiting = _waiting_step(t)
    with_model = has_model(t.model)
    if waiting is not None and isinstance(waiting[1], CollectStep):
        if not runs(t.definition.config.offline.extraction, has_model=with_model):
            return None if with_model else await needs_model(t, "extraction is disabled")
        return await _collect(t, skill, waiting[0], waiting[1], with_model)
    if with_model:
        return None
    if waiting is None and skill.document.has_prose:
        return await prose(t, skill)
    key = f"fill:{waiting[0] if waiting else skill.skill_id}"
    if key in t.offline_tried:
        return await _ask_again(t, skill)
    t.offline_tried.add(key)
    written = await _fill_fields(t, skill)
    if written:
        return Next.CONTINUE
    if written is None:
        await t.utter(NOT_UNDERSTOOD)
    elif (left := await _leave(t, key)) is not None:
        return left
    return await _ask_again(t, skill)


async def _collect(
    t: TurnContext, skill: Skill, frame_id: str, step: CollectStep, with_model: bool
) -> Next | None:
    key = f"collect:{frame_id}:{step.id}"
    field = t.definition.memory.resolve(step.entry, skill.skill_id)
    spec = spec_for(field, implied=True) if field is not None else None
    if key in t.offline_tried or field is None or spec is None:
        return None if with_model else await _reask(t, step)
    t.offline_tried.add(key)
    found = extract(field, spec, t.user_text, t.definition.root)
    written: bool | None = False
    if isinstance(found, Found):
        written = await _write(t, skill, field, found.value, frozenset({step.entry}))
        if written:
            return Next.CONTINUE
    if with_model:
        return None
    if written is None:
        await t.utter(NOT_UNDERSTOOD)
    elif (left := await _leave(t, key)) is not None:
        return left
    return await _reask(t, step)


async def _leave(t: TurnContext, key: str) -> Next | None:
    """With no model, a message with no value for the waiting step: a stop or a goodbye
    cancels the skills; a message the router clearly routes to another eligible skill
    starts it (the waiting skill is parked and offered again after it); else None. Not
    for the message that started a skill in this turn (it was routed already)."""
    if any(isinstance(e, SkillActivated) for e in t.recorder.events):
        return None
    talk = small_talk(t.user_text)
    if talk in ("stop", "goodbye", "no"):
        await t.emit(
            RoutingDecided(source="none", skill_id=None, tier=None, reason=f"small talk: {talk}")
        )
        await drop_stack(t)
        if talk == "goodbye":
            await t.utter(GOODBYE)
        else:
            await say_offering(t, STOPPED, can_do(t))
        return Next.WAIT
    config = t.definition.config.offline.router
    if talk is not None or not runs(config.enabled, has_model=False):
        return None
    on_stack = {frame.skill_id for frame in t.state.stack}
    eligible = tuple(
        s.skill_id for s in eligible_skills(t.definition, t.state) if s.skill_id not in on_stack
    )
    if not eligible or f"leave:{key}" in t.offline_tried:
        return None
    t.offline_tried.add(f"leave:{key}")
    documents = tuple(s.document for s in t.definition.skills.values())
    with t.timed("route"):
        decision = await t.router.route(documents, eligible, t.user_text, config)
    if decision.skill_id is None:
        return None
    await t.emit(
        RoutingDecided(
            source="router",
            skill_id=decision.skill_id,
            tier=None,
            confidence=decision.confidence,
            candidates=eligible,
            reason="a new request while a step waited",
        )
    )
    if not runs_without_model(t.definition, decision.skill_id):
        # Said plainly, and the waiting step asks again: the user's flow is kept.
        t.stop_detail = f"no_model: skill `{decision.skill_id}` needs a model"
        skill = t.definition.skill(decision.skill_id)
        name = skill.document.name if skill is not None else decision.skill_id
        await t.utter(SKILL_NEEDS_MODEL, extra={"skill": name})
        return None
    await lifecycle.activate(t, decision.skill_id, interrupt=True)
    if runs(t.definition.config.offline.extraction, has_model=False):
        await activation_fill.fill_extracted(t, decision.skill_id)
    return Next.CONTINUE


async def _reask(t: TurnContext, step: CollectStep) -> Next:
    if step.utterance is None or not await t.utter(step.utterance):
        await t.utter(NOT_UNDERSTOOD)
    return Next.WAIT


async def _write(
    t: TurnContext, skill: Skill, field: MemoryField, value: object, owned: frozenset[str]
) -> bool | None:
    """Write an extracted value as `set_fields` would (same rights, same hook): True when
    it stands, False when the rules refuse it, None when the entry's hook rejected it."""
    planned = plan_write(
        t.definition.memory, t.state.memory, field.name, value, "llm", skill.skill_id, owned
    )
    if isinstance(planned, Refusal):
        return False
    kind = field.extract.kind if field.extract is not None else "implied"
    rejected = await write_with_hook(
        t, planned, filled_by="extractor", provenance={"extractor": kind}
    )
    return True if rejected is None else None


def _extractable(t: TurnContext, skill: Skill) -> list[MemoryField]:
    return [
        f
        for f in t.definition.memory.fields_of(skill.skill_id)
        if f.llm_settable and f.extract is not None and t.state.memory.get(f.key) is None
    ]


async def _fill_fields(t: TurnContext, skill: Skill) -> bool | None:
    """Fill every unset `extract:` entry of the skill found in the message: True when one
    was written, None when a hook rejected one, else False."""
    wrote = False
    for field in _extractable(t, skill):
        assert field.extract is not None
        found = extract(field, field.extract, t.user_text, t.definition.root)
        if isinstance(found, Found):
            written = await _write(t, skill, field, found.value, frozenset())
            if written is None:
                return None
            wrote = wrote or written
    return wrote


async def _ask_again(t: TurnContext, skill: Skill) -> Next:
    fields = _extractable(t, skill)
    for field in fields:
        if field.extract is not None and field.extract.ask and await t.utter(field.extract.ask):
            return Next.WAIT
    if fields:
        await t.utter(NOT_UNDERSTOOD)
        return Next.WAIT
    return await needs_model(t, f"skill `{skill.skill_id}` needs a model at this step")


__all__ = ["offline_step"]
