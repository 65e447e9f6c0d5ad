"""Reading the `steps:` list of an ordered block into step values.

A step's kind is the one discriminating key it carries (`STEP_KINDS`); every kind allows
only its own keys plus `id` and `next` (`additionalProperties: false`). One builder per kind
checks the kind's own keys and returns the step value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from keel.conditions import Condition
from keel.skills._condition import read_condition
from keel.skills._instructions import read_instructions
from keel.skills._next import Jump, read_next
from keel.skills.model import Token
from keel.skills.steps import (
    END_ID,
    SPECIAL_ACTIONS,
    STEP_KINDS,
    ActionStep,
    CallStep,
    CollectStep,
    EndStep,
    ExecuteToolStep,
    InstructionsStep,
    LinkStep,
    NextSpec,
    NoopStep,
    SetMemoryStep,
    Step,
    parameter_reference,
)
from keel.source.reporter import Reporter
from keel.source.suggest import did_you_mean
from keel.source.yaml import LineDict, LineList, freeze, type_name

_STEP_ID: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_\-]*")
_COMMON_KEYS: Final = frozenset({"id", "next"})
ALLOWED_KEYS: Final[dict[str, frozenset[str]]] = {
    "instructions": frozenset({"instructions", "complete_when"}),
    "collect": frozenset({"collect", "utterance", "complete_when"}),
    "action": frozenset({"action"}),
    "execute_tool": frozenset({"execute_tool", "parameters"}),
    "noop": frozenset({"noop"}),
    "set_memory": frozenset({"set_memory"}),
    "call": frozenset({"call"}),
    "link": frozenset({"link"}),
}
"""Keys each kind allows besides `id` and `next`."""


@dataclass(slots=True)
class _Reader:
    """Scratchpad for one block's steps."""

    ctx: StepContext
    steps: list[Step] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    jumps: list[Jump] = field(default_factory=list)

    @property
    def rep(self) -> Reporter:
        return self.ctx.rep

    def read(self, item: object, line: int) -> None:
        if not isinstance(item, LineDict):
            self.rep.error(
                "skill.step.bad_shape",
                line,
                f"a step must be a mapping with an `id`, got {type_name(item)}",
            )
            return
        step_id = self._step_id(item, line)
        if step_id is None:
            return
        if step_id == END_ID:
            self._check_keys(item, frozenset({"id"}), "END")
            self.steps.append(EndStep(id=END_ID, line=line))
            return
        kind = self._kind(item, line)
        if kind is None:
            return
        step = self._build(item, line, step_id, kind)
        if step is not None:
            self.steps.append(step)

    def _step_id(self, item: LineDict, line: int) -> str | None:
        value = item.get("id")
        if value is None:
            self.rep.error("skill.step.missing_id", line, "every step needs an `id:`")
            return None
        if not isinstance(value, str) or _STEP_ID.fullmatch(value) is None:
            self.rep.error(
                "skill.step.bad_id",
                item.line_of("id"),
                f"step id must be a word such as `ask_name`, got {value!r}",
                key=str(value),
            )
            return None
        if value in self.ids:
            self.rep.error(
                "skill.step.duplicate_id",
                item.line_of("id"),
                f"step id {value!r} is used twice in this block",
                key=value,
            )
            return None
        self.ids.add(value)
        return value

    def _kind(self, item: LineDict, line: int) -> str | None:
        kinds = [key for key in STEP_KINDS if key in item]
        if "utter" in item and "action" not in item:
            # `utter:` reads as an action step (Mantle behaviour); a collect beside it is lost.
            code, lost = "skill.step.utter_instead_of_action", ""
            if "collect" in item:
                code, lost = "skill.step.utter_instead_of_utterance", "; the collect is dropped"
                kinds.remove("collect")
            self.rep.warning(
                code,
                item.line_of("utter"),
                f"`utter:` makes this an action step{lost} (did you mean "
                f"`{'utterance' if lost else 'action'}:`?)",
                key="utter",
            )
            kinds.append("action")
        if len(kinds) == 1:
            return kinds[0]
        if not kinds:
            self.rep.error(
                "skill.step.unknown_kind",
                line,
                "step has no kind; give one of " + ", ".join(STEP_KINDS) + " (or id: END)",
            )
        else:
            self.rep.error(
                "skill.step.ambiguous_kind",
                line,
                f"step has several kinds ({', '.join(kinds)}); give exactly one",
            )
        return None

    def _build(self, item: LineDict, line: int, step_id: str, kind: str) -> Step | None:
        allowed = ALLOWED_KEYS[kind]
        if kind == "action" and "action" not in item:
            allowed = allowed | {"utter", "collect", "utterance"}
        if kind == "link":
            allowed = allowed | {"next"}
            if "next" in item:
                self.rep.warning(
                    "skill.step.next_on_link",
                    item.line_of("next"),
                    "`next` on a link step is ignored (control never returns)",
                    key="next",
                )
        self._check_keys(item, allowed | _COMMON_KEYS, kind)
        next_spec, jumps = (None, []) if kind == "link" else read_next(item, self.rep)
        self.jumps.extend(jumps)
        if kind == "noop" and next_spec is None and "next" not in item:
            self.rep.error(
                "skill.step.noop_without_next",
                line,
                "a noop step only routes: give it a `next:`",
                key=step_id,
            )
        common = Common(id=step_id, line=line, next=next_spec)
        return BUILDERS[kind](item, common, self.ctx)

    def _check_keys(self, item: LineDict, allowed: frozenset[str], kind: str) -> None:
        for key in item:
            if key not in allowed:
                self.rep.error(
                    "skill.step.unknown_key",
                    item.line_of(key),
                    f"key {key!r} is not allowed on a {kind} step"
                    + did_you_mean(str(key), allowed),
                    key=str(key),
                )


def read_steps(
    raw: LineList, rep: Reporter, raw_lines: Sequence[str]
) -> tuple[tuple[Step, ...], tuple[Token, ...]]:
    """The steps of a block and the tokens found in their instructions."""
    reader = _Reader(ctx=StepContext(rep=rep, raw_lines=raw_lines))
    for index, item in enumerate(raw):
        reader.read(item, raw.line_of(index))
    for jump in reader.jumps:
        if jump.target != END_ID and jump.target not in reader.ids:
            rep.error(
                "skill.step.unknown_next",
                jump.line,
                f"next target {jump.target!r} is not a step of this block (or END)"
                + did_you_mean(jump.target, [*reader.ids, END_ID]),
                key=jump.target,
            )
    return tuple(reader.steps), tuple(reader.ctx.tokens)


# The builders, one per step kind.

_IDENT: Final = r"[A-Za-z_][A-Za-z0-9_]*"
_ENTRY: Final = re.compile(_IDENT)
_QUALIFIED_ENTRY: Final = re.compile(rf"{_IDENT}(?:\.{_IDENT}){{0,2}}")
_NAME: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")


@dataclass(frozen=True, kw_only=True, slots=True)
class Common:
    """The fields every step shares, already read."""

    id: str
    line: int
    next: NextSpec | None


@dataclass(slots=True)
class StepContext:
    """What builders need besides the step: the reporter, the file's lines, found tokens."""

    rep: Reporter
    raw_lines: Sequence[str]
    tokens: list[Token] = field(default_factory=list)


def _bad_value(ctx: StepContext, item: LineDict, key: str, expected: str) -> None:
    ctx.rep.error(
        "skill.step.bad_value",
        item.line_of(key),
        f"`{key}` must be {expected}, got {type_name(item.get(key))} {item.get(key)!r}",
        key=key,
    )


def _name(item: LineDict, key: str, ctx: StepContext, pattern: re.Pattern[str]) -> str | None:
    value = item.get(key)
    if isinstance(value, str) and pattern.fullmatch(value.strip()):
        return value.strip()
    _bad_value(ctx, item, key, "a name")
    return None


def _complete_when(item: LineDict, ctx: StepContext) -> Condition | None:
    value = item.get("complete_when")
    if value is None:
        return None
    return read_condition(ctx.rep, value, item.line_of("complete_when"), where="step complete_when")


def _instructions(item: LineDict, c: Common, ctx: StepContext) -> Step | None:
    text = item["instructions"]
    if not isinstance(text, str) or not text.strip():
        _bad_value(ctx, item, "instructions", "non-empty text")
        return None
    found = read_instructions(text, ctx.raw_lines, item.line_of("instructions"), ctx.rep)
    ctx.tokens.extend(found.tokens)
    return InstructionsStep(
        id=c.id,
        line=c.line,
        next=c.next,
        instructions=text.strip(),
        complete_when=_complete_when(item, ctx),
        parts=found.parts,
    )


def _collect(item: LineDict, c: Common, ctx: StepContext) -> Step | None:
    entry = _name(item, "collect", ctx, _ENTRY)
    utterance = item.get("utterance")
    if utterance is not None and not (isinstance(utterance, str) and utterance.strip()):
        _bad_value(ctx, item, "utterance", "a response name")
        return None
    if entry is None:
        return None
    return CollectStep(
        id=c.id,
        line=c.line,
        next=c.next,
        entry=entry,
        utterance=utterance.strip() if isinstance(utterance, str) else None,
        complete_when=_complete_when(item, ctx),
    )


def _action(item: LineDict, c: Common, ctx: StepContext) -> Step | None:
    key = "action" if "action" in item else "utter"
    value = item[key]
    name = value.strip() if isinstance(value, str) else ""
    if name in SPECIAL_ACTIONS or (name.startswith("utter_") and len(name) > len("utter_")):
        return ActionStep(id=c.id, line=c.line, next=c.next, action=name)
    ctx.rep.error(
        "skill.step.bad_action",
        item.line_of(key),
        f"action {value!r} is neither a utter_* response nor action_listen / hangup",
        key=str(value),
    )
    return None


def _execute_tool(item: LineDict, c: Common, ctx: StepContext) -> Step | None:
    tool = _name(item, "execute_tool", ctx, _NAME)
    parameters = item.get("parameters")
    if parameters is not None and not (
        isinstance(parameters, LineDict) and all(isinstance(k, str) for k in parameters)
    ):
        _bad_value(ctx, item, "parameters", "a mapping of argument name -> value")
        return None
    if tool is None:
        return None
    values: dict[str, object] = {}
    if isinstance(parameters, LineDict):
        values = {k: _parameter(k, v, parameters, ctx) for k, v in parameters.items()}
    return ExecuteToolStep(
        id=c.id, line=c.line, next=c.next, tool=tool, parameters=MappingProxyType(values)
    )


def _parameter(name: str, value: object, parameters: LineDict, ctx: StepContext) -> object:
    """The frozen value; a string that starts like a memory reference must be one."""
    if not isinstance(value, str):
        return freeze(value)
    if value.strip().startswith("session.") and parameter_reference(value) is None:
        ctx.rep.error(
            "skill.step.bad_parameter_reference",
            parameters.line_of(name),
            f"parameter {name!r} = {value!r} looks like a memory reference but is not "
            "session.<namespace>.<entry>",
            key=name,
        )
    return value


def _noop(item: LineDict, c: Common, ctx: StepContext) -> Step | None:
    if item["noop"] is not True:
        _bad_value(ctx, item, "noop", "true")
        return None
    return NoopStep(id=c.id, line=c.line, next=c.next)


def _set_memory(item: LineDict, c: Common, ctx: StepContext) -> Step | None:
    values = item["set_memory"]
    if not isinstance(values, LineDict) or not values:
        _bad_value(ctx, item, "set_memory", "a non-empty mapping of entry -> value")
        return None
    bad = [k for k in values if not (isinstance(k, str) and _QUALIFIED_ENTRY.fullmatch(k))]
    if bad:
        ctx.rep.error(
            "skill.step.bad_value",
            values.line_of(bad[0]),
            f"set_memory key {bad[0]!r} is not a memory entry name",
            key=str(bad[0]),
        )
        return None
    frozen = MappingProxyType({str(k): freeze(v) for k, v in values.items()})
    return SetMemoryStep(id=c.id, line=c.line, next=c.next, values=frozen)


def _call(item: LineDict, c: Common, ctx: StepContext) -> Step | None:
    target = _name(item, "call", ctx, _NAME)
    return None if target is None else CallStep(id=c.id, line=c.line, next=c.next, target=target)


def _link(item: LineDict, c: Common, ctx: StepContext) -> Step | None:
    target = _name(item, "link", ctx, _NAME)
    return None if target is None else LinkStep(id=c.id, line=c.line, target=target)


BUILDERS: Final[Mapping[str, Callable[[LineDict, Common, StepContext], Step | None]]] = (
    MappingProxyType(
        {
            "instructions": _instructions,
            "collect": _collect,
            "action": _action,
            "execute_tool": _execute_tool,
            "noop": _noop,
            "set_memory": _set_memory,
            "call": _call,
            "link": _link,
        }
    )
)
"""Discriminating key -> builder; the keys are those of `STEP_KINDS`."""
