"""A provider that echoes the API key in its error never puts the key in a Keel error.

The error a model raises ends up in the turn's `turn_ended` detail (the event log) and in
the server log with its traceback, so neither its message nor any exception it chains
may hold the key.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator

import pytest
from anthropic_server import FakeAnthropicServer
from anthropic_server import serve as serve_anthropic
from openai_server import FakeOpenAIServer
from openai_server import serve as serve_openai

from keel.llm import ModelRequest, user_message
from keel.llm.anthropic import AnthropicModel
from keel.llm.errors import AuthenticationFailed, ModelError, without_secret
from keel.llm.openai import OpenAIChatModel

SECRET = "sk-live-TOPSECRET888"
REQUEST = ModelRequest(messages=(user_message("hi"),))


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    with serve_openai() as fake:
        yield fake


@pytest.fixture
def anthropic_server() -> Iterator[FakeAnthropicServer]:
    with serve_anthropic() as fake:
        yield fake


def _shown(error: BaseException) -> str:
    """Everything a log line with the traceback would show."""
    return "".join(traceback.format_exception(error))


@pytest.mark.parametrize("streaming", [False, True], ids=["complete", "stream"])
async def test_openai_errors_never_show_the_key(
    openai_server: FakeOpenAIServer, streaming: bool
) -> None:
    openai_server.reply_error(401, f"Incorrect API key provided: {SECRET}.", type="invalid")
    model = OpenAIChatModel(model="gpt-test", api_key=SECRET, base_url=openai_server.base_url)
    try:
        with pytest.raises(AuthenticationFailed) as caught:
            if streaming:
                async for _ in model.stream(REQUEST):
                    pass
            else:
                await model.complete(REQUEST)
    finally:
        await model.aclose()
    assert openai_server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert "Incorrect API key provided: [redacted]" in str(caught.value)
    assert SECRET not in _shown(caught.value)


@pytest.mark.parametrize("streaming", [False, True], ids=["complete", "stream"])
async def test_anthropic_errors_never_show_the_key(
    anthropic_server: FakeAnthropicServer, streaming: bool
) -> None:
    anthropic_server.reply_error(401, "authentication_error", f"invalid x-api-key {SECRET}")
    model = AnthropicModel(model="claude-test", api_key=SECRET, base_url=anthropic_server.base_url)
    with pytest.raises(AuthenticationFailed) as caught:
        if streaming:
            async for _ in model.stream(REQUEST):
                pass
        else:
            await model.complete(REQUEST)
    assert "invalid x-api-key [redacted]" in str(caught.value)
    assert SECRET not in _shown(caught.value)


def test_without_secret_scrubs_the_whole_chain_and_ignores_short_placeholders() -> None:
    with pytest.raises(ModelError) as caught:
        try:
            raise ValueError(f"echo {SECRET}")
        except ValueError as inner:
            raise ModelError(f"failed: {SECRET}") from inner
    assert without_secret(caught.value, SECRET) is caught.value
    assert SECRET not in _shown(caught.value)
    assert "echo [redacted]" in _shown(caught.value)
    assert str(without_secret(ModelError("key abc"), "abc")) == "key abc"
    assert str(without_secret(ModelError("key abc"), None)) == "key abc"
