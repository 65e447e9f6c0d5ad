"""A request id for every HTTP request, on every log line the request causes.

`RequestId` (pure ASGI middleware, the outermost) takes the client's `X-Request-ID` when it
is a plausible id (1-128 characters of letters, digits and `._:-`, so no log injection)
and otherwise makes one (a UUID). It echoes the id in the response's `X-Request-ID`
header and holds it in `CURRENT` for the request's task: a turn the request starts runs
in a task created inside it, so its lines carry the same id. `keel.server.log_config`
puts it on every record (`request_id`, None outside a request).
"""

from __future__ import annotations

import re
from contextvars import ContextVar

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from keel.ids import IdSource, UuidSource

HEADER = "x-request-id"
"""The header read from the request and written on the response."""

CURRENT: ContextVar[str | None] = ContextVar("keel_request_id", default=None)
"""The id of the request being served in this task (None outside a request)."""

_HEADER_BYTES = HEADER.encode("latin-1")
_ACCEPTED = re.compile(r"[A-Za-z0-9._:\-]{1,128}")


def accepted_id(value: str | None) -> str | None:
    """`value` when it is usable as a request id as it is, else None."""
    if value is None or not _ACCEPTED.fullmatch(value):
        return None
    return value


class RequestId:
    """Give each HTTP request an id: the client's `X-Request-ID`, or a new one."""

    def __init__(self, app: ASGIApp, *, ids: IdSource | None = None) -> None:
        self.app = app
        self._ids: IdSource = ids or UuidSource()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = None
        for name, value in scope.get("headers", ()):
            if name == _HEADER_BYTES:
                incoming = value.decode("latin-1")
                break
        request_id = accepted_id(incoming) or self._ids.new_id()
        scope.setdefault("state", {})["request_id"] = request_id

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", ()) if k != _HEADER_BYTES]
                headers.append((_HEADER_BYTES, request_id.encode("latin-1")))
                message = {**message, "headers": headers}
            await send(message)

        token = CURRENT.set(request_id)
        await self.app(scope, receive, send_with_id)
        # Reset only after a normal end: an exception is logged by Starlette's outermost
        # error middleware, after this frame, and that line should carry the id too (the
        # request's task, and with it the context, ends right after).
        CURRENT.reset(token)
