"""`AnthropicModel.complete` through the real `anthropic` SDK against a local Messages server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from types import MappingProxyType

import anthropic
import pytest
from anthropic_server import (
    FakeAnthropicServer,
    message_body,
    serve,
    text_block,
    tool_use_block,
)

from keel.llm import (
    ModelRequest,
    ToolCall,
    ToolSchema,
    Usage,
    assistant_message,
    system_message,
    tool_message,
    user_message,
)
from keel.llm.anthropic import AnthropicModel
from keel.llm.errors import ProviderUnavailable
from keel.llm.port import StreamingModel


@pytest.fixture
def server() -> Iterator[FakeAnthropicServer]:
    with serve() as fake:
        yield fake


def _model(server: FakeAnthropicServer, **options: object) -> AnthropicModel:
    return AnthropicModel(
        model="claude-test",
        api_key="sk-ant-test",
        base_url=server.base_url,
        **options,  # type: ignore[arg-type]
    )


async def test_plain_reply(server: FakeAnthropicServer) -> None:
    server.reply_json(message_body([text_block("Hello"), text_block(" there")], usage=(21, 4)))

    response = await _model(server).complete(ModelRequest(messages=(user_message("hi"),)))

    assert response.text == "Hello there"
    assert response.tool_calls == ()
    assert response.stop_reason == "end_turn"
    assert response.usage == Usage(input_tokens=21, output_tokens=4)
    assert response.model == "claude-test-20250101"
    [request] = server.requests
    assert request.path == "/v1/messages"
    # The key travels as `x-api-key` or, in recent SDKs, as a bearer token.
    auth = request.headers.get("x-api-key") or request.headers.get("authorization", "")
    assert auth.removeprefix("Bearer ") == "sk-ant-test"
    assert "anthropic-version" in request.headers
    assert request.body == {
        "model": "claude-test",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "stream": False,
    }


async def test_max_tokens_is_sent(server: FakeAnthropicServer) -> None:
    server.reply_json(message_body([text_block("ok")]))

    await _model(server, max_tokens=77).complete(ModelRequest(messages=(user_message("hi"),)))

    assert server.bodies()[0]["max_tokens"] == 77


async def test_tool_use_reply(server: FakeAnthropicServer) -> None:
    server.reply_json(
        message_body(
            [
                text_block("Let me look that up."),
                tool_use_block("toolu_1", "lookup_order", {"order_id": "A-17", "deep": True}),
                tool_use_block("toolu_2", "ping", {}),
            ],
            stop_reason="tool_use",
        )
    )

    response = await _model(server).complete(ModelRequest(messages=(user_message("where?"),)))

    assert response.text == "Let me look that up."
    assert response.stop_reason == "tool_use"
    first, second = response.tool_calls
    assert (first.id, first.name) == ("toolu_1", "lookup_order")
    assert json.loads(first.arguments) == {"order_id": "A-17", "deep": True}
    assert second == ToolCall(id="toolu_2", name="ping", arguments="{}")
    assert response.to_message()["tool_calls"][0]["function"]["name"] == "lookup_order"


@pytest.mark.parametrize(
    ("wire", "keel"),
    [
        ("end_turn", "end_turn"),
        ("stop_sequence", "end_turn"),
        ("max_tokens", "max_tokens"),
        ("refusal", "refusal"),
        ("model_context_window_exceeded", "max_tokens"),
        ("pause_turn", "pause_turn"),
    ],
)
async def test_stop_reasons(server: FakeAnthropicServer, wire: str, keel: str) -> None:
    server.reply_json(message_body([text_block("x")], stop_reason=wire))

    response = await _model(server).complete(ModelRequest(messages=(user_message("hi"),)))

    assert response.stop_reason == keel


async def test_multi_turn_request_with_tool_results(server: FakeAnthropicServer) -> None:
    server.reply_json(message_body([text_block("Order A-17 ships today.")]))
    lookup = ToolCall(id="toolu_1", name="lookup_order", arguments='{"order_id": "A-17"}')
    broken = ToolCall(id="toolu_2", name="ping", arguments='{"half": ')
    request = ModelRequest(
        messages=(
            system_message("You are Keel."),
            user_message("Where is my order?"),
            user_message("It is A-17."),
            assistant_message("Checking.", (lookup, broken)),
            tool_message("toolu_1", '{"status": "shipping"}'),
            tool_message("toolu_2", "pong"),
            system_message("Be brief."),
        ),
        tools=(
            ToolSchema(
                name="lookup_order",
                description="Find an order.",
                parameters=MappingProxyType(
                    {
                        "type": "object",
                        "properties": MappingProxyType({"order_id": {"type": "string"}}),
                        "required": ("order_id",),
                    }
                ),
            ),
            ToolSchema(name="ping", description="", parameters={}),
        ),
    )

    response = await _model(server).complete(request)

    assert response.text == "Order A-17 ships today."
    body = server.bodies()[0]
    # The opening system message is the system parameter; a later one (the prompt's
    # volatile part, after the history) is read in the last user turn.
    assert body["system"] == "You are Keel."
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Where is my order?"},
                {"type": "text", "text": "It is A-17."},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "lookup_order",
                    "input": {"order_id": "A-17"},
                },
                {"type": "tool_use", "id": "toolu_2", "name": "ping", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": '{"status": "shipping"}',
                },
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "pong"},
                {"type": "text", "text": "Be brief."},
            ],
        },
    ]
    assert body["tools"] == [
        {
            "name": "lookup_order",
            "description": "Find an order.",
            "input_schema": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
        {"name": "ping", "input_schema": {"type": "object"}},
    ]


async def test_injected_client_gets_retries_turned_off(server: FakeAnthropicServer) -> None:
    client = anthropic.AsyncAnthropic(
        api_key="sk-ant-test", base_url=server.base_url, max_retries=5
    )
    server.reply_error(500, "api_error", "boom")
    server.reply_json(message_body([text_block("second try")]))
    model = AnthropicModel(model="claude-test", client=client, timeout=5.0)

    with pytest.raises(ProviderUnavailable):
        await model.complete(ModelRequest(messages=(user_message("hi"),)))

    assert len(server.requests) == 1


def test_names_and_protocol() -> None:
    model = AnthropicModel(model="claude-x", api_key="k")
    streaming: StreamingModel = model  # checked by mypy: the adapter is a StreamingModel
    assert streaming is model
    assert (model.name, model.model) == ("anthropic:claude-x", "claude-x")
    assert AnthropicModel(model="claude-x", api_key="k", name="fast").name == "fast"
