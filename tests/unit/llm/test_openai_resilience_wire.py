"""Retries and fallbacks around the real adapter, against the local wire-format server."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from openai_server import FakeOpenAIServer, chunk, completion, serve

from keel.llm import ModelRequest, user_message
from keel.llm.errors import InvalidModelRequest
from keel.llm.openai import OpenAIChatModel
from keel.llm.port import StreamDone, StreamEvent, TextDelta
from keel.llm.resilience import FallbackModel, RetryingModel

REQUEST = ModelRequest(messages=(user_message("hi"),))


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with serve() as fake:
        yield fake


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def adapter(server: FakeOpenAIServer, model: str) -> OpenAIChatModel:
    return OpenAIChatModel(model=model, api_key="sk-test", base_url=server.base_url)


async def test_retry_after_429_and_500(server: FakeOpenAIServer) -> None:
    server.reply_error(429, "Rate limit reached", code="rate_limit_exceeded")
    server.reply_error(500, "The server had an error", type="server_error")
    server.reply_json(completion(content="finally"))
    sleeps = Sleeps()
    model = RetryingModel(adapter(server, "gpt-test"), sleep=sleeps, rng=random.Random(3))

    response = await model.complete(REQUEST)

    assert response.text == "finally"
    assert len(server.requests) == 3
    assert server.bodies()[0] == server.bodies()[2]  # the same request, resent
    assert len(sleeps.delays) == 2


async def test_no_retry_after_400(server: FakeOpenAIServer) -> None:
    server.reply_error(400, "Invalid 'messages'")
    sleeps = Sleeps()

    with pytest.raises(InvalidModelRequest):
        await RetryingModel(adapter(server, "gpt-test"), sleep=sleeps).complete(REQUEST)

    assert (len(server.requests), sleeps.delays) == (1, [])


async def test_stream_retry_after_503(server: FakeOpenAIServer) -> None:
    server.reply_error(503, "overloaded", type="server_error")
    server.reply_stream([chunk({"content": "ok"}), chunk({}, finish_reason="stop")])
    model = RetryingModel(adapter(server, "gpt-test"), sleep=Sleeps())

    events: list[StreamEvent] = [event async for event in model.stream(REQUEST)]

    assert events[0] == TextDelta(text="ok")
    assert isinstance(events[-1], StreamDone)
    assert [body["stream"] for body in server.bodies()] == [True, True]


async def test_context_too_long_falls_back_to_a_bigger_model(server: FakeOpenAIServer) -> None:
    server.reply_error(
        400, "This model's maximum context length is 8192 tokens.", code="context_length_exceeded"
    )
    server.reply_json(completion(content="fits", model="gpt-big-0101"))
    group = FallbackModel([adapter(server, "gpt-small"), adapter(server, "gpt-big")])

    response = await group.complete(REQUEST)

    assert (response.text, response.model) == ("fits", "gpt-big-0101")
    assert [body["model"] for body in server.bodies()] == ["gpt-small", "gpt-big"]
