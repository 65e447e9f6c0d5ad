"""Errors raised by models (adapters and the scripted test model).

    ModelError (RunError)            a model could not produce a reply
    ├── ProviderError                the provider answered with a failure
    │   ├── RateLimited              429; retryable
    │   ├── ProviderUnavailable      5xx, connection failures; retryable
    │   ├── InvalidModelRequest      400 and other 4xx the request caused; not retryable
    │   │   └── ContextTooLong       the prompt does not fit the model's window
    │   └── AuthenticationFailed     401/403; not retryable
    └── ModelTimeout                 no answer in time; retryable
    ModelConfigError (KeelError)     the model configuration cannot be used; never retried

Adapters translate their SDK's exceptions into these at the boundary; nothing above the
adapters sees a provider SDK exception.
"""

from __future__ import annotations

import contextlib
from typing import TypeVar

from keel.errors import KeelError, RunError


class ModelConfigError(KeelError):
    """The model configuration cannot be used (unknown provider, missing group or key).

    Not a `ModelError`: retrying or falling back cannot fix a configuration, so this is
    never retried and surfaces as it is.
    """

    code = "keel.model.config"

    def __init__(
        self, message: str, *, provider: str | None = None, group: str | None = None
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.group = group


class ModelError(RunError):
    """A model could not produce a reply (provider failure, exhausted script, ...)."""

    code = "keel.model"
    retryable: bool = False
    """Whether trying the same request again may succeed."""


class ProviderError(ModelError):
    """The provider answered with a failure."""

    code = "keel.model.provider"

    def __init__(self, message: str, *, status: int | None = None, provider: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.provider = provider


class RateLimited(ProviderError):
    """HTTP 429: too many requests."""

    code = "keel.model.rate_limited"
    retryable = True


class ProviderUnavailable(ProviderError):
    """HTTP 5xx or a connection failure."""

    code = "keel.model.unavailable"
    retryable = True


class InvalidModelRequest(ProviderError):
    """The provider rejected the request itself (HTTP 400 and similar)."""

    code = "keel.model.invalid_request"


class ContextTooLong(InvalidModelRequest):
    """The prompt does not fit the model's context window."""

    code = "keel.model.context_too_long"


class AuthenticationFailed(ProviderError):
    """The credentials were refused (HTTP 401/403)."""

    code = "keel.model.authentication"


class ModelTimeout(ModelError):
    """The model did not answer in time."""

    code = "keel.model.timeout"
    retryable = True


REDACTED = "[redacted]"
"""What replaces an API key found in an error message."""

MIN_SECRET_CHARS = 8
"""Shorter "keys" (placeholders for local servers) are not scrubbed: replacing them would
garble messages and protect nothing."""

_Error = TypeVar("_Error", bound=BaseException)


def without_secret(error: _Error, secret: str | None) -> _Error:
    """`error` with `secret` replaced by `[redacted]` in its message and in those of the
    exceptions it chains (a provider may echo the key it was sent; the message reaches the
    event log and the traceback reaches the server log). Changed in place; returned."""
    if not secret or len(secret) < MIN_SECRET_CHARS:
        return error
    seen: set[int] = set()
    current: BaseException | None = error
    pending: list[BaseException] = []
    while current is not None:
        if id(current) not in seen:
            seen.add(id(current))
            current.args = tuple(_scrub(arg, secret) for arg in current.args)
            message = getattr(current, "message", None)
            if isinstance(message, str) and secret in message:
                with contextlib.suppress(AttributeError):
                    current.message = message.replace(secret, REDACTED)  # type: ignore[attr-defined]
            pending += [e for e in (current.__cause__, current.__context__) if e is not None]
        current = pending.pop() if pending else None
    return error


def _scrub(arg: object, secret: str) -> object:
    return arg.replace(secret, REDACTED) if isinstance(arg, str) else arg
