"""Who is calling Rasa's channels: a key as everywhere, or no key when the operator says so.

With `ServerSettings.rasa_no_key` (`keel run --rasa-no-key`, loopback only) a request to
the REST webhook, or a socket.io connection, that presents no key is let through as
`RASA_LOCAL_OWNER`, scope `chat`, under that name's rate limit; a key that is presented is
checked as usual (a wrong key is still 401). Without the setting a key is required.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials

from keel.server.auth import Principal
from keel.server.deps import Runtime, _api_key, _bearer, principal_of
from keel.server.errors import ApiError
from keel.server.ratelimit import retry_after_header
from keel.server.runtime import ServerRuntime

RASA_LOCAL_OWNER = "rasa-local"
"""The owner of the conversations Rasa's channels start with no key."""


def channel_principal(
    runtime: ServerRuntime,
    bearer: HTTPAuthorizationCredentials | None,
    api_key: str | None,
) -> Principal:
    """The caller of a Rasa channel (401/403/429 as `keel.server.deps` answers them)."""
    presented = bearer.credentials if bearer is not None else api_key
    if not presented and runtime.settings.rasa_no_key:
        wait = runtime.limiter.take(RASA_LOCAL_OWNER)
        if wait is not None:
            raise ApiError(
                429,
                "rate_limited",
                f"rate limit of {RASA_LOCAL_OWNER!r} reached",
                headers={"Retry-After": retry_after_header(wait)},
            )
        return Principal(name=RASA_LOCAL_OWNER, scopes=frozenset({"chat"}))
    principal = principal_of(runtime, bearer, api_key)
    if "chat" not in principal.scopes:
        raise ApiError(403, "auth.scope", "this endpoint needs the 'chat' scope")
    return principal


async def _rasa_key(
    runtime: Runtime,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    api_key: Annotated[str | None, Depends(_api_key)],
) -> Principal:
    return channel_principal(runtime, bearer, api_key)


RasaKey = Annotated[Principal, Depends(_rasa_key)]
"""The caller of the REST webhook (`channel_principal`)."""
