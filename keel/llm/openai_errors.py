"""OpenAI SDK exceptions as Keel's model error tree (`keel.llm.errors`), for OpenAI and
OpenAI-compatible servers alike."""

from __future__ import annotations

import re
from collections.abc import Mapping

import openai

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

PROVIDER = "openai"
"""The `provider` label on every error this adapter raises, OpenAI-compatible servers too."""

_DETAIL_LIMIT = 500
_CONTEXT_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
_CONTEXT_WORDING = re.compile(
    r"context[ _-]?(length|size|window)|maximum context|prompt is too long|too many tokens",
    re.IGNORECASE,
)


def map_openai_error(error: openai.OpenAIError) -> ModelError:
    """The Keel error for an exception the `openai` SDK raised; the caller chains it."""
    if isinstance(error, openai.APITimeoutError):
        return ModelTimeout(f"{PROVIDER}: no answer in time ({_detail(error)})")
    if isinstance(error, openai.APIConnectionError):
        return ProviderUnavailable(
            f"{PROVIDER}: connection failed: {_detail(error)}", provider=PROVIDER
        )
    if isinstance(error, openai.APIStatusError):
        return _from_status(error.status_code, error)
    if isinstance(error, openai.APIError):
        # An `error` event inside a stream: no HTTP status, only the error body.
        if _is_context_overflow(error):
            return ContextTooLong(f"{PROVIDER}: {_detail(error)}", provider=PROVIDER)
        return ProviderUnavailable(
            f"{PROVIDER}: stream failed: {_detail(error)}", provider=PROVIDER
        )
    return ProviderError(f"{PROVIDER}: {error}", provider=PROVIDER)


def malformed_response(detail: str) -> ProviderUnavailable:
    """The error for a reply that is not a usable Chat Completions payload."""
    return ProviderUnavailable(f"{PROVIDER}: malformed response: {detail}", provider=PROVIDER)


def _from_status(status: int, error: openai.APIStatusError) -> ModelError:
    text = f"{PROVIDER}: HTTP {status}: {_detail(error)}"
    if status == 429:
        return RateLimited(text, status=status, provider=PROVIDER)
    if status in (401, 403):
        return AuthenticationFailed(text, status=status, provider=PROVIDER)
    if status == 408:
        return ModelTimeout(text)
    if status == 409 or status >= 500:
        return ProviderUnavailable(text, status=status, provider=PROVIDER)
    if status == 413 or _is_context_overflow(error):
        return ContextTooLong(text, status=status, provider=PROVIDER)
    return InvalidModelRequest(text, status=status, provider=PROVIDER)


def _is_context_overflow(error: openai.APIError) -> bool:
    if error.code in _CONTEXT_CODES or getattr(error, "type", None) in _CONTEXT_CODES:
        return True
    return bool(_CONTEXT_WORDING.search(_detail(error)))


def _detail(error: openai.APIError) -> str:
    """The server's own error message when the body has one, else the SDK's message
    (cut short: a proxy's error page can be a whole HTML document)."""
    body = error.body
    if isinstance(body, Mapping) and isinstance(body.get("message"), str) and body["message"]:
        return str(body["message"])[:_DETAIL_LIMIT]
    if isinstance(body, str) and body:
        return body[:_DETAIL_LIMIT]
    return error.message[:_DETAIL_LIMIT]
