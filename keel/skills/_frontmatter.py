"""Frontmatter fields of a skill.md: the scalar and mapping ones, and `utter`; the tool keys
(`import_tools`, `tool_constraints`) are read by `keel.skills._tool_keys`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from keel.conditions import Condition
from keel.skills._condition import read_condition
from keel.skills._tool_keys import read_import_tools, read_tool_constraints, single_key
from keel.skills.model import (
    CompleteWhen,
    ImportTool,
    Routing,
    ToolConstraint,
    UtterTrigger,
)
from keel.source.reporter import Reporter
from keel.source.suggest import did_you_mean
from keel.source.yaml import LineDict, LineList, type_name

KNOWN_KEYS = frozenset(
    {
        "name",
        "description",
        "requires",
        "complete_when",
        "import_tools",
        "tool_constraints",
        "utter",
        "disabled",
        "routing",
        "tier",
        "max_turns",
        "examples",
        "planner",
        "plan_cache",
        "history",
    }
)
_ROUTING_KEYS = frozenset({"engine_managed", "hidden"})
_COMPLETE_WHEN_KEYS = frozenset({"condition", "criteria"})


@dataclass(frozen=True, kw_only=True, slots=True)
class Frontmatter:
    """The frontmatter part of a `SkillDocument`."""

    name: str
    description: str
    requires: Condition | None
    complete_when: CompleteWhen | None
    import_tools: tuple[ImportTool, ...]
    tool_constraints: tuple[ToolConstraint, ...]
    utter: tuple[UtterTrigger, ...]
    disabled: bool
    routing: Routing
    tier: str | None
    max_turns: int | None
    examples: tuple[str, ...]
    planner: bool
    plan_cache: bool
    history_tool_results: bool | None
    key_lines: Mapping[str, int]


def read_frontmatter(data: LineDict, rep: Reporter) -> Frontmatter:
    """Read every known field of a frontmatter mapping; unknown keys only warn."""
    for key in data:
        if key not in KNOWN_KEYS:
            rep.warning(
                "skill.frontmatter.unknown_key",
                data.line_of(key),
                f"unknown frontmatter key {key!r} is ignored" + did_you_mean(str(key), KNOWN_KEYS),
                key=str(key),
            )
    return Frontmatter(
        name=_label(data, "name", rep),
        description=_label(data, "description", rep),
        requires=_requires(data, rep),
        complete_when=_complete_when(data, rep),
        import_tools=read_import_tools(data, rep),
        tool_constraints=read_tool_constraints(data, rep),
        utter=read_utter(data, rep),
        disabled=_flag(data, "disabled", rep),
        routing=_routing(data, rep),
        tier=_tier(data, rep),
        max_turns=_max_turns(data, rep),
        examples=_examples(data, rep),
        planner=_flag(data, "planner", rep),
        plan_cache=data.get("plan_cache") is None or _flag(data, "plan_cache", rep),
        history_tool_results=_history(data, rep),
        key_lines=MappingProxyType({k: data.line_of(k) for k in data if isinstance(k, str)}),
    )


def _label(data: LineDict, key: str, rep: Reporter) -> str:
    """`name` / `description`: required, non-empty strings."""
    value = data.get(key)
    if isinstance(value, str) and value.strip():
        return value.strip()
    if value is None or isinstance(value, str):
        rep.error(
            f"skill.frontmatter.missing_{key}",
            data.line_of(key),
            f"frontmatter needs a non-empty `{key}:`",
            key=key,
        )
    else:
        rep.error(
            "skill.frontmatter.bad_type",
            data.line_of(key),
            f"`{key}` must be a string, got {type_name(value)}",
            key=key,
        )
    return ""


def _requires(data: LineDict, rep: Reporter) -> Condition | None:
    value = data.get("requires")
    if value is None:
        return None
    if not isinstance(value, str):
        rep.error(
            "skill.frontmatter.requires_not_string",
            data.line_of("requires"),
            f"`requires` must be a condition string, not a {type_name(value)}; "
            'write e.g. requires: "session.project.verified"',
            key="requires",
        )
        return None
    return read_condition(rep, value, data.line_of("requires"), where="requires", key="requires")


def _complete_when(data: LineDict, rep: Reporter) -> CompleteWhen | None:
    if "complete_when" not in data:
        return None
    value = data["complete_when"]
    line = data.line_of("complete_when")
    if isinstance(value, str):
        # Older builds accepted a bare condition string; it means `condition:`.
        condition = read_condition(rep, value, line, where="complete_when", key="complete_when")
        return CompleteWhen(condition=condition, line=line)
    if not isinstance(value, LineDict):
        rep.error(
            "skill.frontmatter.bad_type",
            line,
            f"`complete_when` must be a mapping with `condition` and/or `criteria`, "
            f"got {type_name(value)}",
            key="complete_when",
        )
        return None
    for key in value:
        if key not in _COMPLETE_WHEN_KEYS:
            rep.error(
                "skill.complete_when.unknown_key",
                value.line_of(key),
                f"unknown key {key!r} in complete_when (allowed: condition, criteria)",
                key=str(key),
            )
    condition = None
    if value.get("condition") is not None:
        condition = read_condition(
            rep, value["condition"], value.line_of("condition"), where="complete_when.condition"
        )
    return CompleteWhen(condition=condition, criteria=_criteria(value, rep), line=line)


def _criteria(value: LineDict, rep: Reporter) -> tuple[str, ...]:
    raw = value.get("criteria")
    if raw is None:
        return ()
    if not isinstance(raw, LineList):
        rep.error(
            "skill.frontmatter.bad_type",
            value.line_of("criteria"),
            f"`complete_when.criteria` must be a list of strings, got {type_name(raw)}",
            key="criteria",
        )
        return ()
    criteria: list[str] = []
    for index, item in enumerate(raw):
        if not isinstance(item, str) or not item.strip():
            rep.error(
                "skill.frontmatter.bad_type",
                raw.line_of(index),
                "each `complete_when.criteria` item must be a non-empty string",
                key="criteria",
            )
        elif item.strip() in criteria:
            rep.error(
                "skill.complete_when.duplicate_criteria",
                raw.line_of(index),
                f"criterion {item.strip()!r} is listed twice",
                key="criteria",
            )
        else:
            criteria.append(item.strip())
    return tuple(criteria)


def _flag(data: LineDict, key: str, rep: Reporter) -> bool:
    value = data.get(key, False)
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    rep.error(
        "skill.frontmatter.bad_type",
        data.line_of(key),
        f"`{key}` must be true or false, got {type_name(value)} {value!r}",
        key=key,
    )
    return False


def _routing(data: LineDict, rep: Reporter) -> Routing:
    value = data.get("routing")
    if value is None:
        return Routing()
    if not isinstance(value, LineDict):
        rep.error(
            "skill.frontmatter.bad_type",
            data.line_of("routing"),
            f"`routing` must be a mapping, got {type_name(value)}",
            key="routing",
        )
        return Routing()
    for key in value:
        if key not in _ROUTING_KEYS:
            rep.warning(
                "skill.frontmatter.unknown_key",
                value.line_of(key),
                f"unknown routing key {key!r} is ignored (known: engine_managed, hidden)"
                + did_you_mean(str(key), _ROUTING_KEYS),
                key=str(key),
            )
    return Routing(
        engine_managed=_flag(value, "engine_managed", rep), hidden=_flag(value, "hidden", rep)
    )


def _history(data: LineDict, rep: Reporter) -> bool | None:
    """`history: {tool_results: true|false}`; None when not set (the agent's, or the default)."""
    value = data.get("history")
    if value is None:
        return None
    if not isinstance(value, LineDict):
        rep.error(
            "skill.frontmatter.bad_type",
            data.line_of("history"),
            f"`history` must be a mapping, got {type_name(value)}",
            key="history",
        )
        return None
    for key in value:
        if key != "tool_results":
            rep.warning(
                "skill.frontmatter.unknown_key",
                value.line_of(key),
                f"unknown history key {key!r} is ignored (known: tool_results)"
                + did_you_mean(str(key), ["tool_results"]),
                key=str(key),
            )
    return None if value.get("tool_results") is None else _flag(value, "tool_results", rep)


def _tier(data: LineDict, rep: Reporter) -> str | None:
    value = data.get("tier")
    if value is None:
        return None
    if isinstance(value, str) and value.strip():
        return value.strip()
    rep.error(
        "skill.frontmatter.bad_type",
        data.line_of("tier"),
        f"`tier` must be a tier name, got {type_name(value)} {value!r}",
        key="tier",
    )
    return None


def _max_turns(data: LineDict, rep: Reporter) -> int | None:
    value = data.get("max_turns")
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    rep.error(
        "skill.frontmatter.bad_type",
        data.line_of("max_turns"),
        f"`max_turns` must be a positive integer, got {value!r}",
        key="max_turns",
    )
    return None


def _examples(data: LineDict, rep: Reporter) -> tuple[str, ...]:
    value = data.get("examples")
    if value is None:
        return ()
    if not isinstance(value, LineList):
        rep.error(
            "skill.frontmatter.bad_type",
            data.line_of("examples"),
            f"`examples` must be a list of strings, got {type_name(value)}",
            key="examples",
        )
        return ()
    examples: list[str] = []
    for index, item in enumerate(value):
        if isinstance(item, str) and item.strip():
            examples.append(item.strip())
        else:
            rep.error(
                "skill.frontmatter.bad_type",
                value.line_of(index),
                f"each example must be a non-empty string, got {item!r}",
                key="examples",
            )
    return tuple(examples)


# `utter`: responses sent when the skill activates or a condition rises.


def read_utter(data: LineDict, rep: Reporter) -> tuple[UtterTrigger, ...]:
    """`utter`: `- utter_x: {on: activate}` or `- utter_x: {when: <condition>}`."""
    raw = data.get("utter")
    if raw is None:
        return ()
    if not isinstance(raw, LineList):
        rep.error(
            "skill.utter.bad_trigger",
            data.line_of("utter"),
            f"`utter` must be a list of `- <response>: {{on|when: ...}}`, got {type_name(raw)}",
            key="utter",
        )
        return ()
    triggers = (_trigger(item, raw.line_of(i), rep) for i, item in enumerate(raw))
    return tuple(t for t in triggers if t is not None)


def _trigger(item: object, line: int, rep: Reporter) -> UtterTrigger | None:
    single = single_key(item)
    body = single[1] if single is not None else None
    if single is None or not isinstance(body, LineDict):
        rep.error(
            "skill.utter.bad_trigger",
            line,
            "each utter item must be `- <response>: {on: activate}` or "
            "`- <response>: {when: <condition>}`",
            key="utter",
        )
        return None
    response, _, line = single
    # YAML 1.1 reads a bare `on` key as the boolean true.
    keys = {("on" if k is True else k): k for k in body}
    unknown = [str(k) for k in keys if k not in ("on", "when")]
    if unknown or len(keys) != 1:
        why = f"unknown key(s) {unknown}" if unknown else "give exactly one of `on` / `when`"
        rep.error("skill.utter.bad_trigger", line, f"utter {response!r}: {why}", key=response)
        return None
    if "on" in keys:
        if body[keys["on"]] != "activate":
            rep.error(
                "skill.utter.bad_trigger",
                body.line_of(keys["on"]),
                f"utter {response!r}: `on` only accepts `activate`, got {body[keys['on']]!r}",
                key=response,
            )
            return None
        return UtterTrigger(response=response, on="activate", line=line)
    when = read_condition(rep, body["when"], body.line_of("when"), where=f"utter {response}.when")
    if when is None:
        return None
    return UtterTrigger(response=response, when=when, line=line)
