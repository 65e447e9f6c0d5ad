"""Reading the `steps:` list of an ordered block into step values.

A step's kind is the one discriminating key it carries (`STEP_KINDS`); every kind allows
only its own keys plus `id` and `next` (`additionalProperties: false`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from keel.skills._next import Jump, read_next
from keel.skills._step_kinds import BUILDERS, Common, StepContext
from keel.skills.model import Token
from keel.skills.steps import END_ID, STEP_KINDS, EndStep, Step
from keel.source.reporter import Reporter
from keel.source.yaml import LineDict, LineList, type_name

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
                self.rep.error(
                    "skill.step.next_on_link",
                    item.line_of("next"),
                    "`next` is meaningless on a link step (control never returns)",
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
                    f"key {key!r} is not allowed on a {kind} step",
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
                f"next target {jump.target!r} is not a step of this block (or END)",
                key=jump.target,
            )
    return tuple(reader.steps), tuple(reader.ctx.tokens)
