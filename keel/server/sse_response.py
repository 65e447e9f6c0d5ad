"""`EventStream`: a text/event-stream response that stops work when the client leaves.

Starlette's `StreamingResponse` only notices a gone client when a write fails (with ASGI
2.4 servers it no longer listens for `http.disconnect`). Style rule 17 asks for more: the
producer and a disconnect listener share a task group, the first to finish cancels the
other, and `on_disconnect` runs when the client left first (the routes cancel the turn
there). A reconnecting client resumes from the log with `Last-Event-ID`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

SSE_MEDIA_TYPE = "text/event-stream"


class EventStream(Response):
    """Streams pre-rendered SSE text chunks; calls `on_disconnect` if the client leaves first."""

    media_type = SSE_MEDIA_TYPE

    def __init__(
        self,
        chunks: AsyncIterator[str],
        *,
        on_disconnect: Callable[[], None] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        # Not Response.__init__: it would render an empty body and send Content-Length: 0.
        self.status_code = 200
        self.background = None
        self.init_headers(headers)
        self.headers["cache-control"] = "no-cache"
        # Proxies such as nginx buffer responses unless told not to.
        self.headers["x-accel-buffering"] = "no"
        self._chunks = chunks
        self._on_disconnect = on_disconnect
        self.client_left = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._produce, send, group.cancel_scope)
                await self._listen(receive)
                self.client_left = True
                group.cancel_scope.cancel()
        finally:
            await self._close_chunks()
            if self.client_left and self._on_disconnect is not None:
                self._on_disconnect()

    async def _produce(self, send: Send, scope: anyio.CancelScope) -> None:
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            async for chunk in self._chunks:
                body = chunk.encode()
                await send({"type": "http.response.body", "body": body, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            # ASGI 2.4 servers raise on writing to a client that is gone.
            self.client_left = True
        scope.cancel()

    @staticmethod
    async def _listen(receive: Receive) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return

    async def _close_chunks(self) -> None:
        close = getattr(self._chunks, "aclose", None)
        if close is not None:
            with anyio.CancelScope(shield=True):
                await close()
