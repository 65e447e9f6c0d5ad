"""`BodyLimit`: refuse request bodies over a size with 413, before a route parses them.

A declared `Content-Length` over the limit is refused at once; a body without one (or
with a false one) is counted as it is read and refused as soon as it passes the limit.
Both answer the error JSON (`request.too_large`).
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from keel.server.errors import error_response

TOO_LARGE_CODE = "request.too_large"


class BodyTooLarge(HTTPException):
    """Raised while reading a body that passed the limit (rendered by the error handlers)."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, f"request body larger than {max_bytes} bytes")


class BodyLimit:
    """ASGI middleware: 413 for bodies larger than `max_bytes`."""

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            message = f"request body larger than {self.max_bytes} bytes"
            await error_response(413, TOO_LARGE_CODE, message)(scope, receive, send)
            return
        seen = 0

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
            return message

        await self.app(scope, counting_receive, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
