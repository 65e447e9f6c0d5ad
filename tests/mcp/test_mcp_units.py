"""The pure parts of MCP: configuration, tool-list cache, results, tools in skills."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import mcp_types
import pytest
from mcp.shared.exceptions import MCPError
from mcp_kit import AGENTS, copy_agent, load

from keel.ids import FakeClock
from keel.mcp.connection import McpConnection
from keel.mcp.errors import McpCallFailed, McpServerUnavailable
from keel.mcp.listing import ListingProblem, ToolListCache, ToolListing
from keel.mcp.resolve import attach_mcp_tools, used_servers
from keel.mcp.results import to_tool_result
from keel.mcp.transport import auth_headers, config_problem
from keel.project.integrations import parse_integrations
from keel.project.mcp_servers import McpServerConfig
from keel.source.yaml import load_yaml
from keel.tools.result import ToolResult

BASE = """
llm:
  model_group: main
model_groups:
  - id: main
    models: [{provider: scripted, model: scripted}]
mcp_servers:
"""


def _servers(
    block: str, env: Mapping[str, str] | None = None
) -> tuple[list[McpServerConfig], list[str]]:
    data, _ = load_yaml(BASE + block, "integrations.yml")
    config, diagnostics = parse_integrations(data, env=env or {})
    codes = [d.code for d in diagnostics]
    return (list(config.mcp_servers) if config else []), codes


def test_stdio_and_http_servers_with_timeout_start_mode_and_header() -> None:
    servers, codes = _servers(
        """
  - name: time
    command: ${PY}
    args: [-m, mcp_server_time]
    env: {TZ: UTC}
    start: lazy
  - name: depot
    url: ${URL}
    api_key: ${KEY}
    header_name: X-API-Key
    header_format: "{key}"
    tool_timeout: 2.5
""",
        {"PY": "/usr/bin/python3", "URL": "http://127.0.0.1:9/mcp", "KEY": "k-1"},
    )
    assert codes == []
    time, depot = servers
    assert (time.transport, time.command, time.args, time.start) == (
        "stdio",
        "/usr/bin/python3",
        ("-m", "mcp_server_time"),
        "lazy",
    )
    assert time.env["TZ"].reveal() == "UTC"
    assert (depot.transport, depot.url, depot.tool_timeout, depot.start) == (
        "http",
        "http://127.0.0.1:9/mcp",
        2.5,
        "startup",
    )
    assert auth_headers(depot) == {"X-API-Key": "k-1"}
    assert config_problem(time) is None and config_problem(depot) is None


def test_token_is_a_bearer_header_and_unset_variables_keep_a_server_unconnected() -> None:
    servers, codes = _servers("  - name: depot\n    url: ${URL}\n    token: ${TOKEN}\n", {})
    assert codes.count("config.env.unset") == 2
    (depot,) = servers
    assert depot.unset_vars == ("URL", "TOKEN")
    assert config_problem(depot) == (
        "mcp.server.not_configured",
        "MCP server `depot` uses unset ${URL}, ${TOKEN}",
    )
    servers, _ = _servers("  - name: d\n    url: http://x\n    token: ${T}\n", {"T": "s"})
    assert auth_headers(servers[0]) == {"Authorization": "Bearer s"}


def test_bad_start_mode_and_header_format_are_errors() -> None:
    _, codes = _servers("  - name: d\n    url: http://x\n    start: eager\n")
    assert codes == ["config.mcp.bad_value"]
    _, codes = _servers(
        "  - name: d\n    url: http://x\n    api_key: ${K}\n    header_format: Token\n", {"K": "k"}
    )
    assert codes == ["config.mcp.bad_value"]


def test_oauth_is_parsed_but_not_connected() -> None:
    servers, _ = _servers("  - name: d\n    url: http://x\n    oauth: {client_id: a}\n")
    problem = config_problem(servers[0])
    assert problem is not None and problem[0] == "mcp.server.unsupported_auth"


def _tool(name: str, schema: dict[str, object]) -> mcp_types.Tool:
    return mcp_types.Tool(name=name, input_schema=schema, description=f"The {name} tool.")


def test_the_cache_serves_a_listing_for_ten_minutes_of_one_connection() -> None:
    clock = FakeClock()
    cache = ToolListCache(clock=clock)
    listing = cache.put("depot", (_tool("lookup", {"type": "object"}),), generation=1)
    assert cache.fresh("depot", 1) is listing
    assert cache.fresh("depot", 2) is None  # restarted: listed again
    clock.advance(599)
    assert cache.fresh("depot", 1) is listing
    clock.advance(1)
    assert cache.fresh("depot", 1) is None
    assert cache.latest("depot") is listing
    assert listing.tool("lookup") is not None and listing.tool("nope") is None


def test_results_prefer_structured_content_and_errors_keep_their_text() -> None:
    text = mcp_types.TextContent(text="Parcel P-1 is at depot 7.")
    structured = mcp_types.CallToolResult(content=[text], structured_content={"depot": 7})
    assert to_tool_result(structured, tool="t", server="s") == ToolResult(llm_response={"depot": 7})
    plain = mcp_types.CallToolResult(
        content=[text, mcp_types.ImageContent(data="AA==", mime_type="image/png")]
    )
    assert to_tool_result(plain, tool="t", server="s").llm_response == (
        "Parcel P-1 is at depot 7.\n[image (image/png)]"
    )
    failed = mcp_types.CallToolResult(content=[text], is_error=True)
    assert to_tool_result(failed, tool="t", server="s").error == "Parcel P-1 is at depot 7."
    empty = mcp_types.CallToolResult(content=[], is_error=True)
    assert to_tool_result(empty, tool="t", server="s").error == (
        "MCP tool 't' of server 's' reported an error"
    )


class _Caller:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, object]]] = []

    async def call_tool(
        self, server: str, tool: str, arguments: Mapping[str, object]
    ) -> ToolResult:
        self.calls.append((server, tool, dict(arguments)))
        return ToolResult(llm_response="ok")


async def test_imported_tools_become_skill_tools_that_call_their_server() -> None:
    definition = load(AGENTS / "depot", {"DEPOT_MCP_URL": "http://x/mcp", "DEPOT_TOKEN": "t"})
    assert [s.name for s in used_servers(definition)] == ["depot"]
    listing = ToolListing(
        server="depot",
        tools=(
            _tool("lookup", {"type": "object", "properties": {"parcel_id": {"type": "string"}}}),
            _tool("reroute", {"type": "object", "properties": {}}),
            _tool("slow", {"type": "object"}),
            _tool("cancel_parcel", {"type": "string"}),
            _tool("unused", {"type": "object"}),
        ),
        fetched_at=FakeClock().now(),
        generation=1,
    )
    caller = _Caller()
    attached, problems = attach_mcp_tools(definition, {"depot": listing}, caller)
    tools = attached.skills["parcels"].tools
    assert sorted(tools) == ["lookup", "reroute", "slow"]
    assert tools["slow"].parameters == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    assert (tools["lookup"].mcp_server, tools["lookup"].timeout) == ("depot", 0.5)
    assert definition.skills["parcels"].tools == {}  # the loaded definition is unchanged
    assert sorted((p.code, p.line) for p in problems) == [
        ("skill.import_tools.unknown_mcp_tool", 9),  # ping is not listed
        ("skill.import_tools.unusable_mcp_tool", 7),  # cancel_parcel takes a string
    ]
    assert await tools["lookup"].func(parcel_id="P-1") == ToolResult(llm_response="ok")
    assert caller.calls == [("depot", "lookup", {"parcel_id": "P-1"})]


def test_an_unreachable_server_is_reported_at_its_entry() -> None:
    definition = load(AGENTS / "depot", {"DEPOT_MCP_URL": "http://x/mcp", "DEPOT_TOKEN": "t"})
    problem = ListingProblem(code="mcp.server.unreachable", message="MCP server 'depot' ...")
    attached, problems = attach_mcp_tools(definition, {"depot": problem}, _Caller())
    assert [(p.code, p.file, p.line) for p in problems] == [
        ("mcp.server.unreachable", "integrations.yml", 9)
    ]
    assert attached.skills["parcels"].tools == {}
    # A server not listed yet (lazy) contributes nothing, silently.
    assert attach_mcp_tools(definition, {}, _Caller())[1] == []


def test_a_tool_named_like_a_framework_tool_is_never_offered(tmp_path: Path) -> None:
    agent = copy_agent("depot", tmp_path / "depot")
    skill = agent / "skills" / "parcels" / "skill.md"
    skill.write_text(skill.read_text().replace("  - mcp/depot:ping\n", "  - mcp/depot:listen\n"))
    definition = load(agent, {"DEPOT_MCP_URL": "http://x/mcp", "DEPOT_TOKEN": "t"})
    listing = ToolListing(
        server="depot",
        tools=tuple(
            _tool(n, {"type": "object"})
            for n in ("lookup", "reroute", "cancel_parcel", "slow", "listen")
        ),
        fetched_at=FakeClock().now(),
        generation=1,
    )
    attached, problems = attach_mcp_tools(definition, {"depot": listing}, _Caller())
    assert "listen" not in attached.skills["parcels"].tools
    assert [(p.code, p.line) for p in problems] == [("skill.import_tools.unusable_mcp_tool", 9)]
    assert "framework tool name" in problems[0].message


async def test_an_mcp_error_never_carries_the_servers_credentials() -> None:
    """A server (or its transport) that echoes the token or an `env` secret it was given:
    the error the model, the log and the event see says `[redacted]` instead."""
    block = (
        "  - name: depot\n    url: http://127.0.0.1:9/mcp\n    token: ${TOKEN}\n"
        "  - name: local\n    command: depot\n    env: {DEPOT_KEY: '${KEY}'}\n"
    )
    servers, _ = _servers(block, {"TOKEN": "tok-0123456789", "KEY": "key-9876543210"})
    for config, secret in zip(servers, ("tok-0123456789", "key-9876543210"), strict=True):
        connection = McpConnection(config, cwd=None, generation=1)

        async def refuse(text: str) -> None:
            raise MCPError(-32602, text)

        async def break_off(text: str) -> None:
            raise OSError(text)

        for fail, error in ((refuse, McpCallFailed), (break_off, McpServerUnavailable)):
            with pytest.raises(error) as raised:
                await connection._guard(fail(f"bad credential {secret}"), "tool 'stock'")
            assert secret not in str(raised.value)
            assert "[redacted]" in str(raised.value)
