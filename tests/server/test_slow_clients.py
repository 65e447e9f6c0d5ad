"""Slow clients are cut off: headers and bodies have a read timeout (`KEEL_READ_TIMEOUT`).

A real `keel run` with a one-second timeout gets 300 connections that send part of a
request line and then nothing (a slowloris client), and a few that send headers and then
stall in the body; the server must close every one of them, and still answer others.
Sockets are polled with a deadline, never slept on.
"""

from __future__ import annotations

import selectors
import socket
import time
from pathlib import Path

import httpx
import pytest
import typer
from live_server import live_server
from server_kit import EXAMPLE

from keel.cli.run_cmd import build_settings
from keel.server.http_protocol import DEFAULT_READ_TIMEOUT, READ_TIMEOUT_ENV, read_timeout

HALF_OPEN = 300
STALLED_BODIES = 10
TIMEOUT = 1
DEADLINE = 20.0
"""Seconds the server gets to close everything (the timeout is one second)."""


def _connect(port: int, data: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(data)
    sock.setblocking(False)
    return sock


def _wait_closed(sockets: list[socket.socket]) -> dict[socket.socket, bytes]:
    """What each socket received until the server closed it; fails at the deadline."""
    received = {sock: b"" for sock in sockets}
    open_ = set(sockets)
    with selectors.DefaultSelector() as selector:
        for sock in sockets:
            selector.register(sock, selectors.EVENT_READ)
        end = time.monotonic() + DEADLINE
        while open_ and time.monotonic() < end:
            for key, _ in selector.select(timeout=end - time.monotonic()):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    chunk = sock.recv(4096)
                except ConnectionResetError:
                    chunk = b""
                if chunk:
                    received[sock] += chunk
                else:
                    selector.unregister(sock)
                    open_.discard(sock)
    assert not open_, f"{len(open_)} of {len(sockets)} connections still open after {DEADLINE}s"
    return received


def test_half_open_and_stalled_requests_are_closed(tmp_path: Path) -> None:
    env = {"KEEL_API_KEYS": "t:chat:slow-secret", "KEEL_READ_TIMEOUT": str(TIMEOUT)}
    args = [str(EXAMPLE), "--model", "none", "--database-url", "memory://"]
    with live_server(args, env=env, cwd=tmp_path) as base:
        port = int(base.rsplit(":", 1)[1])
        sockets: list[socket.socket] = []
        try:
            sockets += [
                _connect(port, b"GET /health HTTP/1.1\r\nHost: x") for _ in range(HALF_OPEN)
            ]
            stalled = (
                b"POST /v1/conversations/c1/messages HTTP/1.1\r\nHost: x\r\n"
                b"x-api-key: slow-secret\r\ncontent-type: application/json\r\n"
                b'content-length: 100\r\n\r\n{"text": '
            )
            sockets += [_connect(port, stalled) for _ in range(STALLED_BODIES)]
            received = _wait_closed(sockets)
            assert httpx.get(f"{base}/health", timeout=5).status_code == 200
        finally:
            for sock in sockets:
                sock.close()
    half_open = [received[sock] for sock in sockets[:HALF_OPEN]]
    assert all(answer.startswith(b"HTTP/1.1 408 ") for answer in half_open), half_open[:3]


def test_a_slow_request_within_the_timeout_is_served(tmp_path: Path) -> None:
    """The timeout is the time allowed, not a rate: a request sent in pieces in time is
    answered as usual."""
    env = {"KEEL_API_KEYS": "t:chat:slow-secret", "KEEL_READ_TIMEOUT": "5"}
    args = [str(EXAMPLE), "--model", "none", "--database-url", "memory://"]
    with live_server(args, env=env, cwd=tmp_path) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            for piece in (
                b"GET /heal",
                b"th HTTP/1.1\r\nHost: x\r\n",
                b"Connection: close\r\n\r\n",
            ):
                sock.sendall(piece)
            answer = b""
            while chunk := sock.recv(4096):
                answer += chunk
    assert answer.startswith(b"HTTP/1.1 200 ")


def test_the_timeout_setting_is_checked_when_keel_run_starts() -> None:
    assert read_timeout({}) == DEFAULT_READ_TIMEOUT == 15.0
    assert read_timeout({READ_TIMEOUT_ENV: "2.5"}) == 2.5
    for bad in ("soon", "0", "-1", "inf", "nan"):
        with pytest.raises(typer.BadParameter, match=READ_TIMEOUT_ENV):
            build_settings(
                EXAMPLE,
                host="127.0.0.1",
                database_url=None,
                model=None,
                keys_file=None,
                env={READ_TIMEOUT_ENV: bad},
                cwd=Path("/srv/app"),
            )
