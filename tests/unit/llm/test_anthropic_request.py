"""Converting OpenAI-format requests to Messages API parameters (no network)."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from keel.llm import (
    ModelRequest,
    ToolCall,
    ToolSchema,
    assistant_message,
    system_message,
    tool_message,
    user_message,
)
from keel.llm.anthropic_request import to_anthropic, tool_input, tool_param


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"a": 1, "b": [1, 2]}', {"a": 1, "b": [1, 2]}),
        ("", {}),
        ("   ", {}),
        ('{"a": ', {}),  # malformed JSON
        ("[1, 2]", {}),  # valid JSON, but the API takes only objects
        ('"text"', {}),
    ],
)
def test_tool_input(arguments: str, expected: dict[str, object]) -> None:
    assert tool_input(arguments) == expected


def test_tool_param_keeps_a_declared_type_and_copies_read_only_values() -> None:
    schema = MappingProxyType(
        {"type": "object", "properties": MappingProxyType({"x": {"enum": ("a", "b")}})}
    )

    param = tool_param(ToolSchema(name="pick", description="Pick one.", parameters=schema))

    assert param == {
        "name": "pick",
        "description": "Pick one.",
        "input_schema": {"type": "object", "properties": {"x": {"enum": ["a", "b"]}}},
    }


def test_no_system_and_no_tools() -> None:
    converted = to_anthropic(ModelRequest(messages=(user_message("hi"),)))

    assert converted.system is None
    assert converted.tools == ()


def test_a_user_message_after_tool_results_joins_their_turn_after_them() -> None:
    call = ToolCall(id="t1", name="f", arguments="{}")
    request = ModelRequest(
        messages=(
            user_message("go"),
            assistant_message(None, (call,)),
            tool_message("t1", "done"),
            user_message("and now?"),
        )
    )

    messages = to_anthropic(request).messages

    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "done"},
        {"type": "text", "text": "and now?"},
    ]


def test_tool_results_open_a_merged_user_turn() -> None:
    call = ToolCall(id="t1", name="f", arguments="{}")
    request = ModelRequest(
        messages=(
            assistant_message(None, (call,)),
            user_message("by the way"),
            tool_message("t1", "done"),
        )
    )

    messages = to_anthropic(request).messages

    assert messages[1]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "done"},
        {"type": "text", "text": "by the way"},
    ]


def test_empty_text_is_left_out_and_empty_turns_dropped() -> None:
    request = ModelRequest(
        messages=(
            system_message(""),
            user_message("hi"),
            assistant_message(""),
            user_message(""),
            user_message("again"),
        )
    )

    converted = to_anthropic(request)

    assert converted.system is None
    assert converted.messages == (
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "again"}],
        },
    )
