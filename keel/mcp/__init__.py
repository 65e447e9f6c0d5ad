"""MCP tools through the official `mcp` SDK, taking the same path as Python tools.

Modules: `schema_fix` (the one place provider schema rules are met, pure), `results`
(SDK results as `ToolResult`, pure), `listing` (tool lists and their TTL cache, pure),
`resolve` (MCP tools as skill tool definitions, pure), `transport` and `connection` (the
SDK session of one server), `manager` (connections, restarts, calls), `runtime` (startup,
per-turn refresh, shutdown, and the `keel validate` check). See docs/mcp.md.
"""

from keel.mcp.errors import McpCallFailed, McpServerUnavailable
from keel.mcp.listing import DEFAULT_TTL_SECONDS, ToolListCache, ToolListing
from keel.mcp.manager import McpServers
from keel.mcp.resolve import attach_mcp_tools, used_servers
from keel.mcp.runtime import McpRuntime, check_mcp, uses_mcp
from keel.mcp.schema_fix import FixedSchema, fix_input_schema

__all__ = [
    "DEFAULT_TTL_SECONDS",
    "FixedSchema",
    "McpCallFailed",
    "McpRuntime",
    "McpServerUnavailable",
    "McpServers",
    "ToolListCache",
    "ToolListing",
    "attach_mcp_tools",
    "check_mcp",
    "fix_input_schema",
    "used_servers",
    "uses_mcp",
]
