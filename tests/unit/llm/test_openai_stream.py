"""`OpenAIChatModel.stream` through the real `openai` SDK against a local SSE server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from openai_server import FakeOpenAIServer, chunk, serve, tool_delta

from keel.llm import ModelRequest, ModelResponse, ToolCall, ToolSchema, Usage, user_message
from keel.llm.errors import ContextTooLong, ProviderUnavailable, RateLimited
from keel.llm.openai import OpenAIChatModel
from keel.llm.port import StreamDone, StreamEvent, TextDelta, ToolCallDelta

WEATHER = ToolSchema(
    name="weather",
    description="Weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
REQUEST = ModelRequest(messages=(user_message("weather in Oslo and Rome?"),), tools=(WEATHER,))


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with serve() as fake:
        yield fake


@pytest.fixture
async def model(server: FakeOpenAIServer) -> AsyncIterator[OpenAIChatModel]:
    chat = OpenAIChatModel(model="gpt-test", api_key="sk-test", base_url=server.base_url)
    yield chat
    await chat.aclose()


async def collect(events: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in events]


async def test_text_stream(server: FakeOpenAIServer, model: OpenAIChatModel) -> None:
    server.reply_stream(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": "Hel"}),
            chunk({"content": "lo"}),
            chunk({}, finish_reason="stop"),
            chunk(None, usage=(9, 2)),  # the include_usage chunk: no choices
        ]
    )

    events = await collect(model.stream(REQUEST))

    assert events == [
        TextDelta(text="Hel"),
        TextDelta(text="lo"),
        StreamDone(
            response=ModelResponse(
                text="Hello",
                stop_reason="end_turn",
                usage=Usage(input_tokens=9, output_tokens=2),
                model="gpt-test-2024",
            )
        ),
    ]
    body = server.requests[0].body
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["model"] == "gpt-test"
    assert body["messages"] == [{"role": "user", "content": "weather in Oslo and Rome?"}]
    assert body["tools"][0]["function"]["name"] == "weather"


async def test_tool_call_deltas(server: FakeOpenAIServer, model: OpenAIChatModel) -> None:
    server.reply_stream(
        [
            chunk({"role": "assistant", "content": None}),
            chunk({"tool_calls": [tool_delta(0, id="call_a", name="weather", arguments="")]}),
            chunk({"tool_calls": [tool_delta(0, arguments='{"city":')]}),
            chunk({"tool_calls": [tool_delta(0, arguments=' "Oslo"}')]}),
            chunk({"tool_calls": [tool_delta(1, id="call_b", name="weather", arguments="{")]}),
            chunk({"tool_calls": [tool_delta(1, arguments='"city": "Rome"}')]}),
            chunk({}, finish_reason="tool_calls"),
            chunk(None, usage=(30, 12)),
        ]
    )

    events = await collect(model.stream(REQUEST))

    assert events[:-1] == [
        ToolCallDelta(index=0, id="call_a", name="weather", arguments=""),
        ToolCallDelta(index=0, arguments='{"city":'),
        ToolCallDelta(index=0, arguments=' "Oslo"}'),
        ToolCallDelta(index=1, id="call_b", name="weather", arguments="{"),
        ToolCallDelta(index=1, arguments='"city": "Rome"}'),
    ]
    assert events[-1] == StreamDone(
        response=ModelResponse(
            text=None,
            tool_calls=(
                ToolCall(id="call_a", name="weather", arguments='{"city": "Oslo"}'),
                ToolCall(id="call_b", name="weather", arguments='{"city": "Rome"}'),
            ),
            stop_reason="tool_use",
            usage=Usage(input_tokens=30, output_tokens=12),
            model="gpt-test-2024",
        )
    )


async def test_text_then_tool_call(server: FakeOpenAIServer, model: OpenAIChatModel) -> None:
    server.reply_stream(
        [
            chunk({"content": "Checking."}),
            chunk({"tool_calls": [tool_delta(0, id="call_a", name="weather", arguments="{}")]}),
            chunk({}, finish_reason="tool_calls"),
        ]
    )

    events = await collect(model.stream(REQUEST))

    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.response.text == "Checking."
    assert done.response.tool_calls == (ToolCall(id="call_a", name="weather", arguments="{}"),)
    assert done.response.to_message() == {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
        ],
    }


async def test_compatible_server_quirks_in_a_stream(server: FakeOpenAIServer) -> None:
    """No key, no ids, no index on a one-piece call, no usage chunk, no [DONE]."""
    chat = OpenAIChatModel(model="llama-3.1-8b", base_url=server.base_url)
    server.reply_stream(
        [
            chunk({"tool_calls": [tool_delta(0, name="weather", arguments='{"city"')]}, model=""),
            chunk({"tool_calls": [tool_delta(0, arguments=': "Oslo"}')]}, model=""),
            chunk({"tool_calls": [{"function": {"name": "weather", "arguments": "{}"}}]}, model=""),
            chunk({}, finish_reason="stop", model=""),
        ],
        done=False,
    )

    events = await collect(chat.stream(REQUEST))
    await chat.aclose()

    assert events[:-1] == [
        ToolCallDelta(index=0, id="call_0", name="weather", arguments='{"city"'),
        ToolCallDelta(index=0, arguments=': "Oslo"}'),
        ToolCallDelta(index=1, id="call_1", name="weather", arguments="{}"),
    ]
    assert events[-1] == StreamDone(
        response=ModelResponse(
            text=None,
            tool_calls=(
                ToolCall(id="call_0", name="weather", arguments='{"city": "Oslo"}'),
                ToolCall(id="call_1", name="weather", arguments="{}"),
            ),
            stop_reason="tool_use",
            usage=Usage(),
            model="llama-3.1-8b",
        )
    )


async def test_an_error_before_the_stream_starts(
    server: FakeOpenAIServer, model: OpenAIChatModel
) -> None:
    server.reply_error(429, "Rate limit reached", type="requests", code="rate_limit_exceeded")

    with pytest.raises(RateLimited) as caught:
        await collect(model.stream(REQUEST))

    assert (caught.value.status, caught.value.provider) == (429, "openai")


async def test_an_error_event_inside_the_stream(
    server: FakeOpenAIServer, model: OpenAIChatModel
) -> None:
    server.reply_stream(
        [chunk({"content": "Hel"}), {"error": {"message": "overloaded", "type": "server_error"}}]
    )
    seen: list[StreamEvent] = []

    with pytest.raises(ProviderUnavailable, match="overloaded"):
        async for event in model.stream(REQUEST):
            seen.append(event)

    assert seen == [TextDelta(text="Hel")]


async def test_a_context_overflow_reported_inside_the_stream(
    server: FakeOpenAIServer, model: OpenAIChatModel
) -> None:
    error = {
        "message": "too long",
        "type": "invalid_request_error",
        "code": "context_length_exceeded",
    }
    server.reply_stream([{"error": error}])

    with pytest.raises(ContextTooLong):
        await collect(model.stream(REQUEST))


async def test_a_malformed_event_is_a_provider_failure(
    server: FakeOpenAIServer, model: OpenAIChatModel
) -> None:
    server.reply_raw_stream(b"data: {not json\n\n")

    with pytest.raises(ProviderUnavailable, match="malformed response"):
        await collect(model.stream(REQUEST))


@pytest.mark.parametrize(
    "pieces",
    [
        # Cut off mid tool call: no finish_reason, no [DONE].
        (b'data: {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", '
         b'"choices": [{"index": 0, "delta": {"content": "Hel"}, "finish_reason": null}]}\n\n',),
        # A server that ignored `stream: true` and answered one JSON document.
        (b'{"id": "c", "object": "chat.completion", "choices": []}',),
        (),
    ],
)  # fmt: skip
async def test_a_stream_without_a_finish_reason_is_a_provider_failure(
    server: FakeOpenAIServer, model: OpenAIChatModel, pieces: tuple[bytes, ...]
) -> None:
    server.reply_raw_stream(*pieces)

    with pytest.raises(ProviderUnavailable, match="before a finish_reason"):
        await collect(model.stream(REQUEST))
