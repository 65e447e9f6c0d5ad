"""The tool keys of a skill's frontmatter: `import_tools` (bare and `mcp/<server>:<tool>`
names) and `tool_constraints` (`requires`, confirmations, `on_success`/`on_failure`, and the
plan-contract keys)."""

from __future__ import annotations

import re

from keel.conditions import Condition
from keel.skills._condition import read_condition
from keel.skills._constraint_contract import CONTRACT_KEY_SET, read_contract
from keel.skills.model import (
    Confirmation,
    ImportTool,
    ToolConstraint,
)
from keel.source.reporter import Reporter
from keel.source.yaml import LineDict, LineList, type_name

_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.\-]*"
_BARE_TOOL = re.compile(_NAME)
_MCP_TOOL = re.compile(rf"mcp/(?P<server>{_NAME}):(?P<tool>{_NAME})")
_CONSTRAINT_KEYS = (
    frozenset({"requires", "requires_confirmation", "on_success", "on_failure"}) | CONTRACT_KEY_SET
)
_CONFIRMATION_KEYS = frozenset({"enabled", "utter_for_confirmation", "utter_on_user_denial"})


def read_import_tools(data: LineDict, rep: Reporter) -> tuple[ImportTool, ...]:
    """`import_tools`: bare shared-tool names and `mcp/<server>:<tool>` entries."""
    raw = data.get("import_tools")
    if raw is None:
        return ()
    if not isinstance(raw, LineList):
        rep.error(
            "skill.import_tools.bad_entry",
            data.line_of("import_tools"),
            f"`import_tools` must be a list of tool names, got {type_name(raw)}",
            key="import_tools",
        )
        return ()
    tools: list[ImportTool] = []
    for index, item in enumerate(raw):
        line = raw.line_of(index)
        entry = _import_entry(item, line)
        if entry is None:
            rep.error(
                "skill.import_tools.bad_entry",
                line,
                f"bad import_tools entry {item!r}: write a tool name or mcp/<server>:<tool>",
                key="import_tools",
            )
        elif any(t.name == entry.name for t in tools):
            rep.warning(
                "skill.import_tools.duplicate",
                line,
                f"tool {entry.name!r} is imported twice",
                key=entry.name,
            )
        else:
            tools.append(entry)
    return tuple(tools)


def _import_entry(item: object, line: int) -> ImportTool | None:
    if not isinstance(item, str):
        return None
    text = item.strip()
    mcp = _MCP_TOOL.fullmatch(text)
    if mcp is not None:
        tool = mcp.group("tool")
        return ImportTool(name=tool, line=line, mcp_server=mcp.group("server"), mcp_tool=tool)
    if text.startswith("mcp/") or _BARE_TOOL.fullmatch(text) is None:
        return None
    return ImportTool(name=text, line=line)


def read_tool_constraints(data: LineDict, rep: Reporter) -> tuple[ToolConstraint, ...]:
    """`tool_constraints`: a list of single-key maps `- <tool>: {...}`."""
    raw = data.get("tool_constraints")
    if raw is None:
        return ()
    if not isinstance(raw, LineList):
        rep.error(
            "skill.tool_constraints.bad_shape",
            data.line_of("tool_constraints"),
            f"`tool_constraints` must be a list of `- <tool>: {{...}}` items, got {type_name(raw)}",
            key="tool_constraints",
        )
        return ()
    constraints: list[ToolConstraint] = []
    for index, item in enumerate(raw):
        constraint = _constraint(item, raw.line_of(index), rep)
        if constraint is None:
            continue
        if any(c.tool == constraint.tool for c in constraints):
            rep.error(
                "skill.tool_constraints.duplicate_tool",
                constraint.line,
                f"tool {constraint.tool!r} has two tool_constraints entries; merge them",
                key=constraint.tool,
            )
            continue
        constraints.append(constraint)
    return tuple(constraints)


def _constraint(item: object, line: int, rep: Reporter) -> ToolConstraint | None:
    single = single_key(item)
    body = single[1] if single is not None else None
    if single is None or not (body is None or isinstance(body, LineDict)):
        rep.error(
            "skill.tool_constraints.bad_shape",
            line,
            "each tool_constraints item must be a single-key map `- <tool>: {requires: ...}`",
            key="tool_constraints",
        )
        return None
    tool, _, line = single
    if not isinstance(body, LineDict):
        return ToolConstraint(tool=tool, line=line)
    for key in body:
        if key not in _CONSTRAINT_KEYS:
            hint = " (legacy; use requires_confirmation)" if key == "ask_confirmation" else ""
            rep.error(
                "skill.tool_constraints.unknown_key",
                body.line_of(key),
                f"unknown key {key!r} under tool_constraints.{tool}{hint}",
                key=str(key),
            )
    return ToolConstraint(
        tool=tool,
        line=line,
        requires=_constraint_requires(tool, body, rep),
        requires_confirmation=_confirmation(tool, body, rep),
        on_success=_response_name(body, "on_success", tool, rep),
        on_failure=_response_name(body, "on_failure", tool, rep),
        contract=read_contract(tool, body, rep),
    )


def _constraint_requires(tool: str, body: LineDict, rep: Reporter) -> Condition | None:
    value = body.get("requires")
    if value is None:
        return None
    if not isinstance(value, str):
        rep.error(
            "skill.tool_constraints.bad_shape",
            body.line_of("requires"),
            f"tool_constraints.{tool}.requires must be a condition string, "
            f"not a {type_name(value)}",
            key="requires",
        )
        return None
    return read_condition(rep, value, body.line_of("requires"), where=f"tool_constraints.{tool}")


def _confirmation(tool: str, body: LineDict, rep: Reporter) -> Confirmation | None:
    value = body.get("requires_confirmation")
    if value is None:
        return None
    line = body.line_of("requires_confirmation")
    if not isinstance(value, LineDict):
        rep.error(
            "skill.tool_constraints.bad_shape",
            line,
            f"tool_constraints.{tool}.requires_confirmation must be a mapping "
            "{enabled, utter_for_confirmation, utter_on_user_denial}",
            key="requires_confirmation",
        )
        return None
    for key in value:
        if key not in _CONFIRMATION_KEYS:
            rep.error(
                "skill.tool_constraints.unknown_key",
                value.line_of(key),
                f"unknown key {key!r} under tool_constraints.{tool}.requires_confirmation",
                key=str(key),
            )
    return Confirmation(
        enabled=_enabled(tool, value, line, rep),
        utter_for_confirmation=_response_name(value, "utter_for_confirmation", tool, rep),
        utter_on_user_denial=_response_name(value, "utter_on_user_denial", tool, rep),
        line=line,
    )


def _enabled(tool: str, value: LineDict, line: int, rep: Reporter) -> bool:
    """`requires_confirmation.enabled`; it defaults to false, which is easy to miss."""
    if "enabled" not in value:
        rep.warning(
            "skill.tool_constraints.confirmation_disabled",
            line,
            f"requires_confirmation of {tool!r} has no `enabled: true`, so it is off",
            key=tool,
        )
        return False
    enabled = value["enabled"]
    if isinstance(enabled, bool):
        return enabled
    rep.error(
        "skill.tool_constraints.bad_shape",
        value.line_of("enabled"),
        f"requires_confirmation.enabled must be true or false, got {enabled!r}",
        key="enabled",
    )
    return False


def _response_name(body: LineDict, key: str, tool: str, rep: Reporter) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, str) and value.strip():
        return value.strip()
    rep.error(
        "skill.tool_constraints.bad_shape",
        body.line_of(key),
        f"{key} of {tool!r} must name a response, got {value!r}",
        key=key,
    )
    return None


def single_key(item: object) -> tuple[str, object, int] | None:
    """`(key, value, key line)` when `item` is a mapping with one non-empty string key."""
    if not isinstance(item, LineDict) or len(item) != 1:
        return None
    key, value = next(iter(item.items()))
    if not isinstance(key, str) or not key.strip():
        return None
    return key, value, item.line_of(key)
