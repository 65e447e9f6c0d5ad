"""What a turn's event log says about plans: the plan of a tool-calling turn, the plan turns.

The calls the model made for a request (in order, with the arguments they ran with) are a
plan's steps; the model's last reply becomes the final message when every specific in it
can be explained (a value of a step's output becomes `${stepK.path}`, a value from the
request stays for the compiler to turn into a slot); otherwise the final message is left
empty and a replay asks the model once to word the answer (`answer_template`). The loop
records such a plan when a turn ends well (`keel.loop.cascade`). Pure: events in, values out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from keel.events.model import Event, PlanExecuted, ToolExecuted, TurnStarted
from keel.plans.paths import decoded_output
from keel.plans.plan import FINAL_ANSWER, Plan, Step
from keel.tools.frozen import freeze_json

_SPECIFIC = re.compile(r"[\w.+-]*\d[\w.+-]*|[\w.+-]+@[\w.-]+")
"""Tokens that carry a specific value (digits, e-mail addresses)."""


def loop_plan(runs: list[ToolExecuted], reply: str, request: str) -> Plan:
    """The plan of a turn's tool runs and final reply."""
    steps = [
        Step(id=i, tool=r.tool_name, args=freeze_json(dict(r.arguments)))  # type: ignore[arg-type]
        for i, r in enumerate(runs, 1)
    ]
    steps.append(Step(id=len(steps) + 1, tool=FINAL_ANSWER))
    outputs = {i: decoded_output(r.result) for i, r in enumerate(runs, 1)}
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


def turn_skill(history: Iterable[Event], turn_id: str) -> str | None:
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


def last_served(history: Iterable[Event]) -> tuple[str, str, float, str] | None:
    """(turn id, skill id, time, intent) of the last turn when the cache served it."""
    turn_id: str | None = None
    run: PlanExecuted | None = None
    skill_id: str | None = None
    intent = ""
    for event in history:
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
