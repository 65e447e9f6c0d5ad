"""Anthropic SDK and transport failures as Keel's model error tree (`keel.llm.errors`)."""

from __future__ import annotations

import importlib
import re

import anthropic

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

# Errors: SDK and transport failures -> Keel's model error tree.

_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
"""The HTTP status Anthropic documents for each `error.type`."""

_CONTEXT_TOO_LONG = re.compile(
    r"prompt is too long|exceeds? (the )?(model'?s? )?context (limit|window)", re.IGNORECASE
)

PROVIDER = "anthropic"


def _transport_errors() -> tuple[tuple[type[Exception], ...], tuple[type[Exception], ...]]:
    """(timeout classes, transport classes) of the HTTP libraries the SDK may be built on.

    Recent SDKs use `httpx2`, older ones `httpx`; a stream being read can raise theirs
    directly, so both are recognised when installed."""
    timeouts: list[type[Exception]] = []
    transports: list[type[Exception]] = []
    for name in ("httpx2", "httpx"):
        try:
            module = importlib.import_module(name)
        except ImportError:  # pragma: no cover - depends on the installed SDK
            continue
        timeouts.append(module.TimeoutException)
        transports.append(module.TransportError)
    return tuple(timeouts), tuple(transports)


_TIMEOUTS, _TRANSPORTS = _transport_errors()

TRANSLATED: tuple[type[Exception], ...] = (anthropic.AnthropicError, *_TRANSPORTS)
"""The exception classes `translate` knows; adapters catch exactly these."""


def translate(error: Exception) -> ModelError:
    """The Keel error for an SDK (or underlying transport) exception."""
    if isinstance(error, anthropic.APITimeoutError) or isinstance(error, _TIMEOUTS):
        return ModelTimeout(f"{PROVIDER}: the model did not answer in time")
    if isinstance(error, anthropic.APIConnectionError) or isinstance(error, _TRANSPORTS):
        return ProviderUnavailable(f"{PROVIDER}: connection failed: {error}", provider=PROVIDER)
    if isinstance(error, anthropic.APIStatusError):
        return from_status(error.status_code, error.body, fallback=str(error))
    if isinstance(error, anthropic.CredentialsError):
        return AuthenticationFailed(f"{PROVIDER}: {error}", provider=PROVIDER)
    return ProviderError(f"{PROVIDER}: {error}", provider=PROVIDER)


def missing_credentials(error: TypeError) -> AuthenticationFailed | None:
    """The SDK raises a bare `TypeError` when no API key is configured at all."""
    if "authentication" not in str(error).lower():
        return None
    return AuthenticationFailed(
        f"{PROVIDER}: no credentials (pass api_key or set ANTHROPIC_API_KEY)", provider=PROVIDER
    )


def from_status(status: int, body: object, *, fallback: str = "") -> ModelError:
    """The Keel error for an error response (`status`) or stream `error` event (`body`)."""
    error_type, message = error_details(body)
    if status < 400:
        status = _TYPE_STATUS.get(error_type or "", 500)
    text = f"{PROVIDER}: {message or fallback or f'HTTP {status}'}"
    kind = _classify(status, error_type)
    if kind is None:
        return ModelTimeout(text)
    if kind is InvalidModelRequest and _CONTEXT_TOO_LONG.search(message or fallback):
        kind = ContextTooLong
    return kind(text, status=status, provider=PROVIDER)


def _classify(status: int, error_type: str | None) -> type[ProviderError] | None:
    """The error class for a failed response; `None` means the provider timed out (408)."""
    if error_type == "rate_limit_error" or status == 429:
        return RateLimited
    if error_type in ("overloaded_error", "api_error", "timeout_error") or status >= 500:
        return ProviderUnavailable
    if error_type in ("authentication_error", "permission_error") or status in (401, 403):
        return AuthenticationFailed
    if status == 408:
        return None
    return InvalidModelRequest


def error_details(body: object) -> tuple[str | None, str | None]:
    """`(error.type, error.message)` of an Anthropic error body, when it has them."""
    if not isinstance(body, dict):
        return None, None
    error = body.get("error")
    if not isinstance(error, dict):
        return None, None
    error_type, message = error.get("type"), error.get("message")
    return (
        error_type if isinstance(error_type, str) else None,
        message if isinstance(message, str) else None,
    )
