"""Where the loop would call the model: route, fill or answer without one when it can.

`offline_step` is asked first each time the deterministic pass wants the model. It
returns what the loop does instead, or None to call the model after all:

* **no skill active**: the offline router (`routing.offline`) routes a confident message
  (`routing_decided`, source `router`, tier None, with its confidence); when unsure it
  defers to the model, or with no model asks which skill was meant, with buttons for the
  best candidates (each a `/skill_id` slash command); where extraction runs, the routed
  skill's collect entries the message already holds are filled before the first collect
  asks (`keel.loop.activation_fill`);
* **a `collect` step waits**: its entry's typed extractor (`extraction`) fills an
  unambiguous value (hooks run as for `set_fields`); otherwise the model is asked, or with
  no model the step's question is asked again;
* **with no model only**: an `instructions` step or prose is served by the extractors of
  the active skill's `extract:` entries, a hybrid skill enters the block its prose points
  to and completes when its blocks are done, a pending confirmation is settled by a yes or
  a no; anything else gets the fixed reply `utter_needs_model`, the reason in the turn's
  `turn_ended` (`metadata.detail`), and the skill is cancelled so the user is not stuck.
"""

from __future__ import annotations

from keel.events.base import Button
from keel.events.model import (
    BotMessage,
    RoutingDecided,
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
from keel.loop.no_model import NOT_UNDERSTOOD, confirm, needs_model, prose, resume
from keel.loop.offer import eligible_skills
from keel.loop.post_write import write_with_hook
from keel.loop.turn import Next, TurnContext
from keel.memory import MemoryField
from keel.project.definition import AgentDefinition, Skill
from keel.project.offline_config import runs
from keel.routing.router import Decision, OfflineRouter
from keel.skills import CollectStep

CLARIFY = "utter_offline_clarify"


def routes_offline(definition: AgentDefinition, model: Model) -> bool:
    """Whether turns of `definition` served by `model` route with the offline router."""
    return runs(definition.config.offline.router.enabled, has_model=has_model(model))


async def warm_router(router: OfflineRouter, definition: AgentDefinition) -> None:
    """Embed the skills' texts ahead of the first routed message."""
    await router.warm(tuple(s.document for s in definition.skills.values()))


async def offline_step(t: TurnContext) -> Next | None:
    """What to do instead of calling the model now, or None to call it."""
    if t.user_text.startswith("set:") or not t.user_text.strip():
        return None if has_model(t.model) else await needs_model(t, "button tap")
    if t.state.pending_confirmation is not None:
        return None if has_model(t.model) else await confirm(t)
    if lifecycle.resume_offer(t) is not None:
        return None if has_model(t.model) else await resume(t)
    if t.active_skill is None:
        return await _route(t, t.router)
    return await _fill(t, t.active_skill)


async def _route(t: TurnContext, router: OfflineRouter) -> Next | None:
    config = t.definition.config.offline.router
    with_model = has_model(t.model)
    eligible = tuple(s.skill_id for s in eligible_skills(t.definition, t.state))
    key = "route:" + ",".join(eligible)
    if not eligible or key in t.offline_tried:
        return None if with_model else await needs_model(t, "no skill to route to")
    if not runs(config.enabled, has_model=with_model):
        return None if with_model else await _clarify(t, eligible[: config.choices], None)
    t.offline_tried.add(key)
    documents = tuple(s.document for s in t.definition.skills.values())
    with t.timed("route"):
        decision = await router.route(documents, eligible, t.user_text, config)
    if decision.skill_id is not None:
        await t.emit(
            RoutingDecided(
                source="router",
                skill_id=decision.skill_id,
                tier=None,
                confidence=decision.confidence,
                candidates=eligible,
            )
        )
        await lifecycle.drop_resume_offer(t)
        await lifecycle.activate(t, decision.skill_id, interrupt=False)
        if runs(t.definition.config.offline.extraction, has_model=with_model):
            # The routed message may already hold what the skill's collects ask for.
            await activation_fill.fill_extracted(t, decision.skill_id)
        return Next.CONTINUE
    if with_model:
        return None
    if any(isinstance(e, SkillCompleted) for e in t.recorder.events):
        # A skill finished in this turn (say, sign-in): ask what else, plainly.
        await _record_none(t, decision, eligible)
        await t.utter("utter_ask_wants_to_continue")
        return Next.WAIT
    best = tuple(r.skill_id for r in decision.ranking[: config.choices])
    return await _clarify(t, best, decision)


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
    await _record_none(t, decision, choices)
    buttons = []
    for skill_id in choices:
        skill = t.definition.skill(skill_id)
        title = skill.document.name if skill is not None else skill_id
        buttons.append(Button(title=title, payload=f"/{skill_id}"))
    text = "Which of these do you mean?"
    rendered = render_response(t.definition, t.state, CLARIFY)
    if rendered is not None:
        text = rendered.text
    message = BotMessage(
        text=text, buttons=tuple(buttons), utter_action=CLARIFY, response_source="verbatim"
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
    return await _reask(t, step)


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
