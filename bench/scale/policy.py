"""`PolicyModel`: a deterministic stand-in for the model while a history is recorded.

Each turn follows a `TurnPlan`: route to a skill, record fields, call some tools, complete
the skill, then answer with text. The model looks only at the request (which tools are
offered, which calls it already made this turn), so the engine's real rules decide what
happens: a tool that is not offered is skipped, a pending confirmation is approved.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from keel.llm.port import ModelRequest, ModelResponse, ToolCall


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnPlan:
    """One recorded turn: what the user says and what the model should try to do."""

    text: str
    reply: str
    route: str | None = None
    fields: Mapping[str, object] = field(default_factory=dict)
    tools: tuple[str, ...] = ()
    complete: bool = False


def _value(name: str, schema: Mapping[str, object]) -> object:
    enum = schema.get("enum")
    if isinstance(enum, list | tuple) and enum:
        return enum[0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list | tuple) else kind
    items = schema.get("items")
    if (
        kind == "array"
        and isinstance(items, Mapping)
        and isinstance(items.get("enum"), list | tuple)
    ):
        return list(items["enum"])  # e.g. complete_skill's criteria_met: every criterion
    simple: dict[object, object] = {"integer": 3, "number": 12.5, "boolean": True}
    if kind in simple:
        return simple[kind]
    return {} if kind == "object" else f"NW-{name[:3]}-1042"


def arguments(schema: Mapping[str, object]) -> dict[str, object]:
    """Values for the required arguments of a JSON schema."""
    properties = schema.get("properties")
    props = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    names = required if isinstance(required, list | tuple) else ()
    return {name: _value(name, props.get(name, {})) for name in names}


def _called_this_turn(request: ModelRequest) -> set[str]:
    last_user = max((i for i, m in enumerate(request.messages) if m["role"] == "user"), default=-1)
    called: set[str] = set()
    for message in request.messages[last_user + 1 :]:
        if message["role"] == "assistant":
            called.update(c["function"]["name"] for c in message.get("tool_calls", []))
    return called


class PolicyModel:
    """Answers each request from the current `plan` (set before every turn)."""

    def __init__(self) -> None:
        self.plan = TurnPlan(text="", reply="ok")
        self.calls = 0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        name, args = self._next(request)
        if name is None:
            return ModelResponse(text=self.plan.reply, model="policy")
        call = ToolCall(id=f"p{self.calls}", name=name, arguments=json.dumps(args))
        return ModelResponse(text=None, tool_calls=(call,), model="policy")

    def _next(self, request: ModelRequest) -> tuple[str | None, dict[str, object]]:
        offered = {t.name: t for t in request.tools}
        done = _called_this_turn(request)
        plan = self.plan
        wanted: list[tuple[str, dict[str, object]]] = [
            ("resolve_tool_confirmation", {"confirmed": True})
        ]
        if plan.route is not None and plan.route in _targets(request):
            wanted.append(("activate", {"target_id": plan.route}))
        if plan.fields:
            wanted.append(("set_fields", {"fields": dict(plan.fields)}))
        wanted += [(t, arguments(offered[t].parameters)) for t in plan.tools if t in offered]
        if plan.complete and "complete_skill" in offered:
            wanted.append(("complete_skill", arguments(offered["complete_skill"].parameters)))
        for name, args in wanted:
            if name in offered and name not in done:
                return name, args
        return None, {}


def _targets(request: ModelRequest) -> list[str]:
    """The skills `activate` offers (its description lists them after "Targets: ", on the
    first line; a second line may name the targets' fields)."""
    for tool in request.tools:
        if tool.name == "activate":
            return tool.description.split("Targets: ", 1)[-1].split("\n", 1)[0].split(", ")
    return []
