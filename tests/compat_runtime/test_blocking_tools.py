"""Blocking tools do not stall the server: while one conversation's tool is blocked in
synchronous sqlite-style code (held by a `threading.Event` the test controls), another
conversation of the same process is served; then the blocked call finishes normally.

No sleeps and no timing thresholds: the blocked call waits on `GATE` until the test opens
it, so "served meanwhile" is an ordering fact, not a measured time.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

from keel.events.model import BotMessage, ToolExecuted
from keel.stores.memory import InMemoryEventStore
from keel.testing import ConversationHarness, ScriptedModel

AGENT = Path(__file__).parent / "agents" / "blocking"
ACTIVATE_LEDGER = {"tool_calls": [{"name": "activate", "arguments": {"target_id": "ledger"}}]}
READ = {"tool_calls": [{"name": "read_ledger"}]}


def _tools(harness: ConversationHarness) -> SimpleNamespace:
    """The globals this harness's tool runs with (each load imports its own copy)."""
    skill = harness.definition.skill("ledger")
    assert skill is not None
    return SimpleNamespace(**skill.tools["read_ledger"].func.__globals__)


async def test_another_conversation_is_served_while_a_tool_blocks() -> None:
    store = InMemoryEventStore()
    blocked = ConversationHarness(
        AGENT,
        ScriptedModel([ACTIVATE_LEDGER, READ, "You have 120."]),
        store=store,
        conversation_id="c-blocked",
    )
    other = ConversationHarness(
        AGENT, ScriptedModel(["Hello there!"]), store=store, conversation_id="c-other"
    )
    tools = _tools(blocked)
    assert blocked.definition.skill("ledger").tools["read_ledger"].runs_in_thread  # type: ignore[union-attr]
    for event in (tools.GATE, tools.STARTED, tools.RELEASED):
        event.clear()
    try:
        turn = asyncio.ensure_future(blocked.send("my balance"))
        # The tool has started and is blocked on the gate (waited for off the loop).
        assert await asyncio.to_thread(tools.STARTED.wait, 10)
        served = await other.send("hello")
        assert [e.text for e in served.events if isinstance(e, BotMessage)] == ["Hello there!"]
        # The tool is still blocked: the other conversation did not wait for it.
        assert not tools.RELEASED.is_set()
        assert not turn.done()
    finally:
        tools.GATE.set()
    result = await turn
    runs = [
        e for e in result.events if isinstance(e, ToolExecuted) and e.tool_name == "read_ledger"
    ]
    assert [(r.is_error, r.result) for r in runs] == [(False, '{"balance":120,"ok":true}')]
    assert [e.text for e in result.events if isinstance(e, BotMessage)][-1] == "You have 120."
