"""Provider failures through the real `openai` SDK become Keel's model errors."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator

import openai
import pytest
from openai_server import FakeOpenAIServer, serve

from keel.llm import ModelRequest, user_message
from keel.llm.errors import (
    AuthenticationFailed,
    ContextTooLong,
    InvalidModelRequest,
    ModelError,
    ModelTimeout,
    ProviderError,
    ProviderUnavailable,
    RateLimited,
)
from keel.llm.openai import OpenAIChatModel

REQUEST = ModelRequest(messages=(user_message("hi"),))


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with serve() as fake:
        yield fake


@pytest.fixture
async def model(server: FakeOpenAIServer) -> AsyncIterator[OpenAIChatModel]:
    chat = OpenAIChatModel(model="gpt-test", api_key="sk-test", base_url=server.base_url)
    yield chat
    await chat.aclose()


OPENAI_OVERFLOW = "This model's maximum context length is 8192 tokens."
VLLM_OVERFLOW = "This model's maximum context length is 4096 tokens. However, you requested 5000"
LLAMA_CPP_OVERFLOW = "the request exceeds the available context size, try increasing it"


@pytest.mark.parametrize(
    ("status", "message", "code", "expected", "retryable"),
    [
        (400, "Invalid value for 'messages'.", None, InvalidModelRequest, False),
        (400, OPENAI_OVERFLOW, "context_length_exceeded", ContextTooLong, False),
        (400, VLLM_OVERFLOW, None, ContextTooLong, False),
        (400, LLAMA_CPP_OVERFLOW, None, ContextTooLong, False),
        (404, "The model `nope` does not exist", "model_not_found", InvalidModelRequest, False),
        (413, "Request too large", None, ContextTooLong, False),
        (401, "Incorrect API key provided", "invalid_api_key", AuthenticationFailed, False),
        (403, "Project does not have access", None, AuthenticationFailed, False),
        (429, "Rate limit reached", "rate_limit_exceeded", RateLimited, True),
        (500, "The server had an error", None, ProviderUnavailable, True),
        (503, "Service overloaded", None, ProviderUnavailable, True),
    ],
)
async def test_status_errors_map_to_the_error_tree(
    server: FakeOpenAIServer,
    model: OpenAIChatModel,
    status: int,
    message: str,
    code: str | None,
    expected: type[ProviderError],
    retryable: bool,
) -> None:
    server.reply_error(status, message, code=code)

    with pytest.raises(ModelError) as caught:
        await model.complete(REQUEST)

    error = caught.value
    assert type(error) is expected
    assert isinstance(error, ProviderError)
    assert (error.status, error.provider, error.retryable) == (status, "openai", retryable)
    assert message in str(error)
    assert isinstance(error.__cause__, openai.APIStatusError)
    assert len(server.requests) == 1  # the SDK did not retry on its own


async def test_timeout(server: FakeOpenAIServer) -> None:
    """The server never answers; the client's timeout is what is under test."""
    chat = OpenAIChatModel(
        model="gpt-test", api_key="sk-test", base_url=server.base_url, timeout=0.2
    )
    server.reply_hang()

    with pytest.raises(ModelTimeout) as caught:
        await chat.complete(REQUEST)
    await chat.aclose()

    assert caught.value.retryable
    assert isinstance(caught.value.__cause__, openai.APITimeoutError)
    assert len(server.requests) == 1


async def test_streaming_timeout(server: FakeOpenAIServer) -> None:
    chat = OpenAIChatModel(
        model="gpt-test", api_key="sk-test", base_url=server.base_url, timeout=0.2
    )
    server.reply_hang()

    with pytest.raises(ModelTimeout):
        [event async for event in chat.stream(REQUEST)]
    await chat.aclose()


async def test_connection_refused() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    chat = OpenAIChatModel(model="gpt-test", base_url=f"http://127.0.0.1:{port}/v1")

    with pytest.raises(ProviderUnavailable) as caught:
        await chat.complete(REQUEST)
    await chat.aclose()

    assert (caught.value.status, caught.value.provider) == (None, "openai")
    assert isinstance(caught.value.__cause__, openai.APIConnectionError)


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"<html>proxy error</html>", "text/html"),  # the SDK hands back the text
        (b'{"id": "x", "choi', "application/json"),  # the SDK fails to decode it
    ],
)
async def test_a_reply_that_is_not_a_completion(
    server: FakeOpenAIServer, model: OpenAIChatModel, body: bytes, content_type: str
) -> None:
    server.reply_raw(body, content_type=content_type)

    with pytest.raises(ProviderUnavailable, match="malformed response"):
        await model.complete(REQUEST)
