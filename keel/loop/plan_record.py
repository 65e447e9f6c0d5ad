"""At the end of a turn the tool-calling loop handled, its tool calls become a plan.

The calls the model made for the request (in order, with the arguments they ran with) are
the plan's steps; the model's last reply becomes the final message when every specific in
it can be explained (a value of a step's output becomes `${stepK.path}`, a value from the
request stays for the compiler to turn into a slot); otherwise the final message is left
empty and a replay asks the model once to word the answer. The plan then goes through the
same compiler and gates as a planner's plan (`PlanCache.record`).

Only clean turns are recorded: it ended waiting for the user (not paused, not cut short),
every tool run succeeded, and every run was one of the skill's own tools (a turn that also
wrote memory through `set_fields` or activated a skill is not one plan).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from keel.events.model import BotMessage, ToolExecuted
from keel.loop.plan_scope import epoch
from keel.loop.plans_run import emit_record, turn_catalog
from keel.loop.turn import Next, TurnContext
from keel.plans.plan import FINAL_ANSWER, Plan, Step
from keel.tools.frozen import freeze_json

_SPECIFIC = re.compile(r"[\w.+-]*\d[\w.+-]*|[\w.+-]+@[\w.-]+")
"""Tokens that carry a specific value (digits, e-mail addresses)."""


async def record_turn_plan(t: TurnContext, outcome: Next) -> None:
    """Compile and record the loop's plan for this turn, when the turn qualifies."""
    pending, t.plan_record = t.plan_record, None
    if pending is None or t.plans is None or outcome is not Next.WAIT:
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
    cache = t.plans.for_skill(skill.skill_id)
    decision = await cache.record(
        t.user_text,
        executed=plan,
        intent=pending.intent,
        catalog=turn_catalog(t, skill),
        now=epoch(t),
        turn_id=t.turn_id,
        origin="loop",
    )
    await emit_record(t, decision, pending.intent)


def loop_plan(runs: list[ToolExecuted], reply: str, request: str) -> Plan:
    """The plan of a turn's tool runs and final reply."""
    steps = [
        Step(id=i, tool=r.tool_name, args=freeze_json(dict(r.arguments)))  # type: ignore[arg-type]
        for i, r in enumerate(runs, 1)
    ]
    steps.append(Step(id=len(steps) + 1, tool=FINAL_ANSWER))
    outputs = {i: _decoded(r.result) for i, r in enumerate(runs, 1)}
    return Plan(
        steps=tuple(steps),
        final_message=answer_template(reply, outputs, request),
        meta=freeze_json({"source": "loop"}),  # type: ignore[arg-type]
    )


def answer_template(reply: str, outputs: Mapping[int, object], request: str) -> str:
    """`reply` with step-output values replaced by refs; "" when a specific is unexplained."""
    text = reply
    for value, ref in sorted(_leaves(outputs), key=lambda item: -len(item[0])):
        text = re.sub(rf"(?<![\w$.{{]){re.escape(value)}(?![\w}}])", ref.replace("\\", r"\\"), text)
    lowered = request.lower()
    for token in _SPECIFIC.findall(_without_refs(text)):
        if token.lower().strip(".") not in lowered:
            return ""
    return text


def _leaves(outputs: Mapping[int, object]) -> list[tuple[str, str]]:
    """(value text, `${stepK.path}`) for every scalar leaf worth templating."""
    found: dict[str, str] = {}

    def walk(value: object, ref: str) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                if isinstance(key, str) and re.fullmatch(r"[A-Za-z_][\w-]*", key):
                    walk(item, f"{ref}.{key}")
        elif isinstance(value, list | tuple):
            for index, item in enumerate(value):
                walk(item, f"{ref}.{index}")
        elif isinstance(value, str | int | float) and not isinstance(value, bool):
            text = str(value)
            if len(text) >= 2 and text not in found:
                found[text] = ref + "}"

    for step, output in outputs.items():
        walk(output, "${step" + str(step))
    return list(found.items())


def _without_refs(text: str) -> str:
    return re.sub(r"\$\{[^{}]*\}", " ", text)


def _decoded(result: str) -> object:
    try:
        return json.loads(result)
    except ValueError:
        return result


def _last_reply(t: TurnContext) -> str:
    replies = [
        e.text
        for e in t.recorder.events
        if isinstance(e, BotMessage) and e.response_source == "llm"
    ]
    return replies[-1] if replies else ""
