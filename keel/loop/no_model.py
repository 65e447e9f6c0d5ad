"""With no model: the fixed reply, hybrid skills, confirmations and resume offers.

Used by `keel.loop.offline` where the loop would ask the model and there is none.
"""

from __future__ import annotations

from keel.events.model import BotMessage, OrderedBlockEntered, SkillActivated
from keel.extract import Found
from keel.extract.extractors import yes_no
from keel.loop import lifecycle
from keel.loop.confirmations import resolve_pending
from keel.loop.outcome import _Done
from keel.loop.tools_run import CallSite
from keel.loop.turn import Next, TurnContext
from keel.project.definition import Skill

NEEDS_MODEL = "utter_needs_model"
NOT_UNDERSTOOD = "utter_offline_not_understood"


async def needs_model(t: TurnContext, reason: str) -> Next:
    """The fixed reply for what only a model could do; the skill is cancelled."""
    t.stop_detail = f"no_model: {reason}"
    if not await t.utter(NEEDS_MODEL):
        await t.say(BotMessage(text="I can't help with that here.", response_source="verbatim"))
    skill = t.active_skill
    if skill is not None and not skill.document.routing.engine_managed:
        await lifecycle.finish(t, skill.skill_id, completed=False)
    return Next.WAIT


def _blocks_entered(t: TurnContext, skill_id: str) -> set[str]:
    entered: set[str] = set()
    for event in reversed(t.all_events()):
        if isinstance(event, SkillActivated) and event.skill_id == skill_id:
            break
        if isinstance(event, OrderedBlockEntered) and event.skill_id == skill_id:
            entered.add(event.block_id)
    return entered


async def prose(t: TurnContext, skill: Skill) -> Next:
    """A hybrid skill with no model: enter the blocks its prose names, in order, then end."""
    document = skill.document
    named = [tok.target for tok in document.tokens if tok.kind == "block"]
    entered = _blocks_entered(t, skill.skill_id)
    for block_id in dict.fromkeys(named):
        block = document.block(block_id)
        if block is not None and block_id not in entered:
            await lifecycle.enter_block(t, skill.skill_id, block)
            return Next.CONTINUE
    if entered and t.delivered:
        await lifecycle.finish(t, skill.skill_id, completed=True)
        return Next.CONTINUE
    return await needs_model(t, f"skill `{skill.skill_id}` answers in prose")


async def confirm(t: TurnContext) -> Next:
    pending = t.state.pending_confirmation
    assert pending is not None
    answer = yes_no(t.user_text)
    if not isinstance(answer, Found):
        await t.say(BotMessage(text=pending.confirmation_ask, response_source="verbatim"))
        return Next.WAIT
    site = CallSite(call_id=f"offline:{pending.pause_id}")
    outcome = await resolve_pending(t, pending, bool(answer.value), site)
    return outcome.next if isinstance(outcome, _Done) else Next.CONTINUE


async def resume(t: TurnContext) -> Next:
    answer = yes_no(t.user_text)
    if isinstance(answer, Found) and answer.value:
        await lifecycle.resume(t)
        return Next.CONTINUE
    if isinstance(answer, Found):
        await lifecycle.drop_resume_offer(t)
        return Next.CONTINUE
    return await needs_model(t, "the answer to the resume offer is unclear")
