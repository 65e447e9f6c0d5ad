"""Value matching between test expectations and events."""

from __future__ import annotations

from keel.events.base import JsonValue
from keel.events.model import MemorySet, ToolExecuted, UserMessage
from keel.testing.conversation.matching import (
    describe_event,
    event_matches,
    find_in_order,
    matches,
    same_json,
)
from keel.testing.conversation.spec import EventPattern


def _tool(name: str, **arguments: JsonValue) -> ToolExecuted:
    return ToolExecuted(
        tool_name=name,
        arguments=arguments,
        source="local",
        result="found it",
        is_error=False,
        tool_call_id="c1",
    )


def test_same_json_numbers_and_booleans() -> None:
    assert same_json(1, 1.0)
    assert not same_json(True, 1)
    assert not same_json(1, True)
    assert same_json(None, None)
    assert not same_json(None, "")
    assert not same_json("1", 1)


def test_same_json_containers_are_exact() -> None:
    event = MemorySet(key="k", value={"a": [1, {"b": True}]})
    assert same_json(event.value, {"a": [1, {"b": True}]})
    assert not same_json(event.value, {"a": [1, {"b": True}], "c": 1})
    assert not same_json(event.value, {"a": [1]})
    assert not same_json({"a": 1, "extra": 2}, {"a": 1})


def test_matches_is_subset_for_mappings_and_searches_patterns() -> None:
    assert matches({"a": 1, "extra": 2}, {"a": 1})
    assert not matches({"a": 1}, {"a": 1, "b": 2})
    assert matches("Order PX-1 shipped", "re:PX-\\d")
    assert not matches("Order shipped", "re:PX-\\d")
    assert not matches(5, "re:5")
    assert matches([{"a": 1, "b": 2}], [{"a": 1}])
    assert not matches([1, 2], [1])


def test_event_matches_kind_and_fields() -> None:
    event = _tool("lookup", id="PX-1", verbose=True)
    assert event_matches(event, EventPattern(kind="tool_executed"))
    assert event_matches(
        event, EventPattern(kind="tool_executed", fields=(("arguments", {"id": "PX-1"}),))
    )
    assert not event_matches(event, EventPattern(kind="mcp_tool_executed"))
    assert not event_matches(event, EventPattern(kind="tool_executed", fields=(("nope", 1),)))
    assert not event_matches(
        event, EventPattern(kind="tool_executed", fields=(("tool_name", "other"),))
    )


def test_find_in_order_is_a_subsequence() -> None:
    events = [_tool("a"), _tool("b"), _tool("a"), _tool("c")]
    a, b, c = (EventPattern(kind="tool_executed", fields=(("tool_name", n),)) for n in "abc")
    assert find_in_order(events, [a, c]) == (0, 3)
    assert find_in_order(events, [b, a]) == (1, 2)
    assert find_in_order(events, [c, a]) == (3,)
    assert find_in_order(events, []) == ()


def test_describe_event_skips_defaults_and_clips() -> None:
    text = describe_event(UserMessage(text="x" * 100, message_id="m1"), 4)
    assert text.startswith("#5 user_message text='xxx")
    assert "…" in text
    assert "input_channel" not in text and "timestamp" not in text
    assert "message_id='m1'" in text
