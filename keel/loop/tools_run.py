"""Running builder tools inside a turn: the same path for model calls and `execute_tool`.

Order at dispatch (spec §7.3 step 5): arguments are validated by the caller; here the
`requires` gate is checked again (fail closed), the confirmation gate may turn the call
into a pause point, then the tool runs with its timeout; memory it writes is appended as
it runs (and kept if the turn is cancelled mid-tool, when no call record is written);
`tool_executed` + `mcp_tool_executed` record the run; `on_success` / `on_failure` speak.
MCP tools (`keel.mcp`) are tool definitions like any other: they run here too, with their
server's `tool_timeout`, and are recorded with `source: mcp` and `mcp_server`. A tool that
raises is also logged at ERROR (`keel.loop`) with its traceback and the conversation and
turn ids; one that times out, at WARNING.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass

from keel.conditions import Outcome
from keel.events.base import freeze_mapping, from_frozen
from keel.events.fold import PENDING_CONFIRMATION_KEY
from keel.events.model import (
    BotMessage,
    McpToolExecuted,
    MemorySet,
    PausePointCreated,
    ToolExecuted,
)
from keel.loop.deliver import render_response
from keel.loop.memory_ops import ToolMemory
from keel.loop.offer import tool_gate
from keel.loop.turn import TurnContext
from keel.project.definition import Skill
from keel.skills import ToolConstraint
from keel.tools import LocalToolContext
from keel.tools.definition import ToolDefinition
from keel.tools.dispatch import ToolRun, run_tool

_log = logging.getLogger("keel.loop")


@dataclass(frozen=True, kw_only=True, slots=True)
class CallSite:
    """Where a tool call comes from, for the records."""

    call_id: str
    batch_id: str | None = None
    step_id: str | None = None
    """The `execute_tool` step, when a block (not the model) calls."""
    confirmed: bool = False
    """The run of a call the user approved at a pause point."""
    plan: str | None = None
    """The source layer (`l0`, `l1`, `l3`) when a plan's step makes the call."""
    plan_step: int | None = None


def constraint_of(skill: Skill, tool_name: str) -> ToolConstraint | None:
    """The skill's `tool_constraints` entry for `tool_name`."""
    for constraint in skill.document.tool_constraints:
        if constraint.tool == tool_name:
            return constraint
    return None


def effectful(skill: Skill, tool_name: str, definition: ToolDefinition) -> bool:
    """The tool changes the world (its contract's `effect`, the skill's constraint laid
    over it; an undeclared effect is `write`): its run is a commit boundary."""
    constraint = constraint_of(skill, tool_name)
    declared = constraint.contract.get("effect") if constraint and constraint.contract else None
    return (declared if isinstance(declared, str) else definition.contract.effect) != "read_only"


def gate_open(t: TurnContext, skill: Skill, tool_name: str) -> bool:
    """The dispatch-time `requires` check (closed counts as not open)."""
    return tool_gate(t.definition, t.recorder.state, skill, tool_name) is Outcome.TRUE


def needs_confirmation(skill: Skill, tool_name: str) -> bool:
    """The tool's constraint asks for the user's confirmation first."""
    constraint = constraint_of(skill, tool_name)
    confirmation = constraint.requires_confirmation if constraint else None
    return bool(confirmation and confirmation.enabled)


CONFIRMATION_RESPONSE = "utter_ask_tool_confirmation"
"""The bundled confirmation question, asked when the constraint names no response."""


def confirmation_values(tool_name: str, args: Mapping[str, object]) -> dict[str, str]:
    """What a confirmation question's short placeholders read before memory: each argument
    of the held call by its name (`{order_id}`), `{tool}` (the tool's name) and
    `{arguments}` (every argument, `name: value`), unless the call has an argument of that
    name. An argument with no value (null or empty) fills nothing, so a question that uses
    it is never sent (`response.placeholder.unfilled`)."""
    shown = {name: _arg_text(value) for name, value in args.items()}
    listing = ", ".join(f"{name}: {text}" for name, text in shown.items() if text)
    return {"tool": tool_name, "arguments": listing or "no arguments", **shown}


def _arg_text(value: object) -> str:
    if value is None or isinstance(value, str):
        return value or ""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


async def pause_for_confirmation(
    t: TurnContext,
    skill: Skill,
    tool_name: str,
    args: Mapping[str, object],
    site: CallSite,
    *,
    extra: Mapping[str, object] | None = None,
    speak: bool = False,
) -> str | None:
    """Store the call as a pause point and ask; returns the ask text, or None when the ask
    renders blank or cannot be filled (then the dispatch fails closed, and the user hears
    `utter_internal_error`). `extra` joins the stored record (a plan's way to go on after
    the approval).

    The question is the constraint's `utter_for_confirmation`, else the bundled
    `utter_ask_tool_confirmation`; either is filled with the held call's arguments
    (`confirmation_values`) before memory. The constraint's response is said; the bundled
    one only when `speak` (no model will word the question: a plan's step), otherwise it is
    the message the model words the question from (spec §5.6 step 2)."""
    constraint = constraint_of(skill, tool_name)
    confirmation = constraint.requires_confirmation if constraint else None
    name = (confirmation.utter_for_confirmation if confirmation else None) or None
    said = name is not None or speak
    name = name or CONFIRMATION_RESPONSE
    values = confirmation_values(tool_name, args)
    ask = render_response(t.definition, t.recorder.state, name, extra=values)
    if ask is not None and ask.utter_action != name:
        await t.say(ask)  # no variant could be filled: nothing may be asked
        return None
    if ask is None or not ask.text.strip():
        return None
    text = ask.text
    frame = t.recorder.state.stack[-1] if t.recorder.state.stack else None
    record = {
        "tool_name": tool_name,
        "tool_args": dict(args),
        "confirmation_ask": text,
        "utter_on_user_denial": confirmation.utter_on_user_denial if confirmation else None,
        "skill_id": skill.skill_id,
        "frame_id": frame.frame_id if frame else None,
        "execute_step_id": site.step_id,
        **(extra or {}),
    }
    # Instead of running, the call is stored as the pending record, then the ask is said
    # and the turn ends paused; the call runs only on a later yes (spec §5.6 steps 2-3).
    await t.emit(
        PausePointCreated(
            pause_id=t.new_id(),
            tool_name=tool_name,
            tool_args=freeze_mapping(args),  # type: ignore[arg-type]
            confirmation_ask=text,
            utter_on_user_denial=record["utter_on_user_denial"],  # type: ignore[arg-type]
            skill_id=skill.skill_id,
            frame_id=record["frame_id"],  # type: ignore[arg-type]
            execute_step_id=site.step_id,
        ),
        MemorySet(key=PENDING_CONFIRMATION_KEY, value=json.loads(json.dumps(record))),
    )
    if said:
        await t.say(ask)
        t.canned.append(ask.text)
    return text


def _cancelled() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def run_builder_tool(
    t: TurnContext, skill: Skill, tool_name: str, args: Mapping[str, object], site: CallSite
) -> ToolRun:
    """Run the tool and record it; `CancelledError` propagates with no call record."""
    definition = skill.tools[tool_name]
    memory = ToolMemory(
        schema=t.definition.memory,
        memory=t.recorder.state.memory,
        active_skill=skill.skill_id,
        filled_by=tool_name,
    )
    context = LocalToolContext(
        memory=memory,
        cancelled=_cancelled,
        sender_id=t.recorder.conversation_id,
        conversation_id=t.recorder.conversation_id,
    )
    # Commit boundaries (docs/events.md): what led to an effect is stored before it runs,
    # and its record right after, both durably (synced to disk: after a power loss the
    # effect must not run again); a read-only tool's run costs no commit.
    effect = site.confirmed or effectful(skill, tool_name, definition)
    if effect:
        await t.recorder.commit(durable=True)
    if t.on_tool_start is not None:
        t.on_tool_start(tool_name, args)
    observer = t.recorder.observer
    if observer is not None:
        await observer.tool_started(tool_name, args)
    timeout = definition.timeout or t.definition.config.tool_timeout
    try:
        with t.timed("tools.exec"):
            run = await run_tool(definition, args, context=context, timeout=timeout)
    finally:
        # Memory a tool wrote is kept even when the turn is cancelled mid-tool.
        written = memory.take()
        if written:
            await asyncio.shield(t.emit(*written))
    _log_failure(t, tool_name, run)
    for text in context.sent:
        await t.say(BotMessage(text=text, response_source="verbatim"))
    await record_run(
        t, tool_name, args, run, site, skill_id=skill.skill_id, mcp_server=definition.mcp_server
    )
    if effect:
        await t.recorder.commit(durable=True)
    constraint = constraint_of(skill, tool_name)
    if constraint is not None:
        follow = constraint.on_failure if run.is_error else constraint.on_success
        if follow is not None:
            await t.utter(follow)
    return run


def _log_failure(t: TurnContext, tool_name: str, run: ToolRun) -> None:
    """Operators see a tool that raised (with its traceback) or timed out in the server log."""
    if run.raised is None and run.outcome != "timeout":
        return  # the usual case: nothing to say
    ids = {"conversation_id": t.recorder.conversation_id, "turn_id": t.turn_id}
    where = f"(conversation {ids['conversation_id']}, turn {ids['turn_id']})"
    if run.raised is not None:
        _log.error(
            "tool %s raised %s: %s",
            tool_name,
            where,
            run.error_message,
            exc_info=run.raised,
            extra=ids,
        )
    elif run.outcome == "timeout":
        _log.warning("tool %s timed out %s: %s", tool_name, where, run.error_message, extra=ids)


async def record_run(
    t: TurnContext,
    tool_name: str,
    args: Mapping[str, object],
    run: ToolRun,
    site: CallSite,
    *,
    skill_id: str | None,
    mcp_server: str | None = None,
) -> None:
    """`tool_executed` and its `mcp_tool_executed` copy (`source: mcp` with a server).

    The copy shares the record's frozen fields (`from_frozen`): they are frozen once."""
    meta: dict[str, object] = {"skill_id": skill_id} if skill_id else {}
    if site.confirmed:
        meta["source"] = "tool_confirmation"
    if site.plan is not None:
        meta["plan"] = site.plan
        meta["plan_step"] = site.plan_step
    record = ToolExecuted(
        tool_name=tool_name,
        arguments=args,  # type: ignore[arg-type]
        source="local" if mcp_server is None else "mcp",
        result=run.result_text,
        is_error=run.is_error,
        error_message=run.error_message,
        mcp_server=mcp_server,
        error_code=run.error_code if run.is_error else None,
        tool_call_id=site.call_id,
        tool_batch_id=site.batch_id,
        metadata=meta,  # type: ignore[arg-type]
    )
    copy = from_frozen(
        McpToolExecuted,
        tool_name=record.tool_name,
        arguments=record.arguments,
        source=record.source,
        result=record.result,
        is_error=record.is_error,
        error_message=record.error_message,
        mcp_server=record.mcp_server,
        error_code=record.error_code,
    )
    # Straight to the recorder: a tool record is no memory write (no trigger to check).
    await t.recorder.emit(record, copy)
