"""`OpenAIChatModel.complete` through the real `openai` SDK against a local wire-format server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from types import MappingProxyType

import openai
import pytest
from openai_server import FakeOpenAIServer, completion, serve, tool_call

from keel.llm import (
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
from keel.llm.errors import ProviderUnavailable
from keel.llm.openai import PLACEHOLDER_API_KEY, OpenAIChatModel

LOOKUP = ToolSchema(
    name="lookup_order",
    description="Find an order by id.",
    parameters=MappingProxyType(
        {
            "type": "object",
            "properties": {"order_id": MappingProxyType({"type": "string"})},
            "required": ("order_id",),
        }
    ),
)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with serve() as fake:
        yield fake


@pytest.fixture
async def model(server: FakeOpenAIServer) -> AsyncIterator[OpenAIChatModel]:
    chat = OpenAIChatModel(model="gpt-test", api_key="sk-test", base_url=server.base_url)
    yield chat
    await chat.aclose()


def hello() -> ModelRequest:
    return ModelRequest(messages=(system_message("Be brief."), user_message("hi")))


async def test_plain_reply(server: FakeOpenAIServer, model: OpenAIChatModel) -> None:
    server.reply_json(completion(content="Hello!", usage=(12, 3), model="gpt-test-0613"))

    response = await model.complete(hello())

    assert response == ModelResponse(
        text="Hello!",
        stop_reason="end_turn",
        usage=Usage(input_tokens=12, output_tokens=3),
        model="gpt-test-0613",
    )
    [received] = server.requests
    assert received.path == "/v1/chat/completions"
    assert received.headers["authorization"] == "Bearer sk-test"
    assert received.body == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hi"},
        ],
    }
    assert received.headers["x-stainless-retry-count"] == "0"


async def test_tools_are_sent_as_function_tools_and_history_passes_through(
    server: FakeOpenAIServer, model: OpenAIChatModel
) -> None:
    earlier = ToolCall(id="call_1", name="lookup_order", arguments='{"order_id": "A1"}')
    messages = (
        user_message("where is A1?"),
        assistant_message(None, (earlier,)),
        tool_message("call_1", '{"status": "shipped"}'),
    )
    server.reply_json(completion(content="It shipped."))

    await model.complete(ModelRequest(messages=messages, tools=(LOOKUP,)))

    body = server.requests[0].body
    assert body["messages"] == [dict(message) for message in messages]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "lookup_order",
                "description": "Find an order by id.",
                "parameters": {
                    "type": "object",
                    "properties": {"order_id": {"type": "string"}},
                    "required": ["order_id"],
                },
            },
        }
    ]


async def test_tool_calls_reply(server: FakeOpenAIServer, model: OpenAIChatModel) -> None:
    calls = [
        tool_call("lookup_order", '{"order_id": "A1"}', id="call_x1"),
        tool_call("lookup_order", '{"order_id":', id="call_x2"),
    ]
    server.reply_json(completion(content=None, tool_calls=calls, finish_reason="tool_calls"))

    response = await model.complete(ModelRequest(messages=(user_message("hi"),), tools=(LOOKUP,)))

    assert response.text is None
    assert response.stop_reason == "tool_use"
    # Arguments stay the raw text the model sent, even when it is not valid JSON.
    assert response.tool_calls == (
        ToolCall(id="call_x1", name="lookup_order", arguments='{"order_id": "A1"}'),
        ToolCall(id="call_x2", name="lookup_order", arguments='{"order_id":'),
    )


@pytest.mark.parametrize(
    ("finish_reason", "stop_reason"),
    [
        ("stop", "end_turn"),
        ("length", "max_tokens"),
        ("content_filter", "refusal"),
        ("tool_calls", "tool_use"),
        (None, "end_turn"),
    ],
)
async def test_finish_reasons_map_to_stop_reasons(
    server: FakeOpenAIServer, model: OpenAIChatModel, finish_reason: str | None, stop_reason: str
) -> None:
    server.reply_json(completion(content="...", finish_reason=finish_reason))

    response = await model.complete(hello())

    assert response.stop_reason == stop_reason


async def test_refusal_becomes_the_text(server: FakeOpenAIServer, model: OpenAIChatModel) -> None:
    body = completion(content=None)
    body["choices"][0]["message"]["refusal"] = "I can't help with that."
    server.reply_json(body)

    response = await model.complete(hello())

    assert (response.text, response.stop_reason) == ("I can't help with that.", "refusal")


async def test_reasoning_effort_and_extra_body_are_sent(server: FakeOpenAIServer) -> None:
    chat = OpenAIChatModel(
        model="o-test",
        api_key="sk-test",
        base_url=server.base_url,
        reasoning_effort="low",
        extra_body=MappingProxyType({"top_k": 20, "chat_template_kwargs": {"think": False}}),
    )
    server.reply_json(completion(content="ok"))

    await chat.complete(hello())
    await chat.aclose()

    body = server.requests[0].body
    assert body["reasoning_effort"] == "low"
    assert body["top_k"] == 20
    assert body["chat_template_kwargs"] == {"think": False}


async def test_openai_compatible_server_without_key_ids_usage_or_model(
    server: FakeOpenAIServer,
) -> None:
    """A llama.cpp / Ollama style setup: base_url only, and a sparse reply."""
    chat = OpenAIChatModel(model="qwen2.5:7b", base_url=server.base_url, name="local")
    body = completion(
        tool_calls=[tool_call("a", "{}", id=None), tool_call("b", '{"x": 1}', id="")],
        finish_reason="stop",  # some servers say "stop" even when they call tools
        usage=None,
    )
    del body["model"], body["id"]
    server.reply_json(body)

    response = await chat.complete(hello())
    await chat.aclose()

    assert server.requests[0].headers["authorization"] == f"Bearer {PLACEHOLDER_API_KEY}"
    assert server.requests[0].body["model"] == "qwen2.5:7b"
    assert chat.name == "local"
    assert response == ModelResponse(
        text=None,
        tool_calls=(
            ToolCall(id="call_0", name="a", arguments="{}"),
            ToolCall(id="call_1", name="b", arguments='{"x": 1}'),
        ),
        stop_reason="tool_use",
        usage=Usage(),
        model="qwen2.5:7b",
    )


async def test_injected_client_has_its_retries_turned_off(server: FakeOpenAIServer) -> None:
    client = openai.AsyncOpenAI(api_key="sk-own", base_url=server.base_url, max_retries=5)
    chat = OpenAIChatModel(model="gpt-test", client=client)
    server.reply_error(500, "boom", type="server_error")

    with pytest.raises(ProviderUnavailable):
        await chat.complete(hello())

    assert len(server.requests) == 1
    assert server.requests[0].headers["authorization"] == "Bearer sk-own"
    await client.close()


@pytest.mark.parametrize(
    "body",
    [
        {"id": "x", "object": "chat.completion", "model": "m", "choices": []},
        {"unexpected": True},
    ],
)
async def test_a_reply_without_choices_is_a_provider_failure(
    server: FakeOpenAIServer, model: OpenAIChatModel, body: dict[str, object]
) -> None:
    server.reply_json(body)

    with pytest.raises(ProviderUnavailable, match="malformed response") as caught:
        await model.complete(hello())

    assert caught.value.provider == "openai"
