"""`TimedH11Protocol`: uvicorn's h11 protocol with a read timeout for slow clients.

uvicorn closes a connection that stays idle between requests (`timeout_keep_alive`), but
any byte resets that timer, and nothing limits how long a request's headers or body may
take: a client that sends part of a request line and then nothing (or one byte now and
then) holds its connection forever, and a few hundred such clients hold the server.

Here a request's headers must be complete within `read_timeout` seconds of the
connection being opened (or of the previous response on a kept-alive connection),
however the bytes trickle in: otherwise the answer is 408 and the connection is closed.
While the body is read, `read_timeout` seconds without a byte close the connection (the
route sees the client leave). Once the request is read nothing is timed here: a long turn
or a stream is the app's business. `keel run` serves with this protocol; the timeout is
`KEEL_READ_TIMEOUT` (default `DEFAULT_READ_TIMEOUT`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from functools import cache
from typing import Any

import h11
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

READ_TIMEOUT_ENV = "KEEL_READ_TIMEOUT"
DEFAULT_READ_TIMEOUT = 15.0
"""Seconds for a request's headers, and the longest pause while its body is read."""

PROTOCOL = "keel.server.http_protocol:TimedH11Protocol"
"""What `keel run` passes to uvicorn as `http`."""

_TIMED_OUT_BODY = b"the request was not sent in time\n"
_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(_TIMED_OUT_BODY), _TIMED_OUT_BODY)
)


def read_timeout(env: Mapping[str, str]) -> float:
    """`KEEL_READ_TIMEOUT` from `env` (seconds, > 0); raises `ValueError` when invalid."""
    return _parse(env.get(READ_TIMEOUT_ENV) or "")


@cache
def _parse(text: str) -> float:
    if not text:
        return DEFAULT_READ_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise ValueError(f"{READ_TIMEOUT_ENV} must be a number of seconds above 0, got {text!r}")
    return seconds


class TimedH11Protocol(H11Protocol):
    """`H11Protocol` with the header and body read timeout (see the module docstring)."""

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self._read_timeout = read_timeout(os.environ)
        self._read_timer: asyncio.TimerHandle | None = None
        """The pending timer; it may fire before `_deadline` (which moved on since)."""
        self._deadline: float | None = None
        """When the client's time runs out (loop time); None while nothing is timed."""
        self._upgraded = False
        """The connection was handed to the WebSocket protocol (never timed again)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._time_reading(fresh=True)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._time_reading(fresh=False)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # The next request on this connection (maybe already read, when pipelined).
        self._time_reading(fresh=True)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timer()
        super().connection_lost(exc)

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        # The connection is a WebSocket's from now on: nothing of it is timed here (the
        # headers deadline would otherwise close a call after `read_timeout` seconds).
        self._upgraded = True
        self._cancel_timer()
        super().handle_websocket_upgrade(event)

    def _time_reading(self, *, fresh: bool) -> None:
        """Start, keep or stop the timer for what the client is sending now."""
        if self._upgraded:
            return
        if self.transport.is_closing():
            self._stop_timer()
            return
        state = self.conn.their_state
        if state is h11.IDLE:
            # Headers: one deadline from the start, however the bytes trickle in.
            if fresh or self._deadline is None:
                self._start_timer()
        elif state is h11.SEND_BODY:
            self._start_timer()  # the body: the longest pause between two reads
        else:
            self._stop_timer()  # read whole (or closing): the app takes it from here

    # Every request starts and stops the timer a few times. Moving the deadline instead
    # of cancelling and scheduling a timer each time keeps the event loop's heap of
    # timers small: the one pending timer, when it fires early, waits for the rest.

    def _start_timer(self) -> None:
        self._deadline = self.loop.time() + self._read_timeout
        if self._read_timer is None:
            self._read_timer = self.loop.call_at(self._deadline, self._on_timer)

    def _stop_timer(self) -> None:
        self._deadline = None

    def _cancel_timer(self) -> None:
        self._deadline = None
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def _on_timer(self) -> None:
        self._read_timer = None
        deadline = self._deadline
        if deadline is None:
            return
        if self.loop.time() < deadline:
            self._read_timer = self.loop.call_at(deadline, self._on_timer)
            return
        self._deadline = None
        self._timed_out()

    def _timed_out(self) -> None:
        if self.transport.is_closing():
            return
        if self.flow.read_paused:  # the app is not reading: not the client's fault
            self._start_timer()
            return
        if self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:
            # Part of a request line or headers: nothing was answered yet.
            self.transport.write(_TIMED_OUT)
        self.transport.close()
