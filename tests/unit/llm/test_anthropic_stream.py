"""`AnthropicModel.stream` through the real `anthropic` SDK against a local SSE server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from anthropic_server import (
    Event,
    FakeAnthropicServer,
    block_start,
    block_stop,
    error_event,
    json_delta,
    message_delta,
    message_start,
    message_stop,
    ping,
    serve,
    text_block,
    text_delta,
    tool_use_block,
)

from keel.llm import ModelRequest, ToolCall, ToolSchema, Usage, user_message
from keel.llm.anthropic import AnthropicModel
from keel.llm.errors import (
    ContextTooLong,
    ModelError,
    ModelTimeout,
    ProviderUnavailable,
    RateLimited,
)
from keel.llm.port import StreamDone, StreamEvent, TextDelta, ToolCallDelta

REQUEST = ModelRequest(messages=(user_message("hi"),))


@pytest.fixture
def server() -> Iterator[FakeAnthropicServer]:
    with serve() as fake:
        yield fake


def _model(server: FakeAnthropicServer, *, timeout: float = 5.0) -> AnthropicModel:
    return AnthropicModel(
        model="claude-test", api_key="sk-ant-test", base_url=server.base_url, timeout=timeout
    )


async def _collect(model: AnthropicModel, request: ModelRequest = REQUEST) -> list[StreamEvent]:
    return [event async for event in model.stream(request)]


def _text_stream(*pieces: str) -> list[Event]:
    return [
        message_start(input_tokens=30),
        block_start(0, text_block("")),
        ping(),
        *(text_delta(0, piece) for piece in pieces),
        block_stop(0),
        message_delta("end_turn", output_tokens=6),
        message_stop(),
    ]


async def test_text_stream(server: FakeAnthropicServer) -> None:
    server.reply_stream(_text_stream("Hel", "lo", " world"))

    events = await _collect(_model(server))

    assert events[:-1] == [TextDelta(text="Hel"), TextDelta(text="lo"), TextDelta(text=" world")]
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.response.text == "Hello world"
    assert done.response.tool_calls == ()
    assert done.response.stop_reason == "end_turn"
    assert done.response.usage == Usage(input_tokens=30, output_tokens=6)
    assert done.response.model == "claude-test-20250101"
    assert server.bodies()[0]["stream"] is True


async def test_tool_input_deltas(server: FakeAnthropicServer) -> None:
    server.reply_stream(
        [
            message_start(),
            block_start(0, text_block("")),
            text_delta(0, "Looking."),
            block_stop(0),
            block_start(1, tool_use_block("toolu_1", "lookup_order", {})),
            json_delta(1, ""),
            json_delta(1, '{"order_id": '),
            json_delta(1, '"A-17"}'),
            block_stop(1),
            block_start(2, tool_use_block("toolu_2", "ping", {})),
            block_stop(2),
            message_delta("tool_use", output_tokens=40),
            message_stop(),
        ]
    )
    request = ModelRequest(
        messages=(user_message("where?"),),
        tools=(ToolSchema(name="lookup_order", description="Find.", parameters={}),),
    )

    events = await _collect(_model(server), request)

    assert events[:-1] == [
        TextDelta(text="Looking."),
        ToolCallDelta(index=0, id="toolu_1", name="lookup_order"),
        ToolCallDelta(index=0, arguments='{"order_id": '),
        ToolCallDelta(index=0, arguments='"A-17"}'),
        ToolCallDelta(index=1, id="toolu_2", name="ping"),
    ]
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.response.text == "Looking."
    assert done.response.stop_reason == "tool_use"
    assert done.response.tool_calls == (
        ToolCall(id="toolu_1", name="lookup_order", arguments='{"order_id": "A-17"}'),
        ToolCall(id="toolu_2", name="ping", arguments="{}"),
    )
    assert json.loads(done.response.tool_calls[0].arguments) == {"order_id": "A-17"}
    assert server.bodies()[0]["tools"][0]["name"] == "lookup_order"


@pytest.mark.parametrize(
    ("error_type", "message", "expected", "status"),
    [
        ("overloaded_error", "Overloaded", ProviderUnavailable, 529),
        ("api_error", "Internal server error", ProviderUnavailable, 500),
        ("rate_limit_error", "Slow down", RateLimited, 429),
        ("invalid_request_error", "prompt is too long: 9 tokens > 8 maximum", ContextTooLong, 400),
    ],
)
async def test_error_event_mid_stream(
    server: FakeAnthropicServer,
    error_type: str,
    message: str,
    expected: type[ModelError],
    status: int,
) -> None:
    server.reply_stream(
        [
            message_start(),
            block_start(0, text_block("")),
            text_delta(0, "Par"),
            error_event(error_type, message),
        ]
    )
    seen: list[StreamEvent] = []

    with pytest.raises(expected) as caught:
        async for event in _model(server).stream(REQUEST):
            seen.append(event)

    assert seen == [TextDelta(text="Par")]
    error = caught.value
    assert getattr(error, "status", None) == status
    assert getattr(error, "provider", None) == "anthropic"
    assert message in str(error)


async def test_http_error_before_the_stream(server: FakeAnthropicServer) -> None:
    server.reply_error(429, "rate_limit_error", "Number of requests exceeded")

    with pytest.raises(RateLimited) as caught:
        await _collect(_model(server))

    assert caught.value.status == 429
    assert len(server.requests) == 1


async def test_stream_cut_before_message_stop(server: FakeAnthropicServer) -> None:
    server.reply_stream([message_start(), block_start(0, text_block("")), text_delta(0, "Hi")])

    with pytest.raises(ProviderUnavailable, match="message_stop"):
        await _collect(_model(server))


async def test_stalled_stream_times_out(server: FakeAnthropicServer) -> None:
    server.reply_stream([message_start(), block_start(0, text_block(""))], stall=True)

    with pytest.raises(ModelTimeout) as caught:
        await _collect(_model(server, timeout=0.2))

    assert caught.value.retryable


async def test_consumer_may_stop_early(server: FakeAnthropicServer) -> None:
    server.reply_stream(_text_stream("one", "two"))
    stream = _model(server).stream(REQUEST)

    first = await anext(stream)
    await stream.aclose()  # type: ignore[attr-defined]

    assert first == TextDelta(text="one")
