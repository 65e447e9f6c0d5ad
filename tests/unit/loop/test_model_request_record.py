"""`model_called.metadata.request`: the messages and tool names sent, as frozen JSON; replays
compare runs without it (the system prompt shows the clock's date)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from keel.events.base import EncodedTuple, NotJsonValue, to_plain
from keel.events.codec import decode_event, dumps_event, encode_event, loads_event
from keel.events.model import ModelCalled
from keel.ids import FakeClock
from keel.llm.port import (
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolSchema,
    Usage,
    assistant_message,
    system_message,
    tool_message,
    user_message,
)
from keel.loop.model_record import model_called, request_record
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


def test_a_message_sent_again_keeps_its_frozen_form_and_new_ones_are_frozen() -> None:
    system = system_message("You are Wren.")
    user = user_message("my internet is down")
    closing = system_message("Answer briefly.")
    first = request_record(ModelRequest(messages=(system, user, closing)))
    result = tool_message("call-1", '{"status": "outage"}')
    again = request_record(ModelRequest(messages=(system, user, result, closing)))
    before, after = first["messages"], again["messages"]
    assert isinstance(before, tuple) and isinstance(after, tuple)
    assert after[0] is before[0] and after[1] is before[1] and after[3] is before[2]
    assert to_plain(after[2]) == to_plain(result)
    # An equal message that is another object is frozen anew (identity, never equality).
    copy = dict(user)
    third = request_record(ModelRequest(messages=(system, copy)))  # type: ignore[arg-type]
    messages = third["messages"]
    assert isinstance(messages, tuple) and messages[1] is not after[1]
    assert messages[1] == after[1]


def test_a_new_message_that_is_not_json_is_refused_with_its_place() -> None:
    system = system_message("You are Wren.")
    request_record(ModelRequest(messages=(system,)))
    bad = user_message("broken \ud800 text")
    with pytest.raises(NotJsonValue, match=r"metadata\.request\.messages\[1\]"):
        request_record(ModelRequest(messages=(system, bad)))


def test_the_event_built_from_frozen_parts_equals_the_one_the_constructor_builds() -> None:
    request = ModelRequest(messages=(system_message("s"), user_message("u")), tier="router")
    response = ModelResponse(text="hi", model="m")
    meta = {"tier_reason": "r", "request": request_record(request), "reply": {"role": "assistant"}}
    event = model_called(request, response, spec=None, elapsed_ms=2.0, metadata=meta)
    plain = ModelCalled(
        model="m",
        tier="router",
        input_tokens=0,
        output_tokens=0,
        latency_ms=2.0,
        metadata={**meta, "request": to_plain(meta["request"])},
    )
    assert event == plain
    assert dumps_event(event) == dumps_event(plain)


def test_a_changed_system_message_keeps_the_history_after_it() -> None:
    history = tuple(user_message(f"message {n}") for n in range(5))
    first = request_record(ModelRequest(messages=(system_message("v1"), *history)))
    again = request_record(ModelRequest(messages=(system_message("v2"), *history)))
    before, after = first["messages"], again["messages"]
    assert isinstance(before, tuple) and isinstance(after, tuple)
    assert to_plain(after[0]) == {"role": "system", "content": "v2"}
    assert all(after[n] is before[n] for n in range(1, 6))


def test_the_messages_carry_their_text_and_the_event_is_written_the_same() -> None:
    call = ToolCall(id="call-1", name="find_outage", arguments='{"postcode": "LN4 7QP"}')
    system = system_message("You are Wren. Ünïcode ✓")
    request_record(ModelRequest(messages=(system,)))
    request = ModelRequest(
        messages=(system, user_message("down"), assistant_message(None, (call,))),
    )
    record = request_record(request)
    messages = record["messages"]
    assert isinstance(messages, EncodedTuple)
    assert json.loads(messages.encoded) == to_plain(messages)
    assert to_plain(record) == {"messages": [dict(m) for m in request.messages], "tools": []}
    event = ModelCalled(
        model="m",
        tier="default",
        input_tokens=1,
        output_tokens=1,
        latency_ms=1.0,
        metadata={"request": to_plain(record)},
    )
    built = model_called(
        request,
        ModelResponse(text=None, model="m", usage=Usage(input_tokens=1, output_tokens=1)),
        spec=None,
        elapsed_ms=1.0,
        metadata={"request": record},
    )
    # Written from the carried text, the line is the one written by walking the messages.
    assert dumps_event(built) == dumps_event(event)
    assert loads_event(dumps_event(built)) == built == event


def test_a_message_only_the_standard_encoder_writes_is_walked() -> None:
    big = {"role": "user", "content": "x", "n": 2**70}
    record = request_record(ModelRequest(messages=(big,)))  # type: ignore[arg-type]
    messages = record["messages"]
    assert type(messages) is tuple
    event = ModelCalled(
        model="m",
        tier="default",
        input_tokens=1,
        output_tokens=1,
        latency_ms=1.0,
        metadata={"request": record},
    )
    assert json.loads(dumps_event(event))["metadata"]["request"]["messages"][0]["n"] == 2**70
