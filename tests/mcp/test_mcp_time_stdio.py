"""MCP tools over stdio: the real `mcp-server-time` from PyPI, run as a child process.

One conversation covers the whole life of the server, because starting it costs about two
seconds: a call that works, an `isError` result, the server killed during a call (a
model-visible error, then a restart with its tools listed again on the next use), the
server dying while idle (restarted on the next turn, no error), and no process left after
shutdown.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable, Mapping

from mcp_kit import AGENTS, child_processes, clock_env, load

from keel.events.model import ToolExecuted
from keel.ids import FakeClock
from keel.mcp import McpRuntime
from keel.testing.harness import ConversationHarness
from keel.testing.scripted import ScriptedModel

SERVER = "mcp_server_time"


def now_in(timezone: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "get_current_time", "arguments": {"timezone": timezone}}]}


async def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Poll `condition()` until it holds (the server's exit is noticed asynchronously)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def test_time_server_calls_errors_kill_and_restart() -> None:
    definition = load(AGENTS / "clock", clock_env())
    runtime = McpRuntime(definition, clock=FakeClock())
    replies = [
        {"tool_calls": [{"name": "activate", "arguments": {"target_id": "clock"}}]},
        now_in("Europe/Paris"),
        now_in("Mars/Base"),
        "It is 3 pm in Paris.",
        now_in("UTC"),
        "Sorry, the clock is not answering.",
        now_in("UTC"),
        "It is 2 pm UTC.",
        now_in("Asia/Tokyo"),
        "It is 11 pm in Tokyo.",
    ]
    model = ScriptedModel(replies)
    kill_on_tool: list[bool] = [False]

    def on_tool_start(name: str, arguments: Mapping[str, object]) -> None:
        # The server dies right as the call is made (SIGKILL: no goodbye on the pipe).
        if kill_on_tool[0]:
            for pid in child_processes(SERVER):
                os.kill(pid, signal.SIGKILL)

    try:
        harness = ConversationHarness(await runtime.open(), model)
        harness.engine.definitions = runtime
        harness.engine.on_tool_start = on_tool_start
        first = await harness.send("what time is it in Paris?")
        offered = {t.name: t for t in model.requests[-1].tools}
        assert {"get_current_time", "convert_time"} <= set(offered)
        ok, error = [e for e in first.events if isinstance(e, ToolExecuted) and e.source == "mcp"]
        assert (ok.mcp_server, ok.is_error) == ("time", False)
        assert '"timezone":"Europe/Paris"' in ok.result
        assert (error.is_error, error.error_code) == (True, "tool.error_result")
        assert "Invalid timezone" in (error.error_message or "")
        (pid,) = child_processes(SERVER)

        kill_on_tool[0] = True
        killed = await harness.send("and in UTC?")
        kill_on_tool[0] = False
        (lost,) = [e for e in killed.events if isinstance(e, ToolExecuted)]
        assert (lost.is_error, lost.error_code) == (True, "mcp.server_unavailable")
        assert "restarted on the next call" in (lost.error_message or "")
        tool_texts = [m["content"] for m in model.requests[-1].messages if m["role"] == "tool"]
        assert tool_texts[-1] == f"Error: {lost.error_message}"

        back = await harness.send("try again")
        (again,) = [e for e in back.events if isinstance(e, ToolExecuted)]
        assert (again.is_error, again.mcp_server) == (False, "time")
        (restarted,) = child_processes(SERVER)
        assert restarted != pid
        assert runtime.servers.generation("time") == 2
        listing = runtime.servers.cache.latest("time")
        assert listing is not None and listing.generation == 2  # listed again on restart

        os.kill(restarted, signal.SIGKILL)  # dies while idle: noticed, restarted next turn
        connection = runtime.servers.connection("time")
        assert connection is not None
        await wait_until(lambda: not connection.alive)
        idle = await harness.send("and in Tokyo?")
        (tokyo,) = [e for e in idle.events if isinstance(e, ToolExecuted)]
        assert (tokyo.is_error, runtime.servers.generation("time")) == (False, 3)
        model.assert_complete()
    finally:
        await runtime.close()
    assert child_processes(SERVER) == []
