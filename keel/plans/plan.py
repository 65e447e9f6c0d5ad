"""The canonical plan format, `plan/1` (plan-cache spec §3.3): parse, print, shape hash.

    {"schema": "plan/1",
     "steps": [{"id": 1, "tool": "find_orders", "args": {"user": "${SLOT:user}"}},
               {"id": 2, "tool": "cancel_order", "args": {"order_id": "${step1.entries.0.id}"},
                "when": {"nonempty": 1}},
               {"id": 3, "tool": "final_answer", "args": {}}],
     "slots": {"user": {"type": "email", "binding": "request", "required": true}},
     "fillers": {}, "final_message": "Cancelled ${step2.order_id}.", "meta": {}}

A plan is a value: steps are never changed in place (the executor resolves a copy), so a
cached plan cannot be contaminated by the data of one run. `parse_plan` accepts Metnos-style
plans too (no `schema`, no ids, `if_prev_entries_nonempty`, `${steps.N.x}`, `{{stepN.x}}`)
and normalises them once; it never raises: what cannot be read comes back as `PlanError`s
whose text is a repair hint for the proposer. Pure.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Final

from keel.plans.refs import normalise_legacy
from keel.tools.frozen import freeze_json, thaw_json

SCHEMA: Final = "plan/1"
FINAL_ANSWER: Final = "final_answer"
"""The virtual last step: render the final message and stop."""
STEP_CAP: Final = 12
"""Steps a proposed plan may have (runtime-built plans may raise it, never the proposer)."""

_EMPTY: Final[Mapping[str, object]] = MappingProxyType({})


@dataclass(frozen=True, kw_only=True, slots=True)
class PlanError:
    """One problem with a plan; `message` is written to be sent back to the proposer."""

    code: str
    message: str
    step: int | None = None
    argument: str | None = None

    def hint(self) -> str:
        """The repair hint: where and what."""
        where = f"step {self.step}" if self.step is not None else "plan"
        if self.argument is not None:
            where += f", argument {self.argument!r}"
        return f"{where}: {self.message} [{self.code}]"


@dataclass(frozen=True, kw_only=True, slots=True)
class Step:
    """One step: a tool and its argument template."""

    id: int
    """1-based position (renumber through `Plan.renumbered`)."""
    tool: str
    args: Mapping[str, object] = field(default_factory=lambda: _EMPTY)
    """Deep read-only JSON; strings may hold refs (`keel.plans.refs`)."""
    when_nonempty: int | None = None
    """Run only when step `when_nonempty` produced a non-empty result."""

    def plain_args(self) -> dict[str, object]:
        """A fresh mutable copy of the arguments."""
        thawed: dict[str, object] = thaw_json(self.args)
        return thawed


@dataclass(frozen=True, kw_only=True, slots=True)
class Slot:
    """A value the slot binder takes from the request (§3.6)."""

    type: str
    """Slot type: `number`, `email`, `date`, `path`, `glob`, `id`, `text`, `enum:a|b`, ..."""
    binding: str = "request"
    required: bool = True
    source: str | None = None
    """The span of the recorded request the value came from (for audit and alignment)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Filler:
    """A short text the fast model writes at execution time (cached per request)."""

    prompt: str
    default: str = ""
    tier: str = "router"


@dataclass(frozen=True, kw_only=True, slots=True)
class Plan:
    """A parsed, normalised plan."""

    steps: tuple[Step, ...]
    slots: Mapping[str, Slot] = field(default_factory=lambda: MappingProxyType({}))
    fillers: Mapping[str, Filler] = field(default_factory=lambda: MappingProxyType({}))
    final_message: str = ""
    meta: Mapping[str, object] = field(default_factory=lambda: _EMPTY)

    @property
    def tool_steps(self) -> tuple[Step, ...]:
        """The steps that call a tool (not `final_answer`)."""
        return tuple(s for s in self.steps if s.tool != FINAL_ANSWER)

    @property
    def tools(self) -> tuple[str, ...]:
        """The distinct tools the plan calls, sorted."""
        return tuple(sorted({s.tool for s in self.tool_steps}))

    def renumbered(self, steps: tuple[Step, ...]) -> Plan:
        """The plan with `steps`, ids set to their positions (refs are the caller's job)."""
        return replace(self, steps=tuple(replace(s, id=i) for i, s in enumerate(steps, 1)))

    def to_json(self) -> dict[str, object]:
        """The canonical JSON form (what is stored and shown)."""
        steps: list[dict[str, object]] = []
        for step in self.steps:
            item: dict[str, object] = {"id": step.id, "tool": step.tool, "args": step.plain_args()}
            if step.when_nonempty is not None:
                item["when"] = {"nonempty": step.when_nonempty}
            steps.append(item)
        return {
            "schema": SCHEMA,
            "steps": steps,
            "slots": {n: _slot_json(s) for n, s in self.slots.items()},
            "fillers": {
                n: {"prompt": f.prompt, "default": f.default, "tier": f.tier}
                for n, f in self.fillers.items()
            },
            "final_message": self.final_message,
            "meta": thaw_json(self.meta),
        }

    def dumps(self) -> str:
        """`to_json` as compact, key-sorted text."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))


def shape_hash(plan: Plan) -> str:
    """16 hex of SHA-256 over each step's tool and sorted argument names, and the final
    message: plans that differ only in argument values share a shape."""
    shape = {
        "steps": [{"tool": s.tool, "keys": sorted(s.args)} for s in plan.steps],
        "final_message": plan.final_message,
    }
    return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()[:16]


def describe_shape(plan: Plan) -> str:
    """`tool(keys) -> tool(keys)`, how an excluded shape is shown to the proposer."""
    return " -> ".join(f"{s.tool}({', '.join(sorted(s.args))})" for s in plan.tool_steps)


def parse_plan(data: object) -> tuple[Plan | None, tuple[PlanError, ...]]:
    """A plan from JSON text or a decoded object; the plan is None when errors stop it."""
    if isinstance(data, str | bytes):
        try:
            data = json.loads(data)
        except ValueError as exc:
            return None, (PlanError(code="plan.not_json", message=f"not JSON: {exc}"),)
    if not isinstance(data, Mapping):
        return None, (PlanError(code="plan.shape", message="a plan is a JSON object"),)
    errors: list[PlanError] = []
    schema = data.get("schema", SCHEMA)
    if schema != SCHEMA:
        errors.append(PlanError(code="plan.schema", message=f"schema must be {SCHEMA!r}"))
    steps = _steps(data.get("steps"), errors)
    slots = _named(data.get("slots"), "slots", _slot, errors)
    fillers = _named(data.get("fillers"), "fillers", _filler, errors)
    final = data.get("final_message", "")
    if not isinstance(final, str):
        errors.append(PlanError(code="plan.shape", message="final_message must be a string"))
        final = ""
    meta = data.get("meta", {})
    if errors:
        return None, tuple(errors)
    plan = Plan(
        steps=steps,
        slots=MappingProxyType({n: v for n, v in slots.items() if isinstance(v, Slot)}),
        fillers=MappingProxyType({n: v for n, v in fillers.items() if isinstance(v, Filler)}),
        final_message=normalise_legacy(final),
        meta=freeze_json(meta if isinstance(meta, Mapping) else {}),  # type: ignore[arg-type]
    )
    return plan, ()


def _steps(raw: object, errors: list[PlanError]) -> tuple[Step, ...]:
    if not isinstance(raw, list | tuple) or not raw:
        errors.append(PlanError(code="plan.shape", message="steps must be a non-empty list"))
        return ()
    steps: list[Step] = []
    for position, item in enumerate(raw, 1):
        if not isinstance(item, Mapping):
            errors.append(
                PlanError(code="plan.shape", step=position, message="a step is an object")
            )
            continue
        tool = item.get("tool")
        args = item.get("args", {})
        if not isinstance(tool, str) or not tool:
            errors.append(
                PlanError(code="plan.shape", step=position, message="tool must be a name")
            )
            continue
        if not isinstance(args, Mapping):
            errors.append(
                PlanError(code="plan.shape", step=position, message="args must be an object")
            )
            continue
        steps.append(
            Step(
                id=position,
                tool=tool,
                args=freeze_json(_legacy(dict(args))),  # type: ignore[arg-type]
                when_nonempty=_when(item, position, errors),
            )
        )
    if steps and steps[-1].tool != FINAL_ANSWER:
        steps.append(Step(id=len(steps) + 1, tool=FINAL_ANSWER))
    return tuple(steps)


def _when(item: Mapping[str, object], position: int, errors: list[PlanError]) -> int | None:
    when = item.get("when")
    if when is None:
        return (
            position - 1 if item.get("if_prev_entries_nonempty") is True and position > 1 else None
        )
    target = when.get("nonempty") if isinstance(when, Mapping) else None
    if isinstance(target, str) and target.isdigit():
        target = int(target)
    if not isinstance(target, int) or isinstance(target, bool):
        errors.append(
            PlanError(
                code="plan.when_invalid",
                step=position,
                message='when must be {"nonempty": <step id>}',
            )
        )
        return None
    return target


def _legacy(value: object) -> object:
    if isinstance(value, str):
        return normalise_legacy(value)
    if isinstance(value, Mapping):
        return {k: _legacy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_legacy(v) for v in value]
    return value


def _named(raw: object, what: str, read: object, errors: list[PlanError]) -> dict[str, object]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        errors.append(PlanError(code="plan.shape", message=f"{what} must be an object"))
        return {}
    out: dict[str, object] = {}
    for name, body in raw.items():
        value = read(body) if callable(read) else None
        if value is None:
            errors.append(PlanError(code="plan.shape", message=f"{what}.{name} is malformed"))
        else:
            out[str(name)] = value
    return out


def _slot(body: object) -> Slot | None:
    if not isinstance(body, Mapping) or not isinstance(body.get("type"), str):
        return None
    source = body.get("source")
    return Slot(
        type=str(body["type"]),
        binding=str(body.get("binding", "request")),
        required=bool(body.get("required", True)),
        source=source if isinstance(source, str) else None,
    )


def _filler(body: object) -> Filler | None:
    if not isinstance(body, Mapping) or not isinstance(body.get("prompt"), str):
        return None
    return Filler(
        prompt=str(body["prompt"]),
        default=str(body.get("default", "")),
        tier=str(body.get("tier", "router")),
    )


def _slot_json(slot: Slot) -> dict[str, object]:
    out: dict[str, object] = {"type": slot.type, "binding": slot.binding, "required": slot.required}
    if slot.source is not None:
        out["source"] = slot.source
    return out
