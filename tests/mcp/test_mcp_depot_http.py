"""MCP tools over streamable HTTP, in conversations driven by scripted models.

The depot server (tests/mcp/depot_server.py) is a real MCP server written with the SDK,
served by uvicorn on 127.0.0.1; it counts the calls it receives, which proves that a call
Keel refuses never reaches it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from depot_server import TOKEN, DepotServer
from mcp_kit import AGENTS, copy_agent, depot_env, load

from keel.errors import DefinitionError
from keel.events.model import Event, McpToolExecuted, ToolCallRefused, ToolExecuted
from keel.ids import FakeClock
from keel.mcp import McpRuntime, check_mcp
from keel.project.definition import AgentDefinition
from keel.testing.harness import ConversationHarness
from keel.testing.scripted import ReplySource, ScriptedModel
from keel.tools.frozen import thaw_json

ACTIVATE = {"tool_calls": [{"name": "activate", "arguments": {"target_id": "parcels"}}]}


def call(name: str, arguments: object) -> dict[str, object]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


@asynccontextmanager
async def conversation(
    definition: AgentDefinition, replies: Iterable[ReplySource], clock: FakeClock | None = None
) -> AsyncIterator[tuple[ConversationHarness, McpRuntime, ScriptedModel]]:
    """A harness on the definition with its MCP servers connected (and closed after)."""
    clock = clock or FakeClock()
    runtime = McpRuntime(definition, clock=clock)
    try:
        model = ScriptedModel(replies)
        harness = ConversationHarness(await runtime.open(), model, clock=clock)
        harness.engine.definitions = runtime
        yield harness, runtime, model
    finally:
        await runtime.close()


def runs(events: Iterable[Event]) -> list[ToolExecuted]:
    return [e for e in events if isinstance(e, ToolExecuted) and e.source == "mcp"]


def offered(model: ScriptedModel) -> dict[str, dict[str, object]]:
    """name -> parameters of the tools offered on the last model call."""
    return {t.name: thaw_json(t.parameters) for t in model.requests[-1].tools}


async def test_schemas_are_offered_and_invalid_arguments_never_reach_the_server(
    depot: DepotServer,
) -> None:
    definition = load(AGENTS / "depot", depot_env(depot))
    replies = [
        ACTIVATE,
        call("lookup", {"parcel_id": 7}),
        call("lookup", {}),
        call("lookup", {"parcel_id": "P-1", "postcode": "AB1"}),
        "Which parcel?",
        call("lookup", {"parcel_id": "P-1"}),
        call("ping", {}),
        "It is at depot 7.",
    ]
    async with conversation(definition, replies) as (harness, _, model):
        first = await harness.send("where is my parcel")
        refused = [e for e in first.events if isinstance(e, ToolCallRefused)]
        assert [(e.tool_name, e.code, e.retryable) for e in refused] == [
            ("lookup", "tool.arguments.invalid", True)
        ] * 3
        assert depot.calls["lookup"] == 0  # none of the three reached the server
        tools = offered(model)
        assert tools["lookup"] == {
            "type": "object",
            "properties": {"parcel_id": {"title": "Parcel Id", "type": "string"}},
            "required": ["parcel_id"],
            "title": "lookupArguments",
            "additionalProperties": False,  # closed like a Python tool's schema
        }
        assert tools["ping"] == {  # the server listed no `properties`
            "type": "object",
            "properties": {},
            "additionalProperties": False,
        }
        assert "reroute" not in tools  # its `requires` is closed
        second = await harness.send("P-1")
        model.assert_complete()
    assert depot.calls == {"lookup": 1, "ping": 1}
    done = runs(second.events)
    assert [(e.tool_name, e.mcp_server, e.is_error, e.result) for e in done] == [
        ("lookup", "depot", False, '{"result":"Parcel P-1 is at depot 7."}'),
        ("ping", "depot", False, '{"result":"pong"}'),
    ]
    copies = [e for e in second.events if isinstance(e, McpToolExecuted) and e.source == "mcp"]
    assert [(e.tool_name, e.mcp_server, e.result) for e in copies] == [
        (e.tool_name, e.mcp_server, e.result) for e in done
    ]
    assert set(depot.headers) == {f"Bearer {TOKEN}"}


async def test_gates_and_confirmations_hold_mcp_calls_until_allowed(depot: DepotServer) -> None:
    reroute = call("reroute", {"parcel_id": "P-1", "depot": 3})
    replies = [
        ACTIVATE,
        reroute,
        "What is your postcode?",
        call("set_fields", {"fields": {"verified": True}}),
        reroute,
        call("resolve_tool_confirmation", {"confirmed": True}),
        "Done.",
    ]
    async with conversation(load(AGENTS / "depot", depot_env(depot)), replies) as (h, _, model):
        closed = await h.send("send my parcel to depot 3")
        assert [(e.tool_name, e.code) for e in closed.events if isinstance(e, ToolCallRefused)] == [
            ("reroute", "tool.requires_closed")
        ]
        paused = await h.send("AB1 2CD")
        assert "reroute" in offered(model)
        assert paused.state.status == "paused"
        assert paused.bot_messages[-1].text == "Reroute the parcel now?"
        assert depot.calls["reroute"] == 0  # held at the pause point
        approved = await h.send("yes")
        model.assert_complete()
    assert depot.calls["reroute"] == 1
    (run,) = runs(approved.events)
    assert (run.tool_name, run.metadata["source"], run.arguments) == (
        "reroute",
        "tool_confirmation",
        {"parcel_id": "P-1", "depot": 3},
    )
    assert [m.text for m in approved.bot_messages] == [
        "The parcel is on its way to the new depot.",
        "Done.",
    ]


async def test_error_results_and_timeouts_are_failed_runs_the_model_sees(
    depot: DepotServer,
) -> None:
    replies = [
        ACTIVATE,
        call("cancel_parcel", {"parcel_id": "P-1"}),
        call("slow", {"seconds": 5}),
        "Sorry.",
    ]
    async with conversation(load(AGENTS / "depot", depot_env(depot)), replies) as (h, _, model):
        result = await h.send("cancel my parcel")
        model.assert_complete()
    failed = runs(result.events)
    assert [(e.tool_name, e.is_error, e.error_code) for e in failed] == [
        ("cancel_parcel", True, "tool.error_result"),
        ("slow", True, "tool.timeout"),
    ]
    assert "already on a truck" in (failed[0].error_message or "")
    assert failed[1].error_message == "tool 'slow' timed out after 0.5 seconds"
    tool_texts = [m["content"] for m in model.requests[-1].messages if m["role"] == "tool"]
    assert tool_texts[-2:] == [
        f"Error: {failed[0].error_message}",
        f"Error: {failed[1].error_message}",
    ]
    assert "Sorry, the depot could not cancel it." in [m.text for m in result.bot_messages]


async def test_a_stopped_server_is_a_model_visible_error_then_reconnected(
    depot: DepotServer,
) -> None:
    lookup = call("lookup", {"parcel_id": "P-1"})
    replies = [ACTIVATE, lookup, "At depot 7.", lookup, "Try later.", lookup, "At depot 7."]
    async with conversation(load(AGENTS / "depot", depot_env(depot)), replies) as (h, rt, model):
        await h.send("where is my parcel")
        depot.stop()
        down = await h.send("and now?")
        (failed,) = runs(down.events)
        assert (failed.is_error, failed.error_code) == (True, "mcp.server_unavailable")
        assert "MCP server 'depot'" in (failed.error_message or "")
        tool_texts = [m["content"] for m in model.requests[-1].messages if m["role"] == "tool"]
        assert tool_texts[-1] == f"Error: {failed.error_message}"
        depot.start()
        back = await h.send("and now?")
        model.assert_complete()
        assert [(e.is_error, e.result) for e in runs(back.events)] == [
            (False, '{"result":"Parcel P-1 is at depot 7."}')
        ]
        assert rt.servers.generation("depot") >= 2
    assert depot.calls["lookup"] == 2


async def test_tool_lists_are_cached_ten_minutes_then_listed_again(depot: DepotServer) -> None:
    clock = FakeClock()
    replies = [ACTIVATE, "Hello.", "Hello again.", "And again."]
    definition = load(AGENTS / "depot", depot_env(depot))
    async with conversation(definition, replies, clock) as (harness, runtime, model):
        await harness.send("hi")
        assert list(offered(model)["lookup"]["properties"]) == ["parcel_id"]

        def lookup(parcel_id: str, postcode: str) -> str:
            return f"{parcel_id} {postcode}"

        depot.mcp.remove_tool("lookup")
        depot.mcp.add_tool(lookup, description="Where a parcel is, by postcode.")
        clock.advance(599)
        await harness.send("hi")
        assert list(offered(model)["lookup"]["properties"]) == ["parcel_id"]
        clock.advance(2)
        await harness.send("hi")
        assert list(offered(model)["lookup"]["properties"]) == ["parcel_id", "postcode"]
        model.assert_complete()
        assert runtime.servers.generation("depot") == 1  # same connection, listed again


async def test_a_lazy_server_connects_on_the_first_turn(depot: DepotServer, tmp_path: Path) -> None:
    agent = copy_agent("depot", tmp_path / "depot")
    integrations = agent / "integrations.yml"
    integrations.write_text(integrations.read_text() + "    start: lazy\n")
    replies = [ACTIVATE, call("lookup", {"parcel_id": "P-1"}), "At depot 7."]
    async with conversation(load(agent, depot_env(depot)), replies) as (harness, runtime, model):
        assert runtime.servers.generation("depot") == 0
        assert runtime.definition.skills["parcels"].tools == {}
        result = await harness.send("where is my parcel")
        model.assert_complete()
        assert runtime.servers.generation("depot") == 1
    assert [e.is_error for e in runs(result.events)] == [False]


async def test_missing_and_unusable_tools_stop_the_start_and_are_never_called(
    depot: DepotServer, tmp_path: Path
) -> None:
    agent = copy_agent("depot", tmp_path / "depot")
    skill = agent / "skills" / "parcels" / "skill.md"
    text = skill.read_text().replace(
        "  - mcp/depot:ping\n", "  - mcp/depot:ping\n  - mcp/depot:scalar\n  - mcp/depot:nope\n"
    )
    skill.write_text(text)
    definition = load(agent, depot_env(depot))
    found = await check_mcp(definition)
    assert [(d.code, d.file, d.line) for d in found] == [
        ("skill.import_tools.unusable_mcp_tool", "skills/parcels/skill.md", 10),
        ("skill.import_tools.unknown_mcp_tool", "skills/parcels/skill.md", 11),
    ]
    assert "`properties` is not a mapping" in found[0].message
    runtime = McpRuntime(definition, clock=FakeClock())
    with pytest.raises(DefinitionError) as raised:
        await runtime.open()
    assert [d.code for d in raised.value.diagnostics] == [d.code for d in found]
    # Even with the errors ignored, the unusable tool is not offered, and a call is refused.
    replies = [ACTIVATE, call("scalar", {}), "Sorry."]
    runtime = McpRuntime(definition, clock=FakeClock())
    try:
        await runtime.check()
        model = ScriptedModel(replies)
        harness = ConversationHarness(runtime.definition, model)
        result = await harness.send("hi")
        model.assert_complete()
    finally:
        await runtime.close()
    assert "scalar" not in offered(model)
    assert [(e.tool_name, e.code) for e in result.events if isinstance(e, ToolCallRefused)] == [
        ("scalar", "tool.not_offered")
    ]
    assert depot.calls["scalar"] == 0


async def test_an_unreachable_or_refusing_server_is_reported_at_its_entry(
    depot: DepotServer,
) -> None:
    wrong = load(AGENTS / "depot", depot_env(depot, token="wrong"))
    (refused,) = await check_mcp(wrong)
    assert (refused.code, refused.file, refused.line) == (
        "mcp.server.unreachable",
        "integrations.yml",
        9,
    )
    depot.stop()
    (down,) = await check_mcp(load(AGENTS / "depot", depot_env(depot)))
    assert down.code == "mcp.server.unreachable"
    assert "ConnectError" in down.message
    (unset,) = await check_mcp(load(AGENTS / "depot", {"DEPOT_MCP_URL": depot.url}))
    assert unset.code == "mcp.server.not_configured"
    assert "${DEPOT_TOKEN}" in unset.message


async def test_turns_leave_an_unreachable_server_alone_for_a_while(
    depot: DepotServer, tmp_path: Path
) -> None:
    agent = copy_agent("depot", tmp_path / "depot")
    integrations = agent / "integrations.yml"
    integrations.write_text(integrations.read_text() + "    start: lazy\n")
    now = [100.0]
    runtime = McpRuntime(load(agent, depot_env(depot)), clock=FakeClock(), monotonic=lambda: now[0])
    depot.stop()
    try:
        assert (await runtime.current()).skills["parcels"].tools == {}
        generation = runtime.servers.generation("depot")
        depot.start()
        now[0] += 29
        assert (await runtime.current()).skills["parcels"].tools == {}
        assert runtime.servers.generation("depot") == generation  # not even tried
        now[0] += 2
        assert "lookup" in (await runtime.current()).skills["parcels"].tools
    finally:
        await runtime.close()


async def test_an_execute_tool_step_runs_an_mcp_tool_like_a_python_one(
    depot: DepotServer,
) -> None:
    replies = [
        {"tool_calls": [{"name": "activate", "arguments": {"target_id": "track"}}]},
        call("set_fields", {"fields": {"parcel_id": "P-9"}}),
    ]
    async with conversation(load(AGENTS / "depot", depot_env(depot)), replies) as (h, _, model):
        asked = await h.send("track my parcel")
        assert [m.text for m in asked.bot_messages] == ["Which parcel?"]
        assert depot.calls["lookup"] == 0  # the step waits for its argument
        done = await h.send("P-9")
        model.assert_complete()
    (run,) = runs(done.events)
    assert (run.tool_name, run.arguments, run.tool_call_id.startswith("step:")) == (
        "lookup",
        {"parcel_id": "P-9"},
        True,
    )
    assert "Found it." in [m.text for m in done.bot_messages]
    assert depot.calls["lookup"] == 1
