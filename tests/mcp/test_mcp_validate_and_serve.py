"""`keel validate` connects the MCP servers; the app connects them at startup and closes them.

`keel validate` runs in process here (the subprocess path is covered by the broken-project
case `mcp_server_unreachable` in tests/cli).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx
import pytest
from depot_server import DepotServer
from mcp_kit import copy_agent, depot_env
from typer.testing import CliRunner

from keel.cli.main import app as cli
from keel.errors import DefinitionError
from keel.ids import FakeClock, SequentialIds
from keel.loop.engine import Engine
from keel.mcp import McpRuntime
from keel.project.definition import AgentDefinition
from keel.server import ServerSettings, create_app
from keel.server.auth import KeyRing, parse_keys
from keel.server.ratelimit import RateLimit
from keel.stores.port import EventStore
from keel.testing.scripted import ScriptedModel


def test_validate_reports_a_tool_the_time_server_does_not_have(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = copy_agent("clock", tmp_path / "clock")
    skill = agent / "skills" / "clock" / "skill.md"
    skill.write_text(skill.read_text().replace("mcp/time:convert_time", "mcp/time:get_weather"))
    monkeypatch.setenv("KEEL_TEST_PYTHON", sys.executable)
    runner = CliRunner()
    result = runner.invoke(cli, ["validate", str(agent), "--format", "json"])
    assert result.exit_code == 1, result.output
    found = json.loads(result.stdout)
    assert [(d["code"], d["file"], d["line"], d["key"]) for d in found] == [
        ("skill.import_tools.unknown_mcp_tool", "skills/clock/skill.md", 6, "get_weather")
    ]
    assert "it lists: convert_time, get_current_time" in found[0]["message"]
    offline = runner.invoke(cli, ["validate", str(agent), "--offline"])
    assert offline.exit_code == 0, offline.output


async def test_the_app_connects_mcp_at_startup_and_closes_it_at_shutdown(
    depot: DepotServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in depot_env(depot).items():
        monkeypatch.setenv(name, value)
    agent = copy_agent("depot", tmp_path / "depot")
    lookup = {"name": "lookup", "arguments": {"parcel_id": "P-1"}}
    model = ScriptedModel(
        [
            {"tool_calls": [{"name": "activate", "arguments": {"target_id": "parcels"}}]},
            {"tool_calls": [lookup]},
            "It is at depot 7.",
        ]
    )
    salt = b"salt"
    settings = ServerSettings(
        project=agent,
        database_url=f"sqlite:///{tmp_path / 'keel.db'}",
        keys=KeyRing(salt=salt, keys=parse_keys("alice:chat:alice-secret", salt)),
        rate_limit=RateLimit.parse("off"),
    )

    def engine(definition: AgentDefinition, store: EventStore) -> Engine:
        return Engine(definition=definition, store=store, model=model, clock=FakeClock())

    app = create_app(settings, engine_factory=engine, clock=FakeClock(), ids=SequentialIds("r-"))
    async with app.router.lifespan_context(app):
        runtime = app.state.keel
        mcp = runtime.engine.definitions
        assert isinstance(mcp, McpRuntime)
        assert "lookup" in runtime.definition.skills["parcels"].tools
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://keel.test") as client:
            reply = await client.post(
                "/v1/conversations/c1/messages",
                json={"text": "where is my parcel"},
                headers={"Authorization": "Bearer alice-secret"},
            )
        assert reply.status_code == 200, reply.text
        connection = mcp.servers.connection("depot")
        assert connection is not None and connection.alive
    assert not connection.alive  # shut down with the app
    assert depot.calls["lookup"] == 1
    model.assert_complete()

    skill = agent / "skills" / "parcels" / "skill.md"
    skill.write_text(skill.read_text().replace("mcp/depot:ping", "mcp/depot:pong"))
    broken = create_app(settings, engine_factory=engine)
    with pytest.raises(DefinitionError) as raised:
        async with broken.router.lifespan_context(broken):
            pass
    assert [d.code for d in raised.value.diagnostics] == ["skill.import_tools.unknown_mcp_tool"]
