"""The model port values and chat-message helpers."""

from __future__ import annotations

import dataclasses
import json

import pytest

from keel.errors import RunError
from keel.llm import (
    ModelError,
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


def test_response_defaults() -> None:
    response = ModelResponse(text="hi")
    assert response.tool_calls == ()
    assert response.stop_reason == "end_turn"
    assert response.usage == Usage(input_tokens=0, output_tokens=0)
    assert response.model == ""


def test_request_defaults_and_frozen() -> None:
    request = ModelRequest(messages=(user_message("hi"),))
    assert request.tools == ()
    assert request.tier == "default"
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.tier = "router"  # type: ignore[misc]


def test_values_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        ToolCall("c1", "x", "{}")  # type: ignore[call-arg]


def test_response_to_message_with_tool_calls() -> None:
    call = ToolCall(id="c1", name="lookup", arguments='{"id": 1}')
    message = ModelResponse(text=None, tool_calls=(call,)).to_message()
    assert message == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "lookup", "arguments": '{"id": 1}'},
            }
        ],
    }
    json.dumps(message)  # plain JSON, ready for a provider


def test_assistant_message_without_calls_has_no_tool_calls_key() -> None:
    assert assistant_message("done") == {"role": "assistant", "content": "done"}


def test_other_message_helpers() -> None:
    assert system_message("s") == {"role": "system", "content": "s"}
    assert user_message("u") == {"role": "user", "content": "u"}
    assert tool_message("c1", "ok") == {"role": "tool", "tool_call_id": "c1", "content": "ok"}


def test_tool_schema_holds_parameters() -> None:
    schema = ToolSchema(name="x", description="d", parameters={"type": "object"})
    assert schema.parameters["type"] == "object"


def test_model_error_is_a_run_error() -> None:
    assert issubclass(ModelError, RunError)
    assert ModelError.code == "keel.model"
