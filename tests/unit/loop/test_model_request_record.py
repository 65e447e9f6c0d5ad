"""`model_called.metadata.request`: the messages and tool names sent, as frozen JSON; replays
compare runs without it (the system prompt shows the clock's date)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from keel.events.base import to_plain
from keel.events.codec import decode_event, encode_event
from keel.events.model import ModelCalled
from keel.ids import FakeClock
from keel.llm.port import (
    ModelRequest,
    ToolCall,
    ToolSchema,
    assistant_message,
    system_message,
    tool_message,
    user_message,
)
from keel.loop.model_call import request_record
from keel.replay.run import replay
from keel.testing import ConversationHarness, ScriptedModel

AGENT = Path(__file__).resolve().parents[3] / "examples" / "support"


def test_the_record_keeps_roles_contents_tool_calls_and_tool_names() -> None:
    call = ToolCall(id="call-1", name="find_outage", arguments='{"postcode": "LN4 7QP"}')
    request = ModelRequest(
        messages=(
            system_message("You are Wren."),
            user_message("my internet is down"),
            assistant_message(None, (call,)),
            tool_message("call-1", '{"status": "outage"}'),
        ),
        tools=(
            ToolSchema(name="activate", description="start a skill", parameters={"type": "object"}),
            ToolSchema(name="set_fields", description="fill fields", parameters={}),
        ),
        tier="router",
    )
    record = to_plain(request_record(request))
    assert record == {
        "messages": [
            {"role": "system", "content": "You are Wren."},
            {"role": "user", "content": "my internet is down"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call-1",
                        "type": "function",
                        "function": {"name": "find_outage", "arguments": '{"postcode": "LN4 7QP"}'},
                    }
                ],
            },
            {"role": "tool", "content": '{"status": "outage"}', "tool_call_id": "call-1"},
        ],
        "tools": ["activate", "set_fields"],
    }
    event = ModelCalled(
        model="m",
        tier="router",
        input_tokens=1,
        output_tokens=1,
        latency_ms=1.0,
        metadata={"request": request_record(request)},
    )
    encoded = encode_event(event)
    assert json.loads(json.dumps(encoded)) == encoded
    assert decode_event(encoded) == event


async def test_a_log_recorded_at_another_time_replays_the_same() -> None:
    harness = ConversationHarness(
        AGENT,
        ScriptedModel.from_file(AGENT / "scripts" / "plan_change.yml"),
        clock=FakeClock(datetime(2025, 5, 5, tzinfo=UTC)),
    )
    for text in ("/session_start", "I'd like a faster plan", "BW100234"):
        await harness.send(text)
    calls = [e for e in harness.events if isinstance(e, ModelCalled)]
    assert calls and all("2025" in str(to_plain(e.metadata["request"])) for e in calls)
    report = await replay(harness.definition, harness.events)
    assert report.same, "\n".join(report.diff)
