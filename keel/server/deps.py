"""FastAPI dependencies: the runtime, the caller's key (with rate limit) and scope checks.

Keys arrive as `Authorization: Bearer <key>` or `x-api-key: <key>`. The order of checks
is: a key is present (401 `auth.missing_key`), it is known (401 `auth.invalid_key`), its
bucket has a token (429 `rate_limited` with `Retry-After`), it has the route's scope
(403 `auth.scope`).

Every dependency here is a coroutine function: FastAPI calls a plain function dependency
in a worker thread (a thread hop and a few hundred calls per request each), and none of
these block.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Path, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from keel.server.auth import Principal
from keel.server.errors import ApiError
from keel.server.ratelimit import retry_after_header
from keel.server.runtime import ServerRuntime
from keel.server.wire import CONVERSATION_ID_PATTERN

_bearer = HTTPBearer(auto_error=False, description="An API key as a bearer token.")
_api_key = APIKeyHeader(name="x-api-key", auto_error=False, description="An API key.")


def runtime_of(request: Request) -> ServerRuntime:
    """The app's runtime (set by `create_app`)."""
    runtime: ServerRuntime = request.app.state.keel
    return runtime


async def get_runtime(request: Request) -> ServerRuntime:
    """The app's runtime, as a dependency (a route that takes the `Request` anyway may
    call `runtime_of` instead: one dependency fewer to solve per request)."""
    return runtime_of(request)


Runtime = Annotated[ServerRuntime, Depends(get_runtime)]


def principal_of(
    runtime: ServerRuntime, bearer: HTTPAuthorizationCredentials | None, api_key: str | None
) -> Principal:
    """The key presented as `bearer` or `api_key`, after the rate limit took its token
    (401 / 429 as the module docstring says)."""
    presented = bearer.credentials if bearer is not None else api_key
    if not presented:
        raise ApiError(
            401,
            "auth.missing_key",
            "send an API key as 'Authorization: Bearer <key>' or 'x-api-key: <key>'",
            headers={"WWW-Authenticate": "Bearer"},
        )
    key = runtime.settings.keys.verify(presented)
    if key is None:
        raise ApiError(
            401, "auth.invalid_key", "unknown API key", headers={"WWW-Authenticate": "Bearer"}
        )
    wait = runtime.limiter.take(key.name)
    if wait is not None:
        raise ApiError(
            429,
            "rate_limited",
            f"rate limit of key {key.name!r} reached",
            headers={"Retry-After": retry_after_header(wait)},
        )
    return Principal(name=key.name, scopes=key.scopes)


def require(scope: str) -> Callable[..., Awaitable[Principal]]:
    """A dependency that lets through keys holding `scope` (403 otherwise), after the
    checks of `principal_of`. One dependency with the two key headers as its only
    sub-dependencies: FastAPI's work per request grows with the dependencies solved."""

    async def check(
        request: Request,
        bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
        api_key: Annotated[str | None, Depends(_api_key)],
    ) -> Principal:
        principal = principal_of(runtime_of(request), bearer, api_key)
        if scope not in principal.scopes:
            raise ApiError(403, "auth.scope", f"this endpoint needs the {scope!r} scope")
        return principal

    return check


ChatKey = Annotated[Principal, Depends(require("chat"))]
AdminKey = Annotated[Principal, Depends(require("admin"))]
ConversationIdPath = Annotated[
    str, Path(pattern=CONVERSATION_ID_PATTERN, description="The conversation id you chose.")
]
