"""One live session with one MCP server, through the official SDK's `mcp.Client`.

A background task owns the session: it enters the transport and `Client` (anyio wants a
context left by the task that entered it), says it is ready, and waits to be told to
stop. Callers (turns) call `list_tools` / `call_tool` from their own tasks. When the server
goes away (the process exits, the HTTP session breaks) the transport's read side ends:
the connection is then no longer `alive`, and every request in flight fails with the SDK's
"connection closed", which becomes `McpServerUnavailable`. The manager starts a new
connection on the next use.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import TypeVar

import mcp_types
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from keel import __version__
from keel.llm.errors import MIN_SECRET_CHARS, REDACTED
from keel.mcp.errors import McpCallFailed, McpServerUnavailable
from keel.mcp.transport import config_problem, open_transport
from keel.project.mcp_servers import McpServerConfig

log = logging.getLogger("keel.mcp")

CONNECT_TIMEOUT_SECONDS = 15.0
"""How long a server may take to start and answer the handshake."""
LIST_TIMEOUT_SECONDS = 15.0
"""How long listing a server's tools may take."""
CLOSE_TIMEOUT_SECONDS = 6.0
"""How long a session may take to shut down (the SDK waits up to 4 s for a process)."""
LIST_PAGE_CAP = 100
"""At most this many pages of `tools/list` (a paginator that never ends cannot hang us)."""

_CLIENT_INFO = mcp_types.Implementation(name="keel", version=__version__)
_T = TypeVar("_T")


class McpConnection:
    """A session with one server; `generation` counts the server's (re)starts from 1."""

    def __init__(self, config: McpServerConfig, *, cwd: Path | None, generation: int) -> None:
        self.config = config
        self.generation = generation
        self._cwd = cwd
        self._client: Client | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._ended = False
        self._failure: BaseException | None = None
        self._task: asyncio.Task[None] | None = None
        self._secrets = _secrets(config)

    @property
    def alive(self) -> bool:
        """Connected, and the server has not gone away."""
        return self._client is not None and not self._ended

    async def open(self, timeout: float = CONNECT_TIMEOUT_SECONDS) -> None:
        """Start the server (or reach it) and do the handshake; `McpServerUnavailable` if not."""
        problem = config_problem(self.config)
        if problem is not None:
            raise McpServerUnavailable(problem[1], diagnostic=problem[0])
        self._task = asyncio.create_task(self._own(), name=f"keel-mcp-{self.config.name}")
        try:
            async with asyncio.timeout(timeout):
                await self._ready.wait()
        except TimeoutError:
            await self.close()
            raise McpServerUnavailable(
                f"MCP server '{self.config.name}' did not answer within {timeout:g} seconds"
            ) from None
        if not self.alive:
            await self.close()
            failure = self._failure
            why = self._clean(describe_failure(failure)) if failure else "it stopped at once"
            raise McpServerUnavailable(f"MCP server '{self.config.name}' cannot be reached: {why}")

    async def _own(self) -> None:
        transport = open_transport(self.config, cwd=self._cwd, on_end=self._lost)
        try:
            async with Client(transport, cache=None, client_info=_CLIENT_INFO) as client:
                self._client = client
                self._ready.set()
                await self._stop.wait()
        except Exception as exc:  # the transport or handshake failed: recorded, never raised
            self._failure = exc
            if self._client is not None:
                why = self._clean(describe_failure(exc))
                log.warning("MCP server %r: connection lost: %s", self.config.name, why)
        finally:
            self._client = None
            self._ended = True
            self._ready.set()

    def _lost(self) -> None:
        if not self._ended and not self._stop.is_set():
            log.warning(
                "MCP server %r went away; it is restarted on its next use", self.config.name
            )
        self._ended = True

    async def close(self) -> None:
        """End the session (and stop a local server process)."""
        self._stop.set()
        task, self._task = self._task, None
        if task is None or task.done():
            return
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT_SECONDS):
                await asyncio.shield(task)
        except TimeoutError:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def list_tools(self) -> tuple[mcp_types.Tool, ...]:
        """Every tool the server lists (all pages)."""
        client = self._require()
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        async with asyncio.timeout(LIST_TIMEOUT_SECONDS):
            for _ in range(LIST_PAGE_CAP):
                page = await self._guard(client.list_tools(cursor=cursor), "tools/list")
                tools.extend(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
        return tuple(tools)

    async def call_tool(
        self, name: str, arguments: Mapping[str, object]
    ) -> mcp_types.CallToolResult:
        """Call a tool; the deadline is the caller's (the dispatcher's `tool_timeout`)."""
        client = self._require()
        return await self._guard(client.call_tool(name, dict(arguments)), f"tool '{name}'")

    def _require(self) -> Client:
        client = self._client
        if client is None or self._ended:
            raise McpServerUnavailable(f"MCP server '{self.config.name}' is not connected")
        return client

    async def _guard(self, request: Awaitable[_T], what: str) -> _T:
        """Await an SDK request, turning its failures into Keel's two MCP errors."""
        server = self.config.name
        try:
            return await request
        except MCPError as exc:
            message = self._clean(exc.message)
            if exc.code == CONNECTION_CLOSED:
                self._ended = True
                raise McpServerUnavailable(
                    f"MCP server '{server}' stopped while {what} ran ({message}); "
                    "it is restarted on the next call"
                ) from None
            raise McpCallFailed(f"MCP server '{server}' refused {what}: {message}") from None
        except OSError as exc:
            self._ended = True
            why = self._clean(describe_failure(exc))
            raise McpServerUnavailable(f"MCP server '{server}': {why}") from None
        except Exception as exc:  # an odd answer (bad result shape...): the call failed
            why = self._clean(describe_failure(exc))
            raise McpCallFailed(f"MCP server '{server}', {what}: {why}") from None

    def _clean(self, text: str) -> str:
        """`text` (a server's or transport's words) without this server's credentials: it
        reaches the model, the event log and the server log."""
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text


def _secrets(config: McpServerConfig) -> tuple[str, ...]:
    """The credentials Keel hands the server: its auth secret and its `env` values."""
    found = [s.reveal() for s in config.env.values()]
    if config.auth is not None and config.auth.secret is not None:
        found.append(config.auth.secret.reveal())
    # Longest first, so a secret that contains another is replaced whole.
    return tuple(sorted({s for s in found if len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True))


def describe_failure(exc: BaseException) -> str:
    """The innermost cause of a failure, as `Type: message` (task groups wrap errors)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
