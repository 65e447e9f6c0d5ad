"""CORS for the API: the configured origins' pages may call it from a browser.

None are allowed by default (no CORS headers at all, so browsers keep other origins out).
With `--cors-origins` / `KEEL_CORS_ORIGINS` Starlette's `CORSMiddleware` answers
preflights and adds the headers for those origins: any method, the headers the API reads
(`Authorization`, `x-api-key`, `Content-Type`, `Accept`, `X-Keel-Conversation-Id`,
`X-Keel-Choices`, `Last-Event-ID`), and `X-Keel-Conversation-Id` and `Retry-After` exposed
to the page. No cookies are used, so credentials are not allowed. The socket.io channel
checks origins itself (python-engineio, the same list), so its path is passed through.
"""

from __future__ import annotations

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from keel.server.channels_socketio import SOCKETIO_PATH

ALLOWED_HEADERS = (
    "Authorization",
    "x-api-key",
    "Content-Type",
    "Accept",
    "X-Keel-Conversation-Id",
    "X-Keel-Choices",
    "Last-Event-ID",
)
EXPOSED_HEADERS = ("X-Keel-Conversation-Id", "Retry-After")


class ApiCors:
    """`CORSMiddleware` for `origins`, except under the socket.io channel's path."""

    def __init__(self, app: ASGIApp, origins: tuple[str, ...]) -> None:
        self.app = app
        self.cors = CORSMiddleware(
            app,
            allow_origins=list(origins),
            allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
            allow_headers=list(ALLOWED_HEADERS),
            expose_headers=list(EXPOSED_HEADERS),
            max_age=600,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if scope["type"] != "http" or path.startswith(SOCKETIO_PATH + "/"):
            await self.app(scope, receive, send)
            return
        await self.cors(scope, receive, send)


def parse_origins(text: str) -> tuple[str, ...]:
    """Origins separated by commas or spaces; each `scheme://host[:port]` or `*`
    (`ValueError` naming the first that is not)."""
    origins = tuple(o.strip().rstrip("/") for o in text.replace(",", " ").split() if o.strip())
    for origin in origins:
        scheme, sep, rest = origin.partition("://")
        if origin != "*" and (
            scheme not in ("http", "https") or not sep or not rest or "/" in rest
        ):
            raise ValueError(f"CORS origin {origin!r} is not scheme://host[:port] (or *)")
    return origins
