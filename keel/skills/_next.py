"""A step's `next:`: a step id, or `- if:`/`then:` branches ending with `- else:`."""

from __future__ import annotations

from dataclasses import dataclass

from keel.skills._condition import read_condition
from keel.skills.steps import Branch, NextSpec
from keel.source.reporter import Reporter
from keel.source.yaml import LineDict, LineList, type_name


@dataclass(frozen=True, kw_only=True, slots=True)
class Jump:
    """A step id named by `next:`, checked against the block once all steps are read."""

    target: str
    line: int


def read_next(item: LineDict, rep: Reporter) -> tuple[NextSpec | None, list[Jump]]:
    """The step's `next:` (None when absent) and every target it names."""
    if "next" not in item:
        return None, []
    value = item["next"]
    line = item.line_of("next")
    if isinstance(value, str) and value.strip():
        return value.strip(), [Jump(target=value.strip(), line=line)]
    if isinstance(value, LineList) and value:
        branches = [_branch(value, i, rep) for i in range(len(value))]
        good = tuple(b for b in branches if b is not None)
        return good, [Jump(target=b.target, line=b.line) for b in good]
    rep.error(
        "skill.step.bad_next",
        line,
        f"`next` must be a step id or a non-empty list of branches, got {type_name(value)}",
        key="next",
    )
    return None, []


def _branch(branches: LineList, index: int, rep: Reporter) -> Branch | None:
    item = branches[index]
    line = branches.line_of(index)
    keys = set(item) if isinstance(item, LineDict) else None
    if keys == {"else"}:
        assert isinstance(item, LineDict)
        if index != len(branches) - 1:
            rep.error(
                "skill.step.else_not_last",
                line,
                "`- else:` must be the last branch of `next` (branches after it never run)",
                key="else",
            )
        target = _target(item, "else", rep)
        return None if target is None else Branch(condition=None, target=target, line=line)
    if keys == {"if", "then"}:
        assert isinstance(item, LineDict)
        condition = read_condition(rep, item["if"], item.line_of("if"), where="next if:")
        target = _target(item, "then", rep)
        if condition is None or target is None:
            return None
        return Branch(condition=condition, target=target, line=line)
    rep.error(
        "skill.step.bad_next",
        line,
        "each `next` branch is `- if: <condition>` with `then: <step_id>`, or `- else: <step_id>`",
        key="next",
    )
    return None


def _target(item: LineDict, key: str, rep: Reporter) -> str | None:
    value = item[key]
    if isinstance(value, str) and value.strip():
        return value.strip()
    rep.error(
        "skill.step.bad_next",
        item.line_of(key),
        f"`{key}:` must name a step id, got {value!r}",
        key=key,
    )
    return None
