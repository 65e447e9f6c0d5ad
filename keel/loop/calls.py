"""Acting on a model reply: text, `listen`, and tool calls, each checked before it acts.

The model proposes; this module disposes (spec §7.3 steps 5-6). A proposal that breaks a
rule (a tool not offered, arguments that do not validate, a closed gate, a second call to
a tool awaiting confirmation, `listen` mixed with text, a call beyond the reply's
`max_tool_calls_per_reply`) is refused with a model-visible message and recorded as
`tool_call_refused`; nothing it asked for happens.
"""

from __future__ import annotations

import json

import orjson

from keel.events.model import BotMessage, RoutingDecided
from keel.llm.port import AssistantChatMessage, Message, ModelResponse, ToolCall
from keel.loop import blocks_run, lifecycle, stack, voice
from keel.loop.builtins import run_builtin
from keel.loop.machine import frame_block
from keel.loop.offer import LISTEN, Offer, eligible_skills
from keel.loop.outcome import refuse
from keel.loop.tools_run import (
    CallSite,
    gate_open,
    needs_confirmation,
    pause_for_confirmation,
    run_builder_tool,
)
from keel.loop.turn import Next, TurnContext
from keel.skills import InstructionsStep
from keel.tools.validation import retryable_error_text, validate_arguments

REPEAT_LIMIT = 3
"""The same tool with identical arguments this many times in a row trips the breaker."""


async def handle_reply(t: TurnContext, response: ModelResponse, offers: tuple[Offer, ...]) -> Next:
    """Everything a model reply leads to, ending with what the loop does next."""
    outcome = await _handle_reply(t, response, offers)
    if t.routing_call:
        # A routing call that chose no skill is a decision too.
        t.routing_call = False
        candidates = tuple(s.skill_id for s in eligible_skills(t.definition, t.recorder.state))
        await t.emit(
            RoutingDecided(source="none", skill_id=None, tier=t.last_tier, candidates=candidates)
        )
    return outcome


async def _handle_reply(t: TurnContext, response: ModelResponse, offers: tuple[Offer, ...]) -> Next:
    text = (response.text or "").strip()
    calls = list(response.tool_calls)
    batch = t.ids.new_id()
    listens = [c for c in calls if c.name == LISTEN]
    others = [c for c in calls if c.name != LISTEN]
    # `listen` alone ends the turn silently; with text or other tools it is dropped (§7.4).
    if listens and (text or others):
        for call in listens:
            await refuse(
                t, call, "listen.dropped", "listen was dropped: it must come alone", batch=batch
            )
        calls = others
    elif listens and any(o.name == LISTEN for o in offers):
        return Next.WAIT
    # A lone listen that was not offered goes on as an ordinary (refused) tool call, so
    # the model is told and the loop continues.
    if not calls:
        return await _text_only(t, text)
    return await _tool_calls(t, text, calls, offers, batch)


async def _text_only(t: TurnContext, text: str) -> Next:
    if not text:
        return Next.WAIT
    await t.say(BotMessage(text=text, response_source="llm"))
    frame = stack.top_block(t.recorder.state)
    if frame is not None:
        found = frame_block(t.definition, frame)
        step = found[1].step(frame.step_id or "") if found else None
        if found and isinstance(step, InstructionsStep) and step.complete_when is None:
            # An instructions step without complete_when ends with one delivered reply (not
            # with the words of a denial while its block is held, spec §5.6 step 3).
            if not blocks_run.held(t, frame):
                await blocks_run.advance(t, frame, found[1], step)
    if t.searched:
        # A grounded reply after a search ends knowledge mode: the skill is parked and a
        # resume offered (spec §7.5).
        t.searched = False
        if await lifecycle.park_after_answer(t):
            return Next.WAIT
    outcome = await blocks_run.deterministic_pass(t)
    return outcome if outcome in (Next.PAUSED, Next.ENDED) else Next.WAIT


async def _tool_calls(
    t: TurnContext, text: str, calls: list[ToolCall], offers: tuple[Offer, ...], batch: str
) -> Next:
    message: AssistantChatMessage = {
        "role": "assistant",
        "content": text or None,
        "tool_calls": [c.to_message_part() for c in calls],
    }
    first = t.model_calls == 1
    t.transcript.append(message)
    if text:
        # In voice, on the turn's first call, the text is a filler said while tools run.
        beside = voice.beside_tools(
            t.recorder.state, t.definition.config.prompts, text, first_call=first
        )
        await t.say(beside, in_transcript=False)
        if voice.is_filler(beside):
            # A filler is heard while the tools run: it is committed (and so delivered to
            # the channel) now, not with the tool's record or the turn's end.
            await t.recorder.commit()
    by_name = {o.name: o for o in offers}
    cap = t.definition.config.max_tool_calls_per_reply
    stop = Next.CONTINUE
    said: list[Message] = []
    for index, call in enumerate(calls):
        if index >= cap:
            # Bounded work per reply: the excess still gets a result, so the model learns.
            content = await refuse(
                t,
                call,
                "tool.too_many_calls",
                f"not run: at most {cap} tool calls run per reply",
                batch=batch,
            )
        elif stop is not Next.CONTINUE:
            content = await refuse(
                t, call, "tool.turn_ended", "not run: the turn ended", batch=batch
            )
        else:
            mark = len(t.transcript)
            content, stop = await _one_call(t, call, by_name.get(call.name), batch)
            # What the bot said while the call ran must not sit between the tool calls and
            # their results (chat APIs reject that); it follows the batch's results.
            said += t.transcript[mark:]
            del t.transcript[mark:]
        t.transcript.append({"role": "tool", "tool_call_id": call.id, "content": content})
    t.transcript += said
    if stop is Next.CONTINUE:
        await lifecycle.auto_complete(t)
    return stop


_SIGNATURE = json.JSONEncoder(sort_keys=True, default=str)
"""What `json.dumps(args, sort_keys=True, default=str)` makes, the encoder made once."""


def _breaker(t: TurnContext, call: ToolCall, args: dict[str, object]) -> bool:
    try:
        # Canonical text of the arguments (sorted keys): equal arguments, equal text.
        text = orjson.dumps(args, option=orjson.OPT_SORT_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = _SIGNATURE.encode(args)  # an integer beyond 64 bits (never orjson's text)
    signature = (call.name, text)
    t.recent_calls.append(signature)
    tail = t.recent_calls[-REPEAT_LIMIT:]
    return len(tail) == REPEAT_LIMIT and len(set(tail)) == 1


async def _one_call(
    t: TurnContext, call: ToolCall, offer: Offer | None, batch: str
) -> tuple[str, Next]:
    if call.name in lifecycle.held_tools(t):
        # A block step's tool the user declined in this turn (also earlier in this reply):
        # not offered while the model words the denial, and calling it would ask again.
        text = f"the user declined {call.name} just now; it did not run"
        return await refuse(t, call, "tool.confirmation_denied", text, batch=batch), Next.CONTINUE
    if offer is None:
        return await _not_offered(t, call, batch), Next.CONTINUE
    args, problems = validate_arguments(offer.parameters, call.arguments)
    if problems or args is None:
        text = retryable_error_text(call.name, problems)
        await refuse(t, call, "tool.arguments.invalid", text, batch=batch, retryable=True)
        return text, Next.CONTINUE
    if _breaker(t, call, args):
        t.stop_detail = "repeated_tool_call"
        await refuse(t, call, "tool.repeated_call", "same call three times in a row", batch=batch)
        return "Error: repeated call", Next.EXHAUSTED
    site = CallSite(call_id=call.id, batch_id=batch)
    if offer.builtin:
        return await run_builtin(t, call, args, site)
    return await _builder(t, call, args, site)


async def _not_offered(t: TurnContext, call: ToolCall, batch: str) -> str:
    skill = t.active_skill
    if skill is not None and call.name in skill.tools and not gate_open(t, skill, call.name):
        return await refuse(
            t, call, "tool.requires_closed", f"{call.name} is not available now", batch=batch
        )
    return await refuse(
        t, call, "tool.not_offered", f"there is no tool named {call.name} here", batch=batch
    )


async def _builder(
    t: TurnContext, call: ToolCall, args: dict[str, object], site: CallSite
) -> tuple[str, Next]:
    skill = t.active_skill
    if skill is None or call.name not in skill.tools:
        return await refuse(
            t, call, "tool.not_offered", f"no tool {call.name}", batch=site.batch_id or ""
        ), Next.CONTINUE
    if not gate_open(t, skill, call.name):
        text = await refuse(
            t,
            call,
            "tool.requires_closed",
            f"{call.name} is not available now",
            batch=site.batch_id or "",
        )
        return text, Next.CONTINUE
    if needs_confirmation(skill, call.name):
        if t.recorder.state.pending_confirmation is not None:  # one pending at a time (§5.6 step 4)
            text = await refuse(
                t,
                call,
                "tool.confirmation_pending",
                "a confirmation is already pending; resolve it first",
                batch=site.batch_id or "",
            )
            return text, Next.CONTINUE
        ask = await pause_for_confirmation(t, skill, call.name, args, site)
        if ask is None:
            text = await refuse(
                t,
                call,
                "tool.confirmation_blank",
                "the confirmation question is empty",
                batch=site.batch_id or "",
            )
            return text, Next.CONTINUE
        content = json.dumps({"status": "awaiting_confirmation", "message": ask})
        # With a verbatim ask the turn ends here; otherwise the model words the question.
        return content, Next.PAUSED if t.canned and t.canned[-1] == ask else Next.CONTINUE
    run = await run_builder_tool(t, skill, call.name, args, site)
    return run.result_text, Next.CONTINUE
