"""MCP tools as tool definitions of the skills that import them (pure).

An imported `mcp/<server>:<tool>` becomes a `ToolDefinition` in the skill's `tools`, so it
takes exactly the path a Python tool takes: offered while its `requires` holds, arguments
checked against the offered schema before anything runs, the gate checked again at
dispatch, confirmations, `on_success` / `on_failure`, and `tool_executed` +
`mcp_tool_executed` with `source: mcp`. Its function sends the call to the server through
an `McpCaller`; its `timeout` is the server's `tool_timeout` (None: the agent's).

Problems are diagnostics at the place the author can fix (or read) them: the server entry
of integrations.yml when a server cannot be reached, the `import_tools` line otherwise. A
tool the skill defines itself wins over an imported MCP tool of the same name (warning).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Protocol

import mcp_types

from keel.mcp.listing import ListingProblem, ToolListing
from keel.mcp.schema_fix import FixedSchema, describe, fix_input_schema, name_problem
from keel.project.definition import AgentDefinition, Skill
from keel.project.mcp_servers import McpServerConfig
from keel.skills.model import ImportTool
from keel.source.diagnostics import Diagnostic, diag
from keel.tools.contract import ToolContract
from keel.tools.definition import ToolDefinition
from keel.tools.discovery import RESERVED_TOOL_NAMES
from keel.tools.frozen import freeze_json
from keel.tools.result import ToolResult
from keel.tools.validators import Unusable

INTEGRATIONS_FILE = "integrations.yml"


class McpCaller(Protocol):
    """What an MCP tool definition calls (`keel.mcp.manager.McpServers`)."""

    async def call_tool(
        self, server: str, tool: str, arguments: Mapping[str, object]
    ) -> ToolResult: ...


def used_servers(definition: AgentDefinition) -> tuple[McpServerConfig, ...]:
    """The declared servers some skill imports a tool from (a declared server alone exposes
    nothing, and is not connected)."""
    wanted = {i.mcp_server for s in definition.skills.values() for i in s.mcp_imports}
    return tuple(s for s in definition.integrations.mcp_servers if s.name in wanted)


def mcp_tool_definition(
    config: McpServerConfig, tool: mcp_types.Tool, schema: FixedSchema, caller: McpCaller
) -> ToolDefinition:
    """The definition of one MCP tool, calling `caller` with the validated arguments."""
    server, name = config.name, tool.name

    async def call(**arguments: object) -> ToolResult:
        return await caller.call_tool(server, name, arguments)

    properties = schema.parameters.get("properties")
    return ToolDefinition(
        name=name,
        description=describe(tool.description, tool.title, name, server),
        parameters=freeze_json(schema.parameters),  # type: ignore[arg-type]
        func=call,
        context_param=None,
        param_names=tuple(properties) if isinstance(properties, dict) else (),
        module_file=INTEGRATIONS_FILE,
        line=config.line or 0,
        mcp_server=server,
        timeout=config.tool_timeout,
        contract=_mcp_contract(tool),
    )


def _mcp_contract(tool: mcp_types.Tool) -> ToolContract:
    """`read_only` when the server marks the tool `readOnlyHint: true`, else the fail-closed
    default (a hint is all MCP offers; nothing else is trusted)."""
    hints = tool.annotations
    if hints is not None and hints.read_only_hint is True:
        return ToolContract(effect="read_only", declared=True)
    return ToolContract()


def attach_mcp_tools(
    definition: AgentDefinition,
    listings: Mapping[str, ToolListing | ListingProblem],
    caller: McpCaller,
) -> tuple[AgentDefinition, list[Diagnostic]]:
    """The definition with every usable imported MCP tool added to its skill's tools.

    `listings` maps a server name to its listing, or to why it could not be listed; a
    server missing from it (a lazy one not connected yet) contributes nothing, silently.
    """
    out = [_server_problem(c, listings.get(c.name)) for c in used_servers(definition)]
    problems = [d for d in out if d is not None]
    configs = {c.name: c for c in definition.integrations.mcp_servers}
    skills: dict[str, Skill] = {}
    for skill_id, skill in definition.skills.items():
        added: dict[str, ToolDefinition] = {}
        for item in skill.mcp_imports:
            listing = listings.get(item.mcp_server or "")
            config = configs.get(item.mcp_server or "")
            if not isinstance(listing, ToolListing) or config is None:
                continue
            found = _import(skill, item, config, listing, caller)
            if isinstance(found, ToolDefinition):
                added[found.name] = found
            else:
                problems.append(found)
        skills[skill_id] = (
            replace(skill, tools=MappingProxyType({**added, **skill.tools})) if added else skill
        )
    return replace(definition, skills=MappingProxyType(skills)), problems


def _server_problem(
    config: McpServerConfig, listing: ToolListing | ListingProblem | None
) -> Diagnostic | None:
    if not isinstance(listing, ListingProblem):
        return None
    return diag(listing.code, INTEGRATIONS_FILE, config.line, listing.message, key=config.name)


def _import(
    skill: Skill,
    item: ImportTool,
    config: McpServerConfig,
    listing: ToolListing,
    caller: McpCaller,
) -> ToolDefinition | Diagnostic:
    doc, name = skill.document, item.mcp_tool or item.name
    where = f"`mcp/{config.name}:{name}`"

    def problem(code: str, message: str, severity: str = "error") -> Diagnostic:
        return diag(code, doc.file, item.line, message, key=name, severity=severity)  # type: ignore[arg-type]

    tool = listing.tool(name)
    if tool is None:
        listed = ", ".join(sorted(t.name for t in listing.tools)) or "none"
        message = f"{where}: MCP server `{config.name}` has no tool `{name}` (it lists: {listed})"
        return problem("skill.import_tools.unknown_mcp_tool", message)
    why = name_problem(name)
    if name in RESERVED_TOOL_NAMES:
        why = f"`{name}` is a framework tool name"
    schema = fix_input_schema(tool.input_schema) if why is None else Unusable(reason=why)
    if isinstance(schema, Unusable):
        message = f"{where} cannot be offered to the model and is never called: {schema.reason}"
        return problem("skill.import_tools.unusable_mcp_tool", message)
    if name in skill.tools:
        message = f"{where} is shadowed by the skill's own tool `{name}`, which is used instead"
        return problem("skill.import_tools.mcp_tool_shadowed", message, "warning")
    return mcp_tool_definition(config, tool, schema, caller)
