"""mcp_servers in integrations.yml: transports, auth strategies, secrets and diagnostics."""

from __future__ import annotations

import pytest
from _project_helpers import codes, only, yaml_data

from keel.project.config import parse_integrations
from keel.project.integrations import McpServerConfig
from keel.source.diagnostics import Diagnostic

HEAD = """\
llm: {model_group: g}
model_groups:
  - id: g
    models: [{provider: openai, model: m, api_key_env: KEY}]
mcp_servers:
"""
# The first server entry starts on line 6.
ENV = {"KEY": "k", "DEPOT_URL": "https://depot.test/mcp", "DEPOT_TOKEN": "tok-secret"}


def parse(servers: str) -> tuple[list[McpServerConfig], list[Diagnostic]]:
    config, diagnostics = parse_integrations(yaml_data(HEAD + servers), env=ENV)
    return ([] if config is None else list(config.mcp_servers)), diagnostics


def test_remote_server_with_token() -> None:
    servers, diagnostics = parse(
        "  - name: depot\n    url: ${DEPOT_URL}\n    token: ${DEPOT_TOKEN}\n    tool_timeout: 5\n"
    )
    assert diagnostics == []
    (server,) = servers
    assert (server.name, server.url, server.command, server.line) == (
        "depot",
        "https://depot.test/mcp",
        None,
        6,
    )
    assert server.tool_timeout == 5.0
    assert server.auth is not None and server.auth.kind == "token"
    assert server.auth.secret is not None and server.auth.secret.reveal() == "tok-secret"
    assert "tok-secret" not in repr(server)


def test_local_server_with_command_args_env() -> None:
    servers, diagnostics = parse(
        "  - name: files\n    command: npx\n    args: [server, --port, 8080]\n"
        "    env:\n      API_TOKEN: ${DEPOT_TOKEN}\n"
    )
    assert diagnostics == []
    (server,) = servers
    assert (server.command, server.args, server.url, server.auth) == (
        "npx",
        ("server", "--port", "8080"),
        None,
        None,
    )
    assert server.env["API_TOKEN"].reveal() == "tok-secret"
    assert server.tool_timeout is None
    assert "tok-secret" not in repr(server)


def test_module_and_oauth_auth() -> None:
    servers, diagnostics = parse(
        "  - name: a\n    url: https://a.test\n    module: my_auth.provider\n"
        "  - name: b\n    url: https://b.test\n    oauth:\n"
        "      client_id: abc\n      client_secret: ${DEPOT_TOKEN}\n"
    )
    assert diagnostics == []
    a, b = servers
    assert a.auth is not None and (a.auth.kind, a.auth.module) == ("module", "my_auth.provider")
    assert b.auth is not None and b.auth.kind == "oauth"
    assert b.auth.settings["client_secret"] == "tok-secret"
    assert "tok-secret" not in repr(b)


def test_more_than_one_auth_strategy() -> None:
    servers, diagnostics = parse(
        "  - name: depot\n    url: https://x\n    token: ${DEPOT_TOKEN}\n    api_key: ${KEY}\n"
    )
    assert servers == []
    found = only(diagnostics, "config.mcp.multiple_auth")
    assert (found.line, found.key) == (6, "mcp_servers.depot")


@pytest.mark.parametrize("kind", ["token", "api_key"])
def test_literal_secret_is_a_warning(kind: str) -> None:
    servers, diagnostics = parse(f"  - name: depot\n    url: https://x\n    {kind}: abc123\n")
    assert len(servers) == 1
    found = only(diagnostics, "config.mcp.literal_secret")
    assert (found.line, found.severity) == (8, "warning")
    assert "abc123" not in found.message


def test_literal_oauth_client_secret_is_a_warning() -> None:
    _, diagnostics = parse(
        "  - name: d\n    url: https://x\n    oauth:\n      client_secret: plain\n"
    )
    assert codes(diagnostics) == [("config.mcp.literal_secret", 9)]


def test_duplicate_names_point_at_second() -> None:
    servers, diagnostics = parse(
        "  - name: depot\n    url: https://a\n  - name: depot\n    url: https://b\n"
    )
    assert servers == []
    assert codes(diagnostics) == [("config.mcp.duplicate_name", 8)]


def test_transport_problems() -> None:
    _, diagnostics = parse("  - name: a\n    token: ${KEY}\n")
    assert codes(diagnostics) == [("config.mcp.missing_transport", 6)]
    _, diagnostics = parse("  - name: a\n    url: https://a\n    command: run\n")
    assert codes(diagnostics) == [("config.mcp.multiple_transports", 6)]
    _, diagnostics = parse("  - name: a\n    url: 5\n")
    assert codes(diagnostics) == [("config.mcp.bad_value", 7)]


def test_other_server_problems() -> None:
    _, diagnostics = parse("  - url: https://a\n  - name: ''\n    url: https://b\n")
    assert codes(diagnostics) == [("config.mcp.missing_name", 6), ("config.mcp.missing_name", 7)]
    _, diagnostics = parse("  - name: a\n    url: https://a\n    tool_timeout: 0\n")
    assert codes(diagnostics) == [("config.mcp.bad_tool_timeout", 8)]
    _, diagnostics = parse("  - name: a\n    command: x\n    args: run\n    env: [A]\n")
    assert codes(diagnostics) == [("config.mcp.bad_value", 8), ("config.mcp.bad_value", 9)]
    _, diagnostics = parse("  - name: a\n    url: https://a\n    oauth: yes-please\n")
    assert codes(diagnostics) == [("config.mcp.bad_value", 8)]


def test_unknown_server_key_warns() -> None:
    servers, diagnostics = parse("  - name: a\n    url: https://a\n    headers: {X: y}\n")
    assert len(servers) == 1
    assert codes(diagnostics) == [("config.mcp.unknown_key", 8)]
    assert diagnostics[0].severity == "warning"


def test_servers_must_be_a_list() -> None:
    config, diagnostics = parse_integrations(
        yaml_data(HEAD.replace("mcp_servers:\n", "mcp_servers: {a: 1}\n")), env=ENV
    )
    assert config is None
    assert codes(diagnostics) == [("config.mcp.bad_value", 5)]
