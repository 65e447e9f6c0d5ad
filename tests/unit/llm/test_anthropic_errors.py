"""Provider failures leave `AnthropicModel` as Keel errors, never as SDK exceptions."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import anthropic
import pytest
from anthropic_server import FakeAnthropicServer, serve

from keel.llm import ModelRequest, user_message
from keel.llm.anthropic import AnthropicModel
from keel.llm.anthropic_errors import from_status, translate
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

REQUEST = ModelRequest(messages=(user_message("hi"),))


@pytest.fixture
def server() -> Iterator[FakeAnthropicServer]:
    with serve() as fake:
        yield fake


def _model(server: FakeAnthropicServer, *, timeout: float = 5.0) -> AnthropicModel:
    return AnthropicModel(
        model="claude-test", api_key="sk-ant-test", base_url=server.base_url, timeout=timeout
    )


@pytest.mark.parametrize(
    ("status", "error_type", "message", "expected", "retryable"),
    [
        (400, "invalid_request_error", "max_tokens: 99999 > 8192", InvalidModelRequest, False),
        (
            400,
            "invalid_request_error",
            "prompt is too long: 210883 tokens > 200000 maximum",
            ContextTooLong,
            False,
        ),
        (401, "authentication_error", "invalid x-api-key", AuthenticationFailed, False),
        (403, "permission_error", "no access to this model", AuthenticationFailed, False),
        (404, "not_found_error", "model: claude-nope", InvalidModelRequest, False),
        (429, "rate_limit_error", "Number of request tokens exceeded", RateLimited, True),
        (500, "api_error", "Internal server error", ProviderUnavailable, True),
        (503, "api_error", "Service unavailable", ProviderUnavailable, True),
        (529, "overloaded_error", "Overloaded", ProviderUnavailable, True),
    ],
)
async def test_error_statuses(
    server: FakeAnthropicServer,
    status: int,
    error_type: str,
    message: str,
    expected: type[ProviderError],
    retryable: bool,
) -> None:
    server.reply_error(status, error_type, message)

    with pytest.raises(ModelError) as caught:
        await _model(server).complete(REQUEST)

    error = caught.value
    assert type(error) is expected
    assert isinstance(error, ProviderError)
    assert (error.status, error.provider, error.retryable) == (status, "anthropic", retryable)
    assert message in str(error)
    assert isinstance(error.__cause__, anthropic.APIStatusError)
    assert len(server.requests) == 1  # the SDK's own retries are off


async def test_timeout(server: FakeAnthropicServer) -> None:
    server.reply_hang()

    with pytest.raises(ModelTimeout) as caught:
        await _model(server, timeout=0.2).complete(REQUEST)

    assert caught.value.retryable
    assert isinstance(caught.value.__cause__, anthropic.APITimeoutError)
    assert len(server.requests) == 1


async def test_connection_refused() -> None:
    with socket.socket() as probe:  # a port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = AnthropicModel(model="claude-test", api_key="k", base_url=f"http://127.0.0.1:{port}")

    with pytest.raises(ProviderUnavailable) as caught:
        await model.complete(REQUEST)

    assert (caught.value.status, caught.value.provider) == (None, "anthropic")


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An environment where the SDK finds no key, token or profile."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("ANTHROPIC_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


async def test_missing_credentials(server: FakeAnthropicServer, no_credentials: Path) -> None:
    model = AnthropicModel(model="claude-test", base_url=server.base_url)

    with pytest.raises(AuthenticationFailed, match="ANTHROPIC_API_KEY"):
        await model.complete(REQUEST)
    with pytest.raises(AuthenticationFailed):
        [event async for event in model.stream(REQUEST)]

    assert server.requests == []


async def test_broken_credentials_profile(
    server: FakeAnthropicServer, no_credentials: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A configured (here: empty) profile directory makes the SDK's constructor raise.
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(no_credentials))
    model = AnthropicModel(model="claude-test", base_url=server.base_url)

    with pytest.raises(AuthenticationFailed) as caught:
        await model.complete(REQUEST)

    assert isinstance(caught.value.__cause__, anthropic.CredentialsError)
    assert server.requests == []


@pytest.mark.parametrize(
    ("error_type", "expected", "status"),
    [
        ("overloaded_error", ProviderUnavailable, 529),
        ("api_error", ProviderUnavailable, 500),
        ("rate_limit_error", RateLimited, 429),
        ("authentication_error", AuthenticationFailed, 401),
        ("invalid_request_error", InvalidModelRequest, 400),
        ("request_too_large", InvalidModelRequest, 413),
        ("something_new", ProviderUnavailable, 500),
    ],
)
def test_in_stream_errors_take_the_status_of_their_type(
    error_type: str, expected: type[ProviderError], status: int
) -> None:
    body = {"type": "error", "error": {"type": error_type, "message": "m"}}

    error = from_status(200, body)

    assert type(error) is expected
    assert isinstance(error, ProviderError)
    assert error.status == status


def test_context_limit_wording_is_recognised() -> None:
    body = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000",
        },
    }

    assert isinstance(from_status(400, body), ContextTooLong)


def test_a_body_that_is_not_json_still_maps() -> None:
    error = from_status(502, "<html>Bad gateway</html>", fallback="Bad gateway")

    assert isinstance(error, ProviderUnavailable)
    assert "Bad gateway" in str(error)


def test_unknown_sdk_errors_become_provider_errors() -> None:
    error = translate(anthropic.AnthropicError("odd"))

    assert type(error) is ProviderError
    assert not error.retryable
