"""The SDK transport for one configured server, watched so a lost connection is noticed.

A `command` server runs as a child process over stdio (`mcp.client.stdio.stdio_client`),
in the project folder, with its `env` laid over the SDK's safe default environment. A `url`
server is reached over streamable HTTP (`mcp.client.streamable_http.streamable_http_client`)
with its credentials as a header. The read stream is wrapped so that its end (the process
exited, the HTTP session broke, or Keel closed it) calls `on_end` at once: a server that
died while idle is then restarted on its next use instead of failing that call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
import httpx2
from mcp.client._transport import TransportStreams
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from keel.project.mcp_servers import McpServerConfig

HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)
"""The SDK's recommended HTTP timeouts (a server may hold a response stream open)."""

_ENDED = (
    StopAsyncIteration,
    anyio.EndOfStream,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
)


def config_problem(config: McpServerConfig) -> tuple[str, str] | None:
    """(code, message) when the server cannot be connected as configured, else None."""
    if config.unset_vars:
        names = ", ".join(f"${{{name}}}" for name in config.unset_vars)
        return "mcp.server.not_configured", f"MCP server `{config.name}` uses unset {names}"
    if config.auth is not None and config.auth.kind in ("oauth", "module"):
        message = (
            f"MCP server `{config.name}`: `{config.auth.kind}` authentication is not "
            "supported yet; use `token` or `api_key`"
        )
        return "mcp.server.unsupported_auth", message
    return None


def auth_headers(config: McpServerConfig) -> dict[str, str]:
    """The HTTP headers that carry the server's `token` or `api_key`."""
    auth = config.auth
    if auth is None or auth.secret is None:
        return {}
    secret = auth.secret.reveal()
    if auth.kind == "token":
        return {"Authorization": f"Bearer {secret}"}
    return {auth.header_name: auth.header_format.replace("{key}", secret)}


def open_transport(
    config: McpServerConfig, *, cwd: Path | None, on_end: Callable[[], None]
) -> AbstractAsyncContextManager[TransportStreams]:
    """The transport to hand to `mcp.Client`, calling `on_end` when its read side ends."""
    if config.url is not None:
        inner = _http(config.url, auth_headers(config))
    else:
        params = StdioServerParameters(
            command=config.command or "",
            args=list(config.args),
            env={name: secret.reveal() for name, secret in config.env.items()},
            cwd=cwd,
        )
        inner = stdio_client(params)
    return _watched(inner, on_end)


@asynccontextmanager
async def _http(url: str, headers: dict[str, str]) -> AsyncIterator[TransportStreams]:
    async with httpx2.AsyncClient(headers=headers, timeout=HTTP_TIMEOUT) as client:
        async with streamable_http_client(url, http_client=client) as streams:
            yield streams


@asynccontextmanager
async def _watched(
    inner: AbstractAsyncContextManager[TransportStreams], on_end: Callable[[], None]
) -> AsyncIterator[TransportStreams]:
    async with inner as (read, write):
        yield _WatchedRead(read, on_end), write


class _WatchedRead:
    """A read stream that reports its end (EOF, closed, broken) once, then behaves as before."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> object:
        """The sender's context of the last message (the SDK reads it when present)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except _ENDED:
            self._on_end()
            raise

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._inner.__anext__()
        except _ENDED:
            self._on_end()
            raise

    async def aclose(self) -> None:
        self._on_end()
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedRead:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        self._on_end()
        result: bool | None = await self._inner.__aexit__(exc_type, exc_val, exc_tb)
        return result
