"""`McpServers`: the configured servers' connections, their tool lists, and calls to them.

    servers = McpServers(configs, cwd=project_root, clock=SystemClock())
    listing = await servers.listing("time")          # connects on first use; cached (TTL)
    result = await servers.call_tool("time", "get_current_time", {"timezone": "UTC"})
    await servers.close()

A server is connected on its first use. A connection that died (the process exited, the
HTTP session broke) is replaced on the next use by a new one (a new generation), and the
server's tools are listed again right away: a restart refreshes the cache. A call that was
in flight when the connection died is not repeated (it may have run): it fails with
`McpServerUnavailable`, which the model sees. Connecting and restarting a server is
serialised per server; calls themselves run concurrently.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path

from keel.ids import Clock
from keel.mcp.connection import CONNECT_TIMEOUT_SECONDS, McpConnection, describe_failure
from keel.mcp.errors import McpServerUnavailable
from keel.mcp.listing import DEFAULT_TTL_SECONDS, ListingProblem, ToolListCache, ToolListing
from keel.mcp.results import to_tool_result
from keel.project.mcp_servers import McpServerConfig
from keel.tools.result import ToolResult

log = logging.getLogger("keel.mcp")


class McpServers:
    """Connections to a set of configured MCP servers (implements `McpCaller`)."""

    def __init__(
        self,
        configs: Iterable[McpServerConfig],
        *,
        cwd: Path | None,
        clock: Clock,
        ttl: float = DEFAULT_TTL_SECONDS,
        connect_timeout: float = CONNECT_TIMEOUT_SECONDS,
    ) -> None:
        self.configs: Mapping[str, McpServerConfig] = {c.name: c for c in configs}
        self.cache = ToolListCache(clock=clock, ttl=ttl)
        self._cwd = cwd
        self._connect_timeout = connect_timeout
        self._connections: dict[str, McpConnection] = {}
        self._generations: dict[str, int] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._closed = False

    def connection(self, server: str) -> McpConnection | None:
        """The server's current connection, alive or not (None before its first use)."""
        return self._connections.get(server)

    def generation(self, server: str) -> int:
        """How many times the server was started (0: never)."""
        return self._generations.get(server, 0)

    async def connect(self, server: str) -> McpConnection:
        """The server's live connection, started (or restarted) when there is none."""
        current = self._connections.get(server)
        if current is not None and current.alive:
            return current  # no await before this: a call decides on the state it saw
        async with self._locks.setdefault(server, asyncio.Lock()):
            current = self._connections.get(server)
            if current is not None and current.alive:
                return current
            return await self._start(server, current)

    async def _start(self, server: str, previous: McpConnection | None) -> McpConnection:
        if self._closed:
            raise McpServerUnavailable(f"MCP server '{server}': Keel is shutting down")
        config = self.configs.get(server)
        if config is None:
            raise McpServerUnavailable(f"no MCP server named '{server}' is configured")
        if previous is not None:
            await previous.close()
        generation = self._generations.get(server, 0) + 1
        self._generations[server] = generation
        connection = McpConnection(config, cwd=self._cwd, generation=generation)
        await connection.open(self._connect_timeout)
        self._connections[server] = connection
        if previous is not None:
            await self._refresh_after_restart(connection)
        return connection

    async def _refresh_after_restart(self, connection: McpConnection) -> None:
        """List a restarted server again at once (its tools may have changed)."""
        try:
            await self._fetch(connection)
        except Exception as exc:  # the listing is retried on the next `listing` call
            log.warning(
                "MCP server %r: listing after restart failed: %s", connection.config.name, exc
            )

    async def listing(self, server: str) -> ToolListing:
        """The server's tools: cached while fresh, else listed again (connecting if needed)."""
        connection = await self.connect(server)
        cached = self.cache.fresh(server, connection.generation)
        if cached is not None:
            return cached
        async with self._locks.setdefault(server, asyncio.Lock()):
            cached = self.cache.fresh(server, connection.generation)
            return cached if cached is not None else await self._fetch(connection)

    async def _fetch(self, connection: McpConnection) -> ToolListing:
        try:
            tools = await connection.list_tools()
        except TimeoutError:
            raise McpServerUnavailable(
                f"MCP server '{connection.config.name}' did not list its tools in time"
            ) from None
        return self.cache.put(connection.config.name, tools, connection.generation)

    async def call_tool(
        self, server: str, tool: str, arguments: Mapping[str, object]
    ) -> ToolResult:
        """Call a tool of `server`; an `isError` result comes back as a failed `ToolResult`."""
        connection = await self.connect(server)
        result = await connection.call_tool(tool, arguments)
        return to_tool_result(result, tool=tool, server=server)

    async def disconnect(self, server: str) -> None:
        """Close the server's connection (it is started again on its next use)."""
        connection = self._connections.pop(server, None)
        if connection is not None:
            await connection.close()

    async def close(self) -> None:
        """Close every connection; later uses fail with `McpServerUnavailable`."""
        self._closed = True
        connections, self._connections = list(self._connections.values()), {}
        await asyncio.gather(*(c.close() for c in connections), return_exceptions=True)


async def try_listing(servers: McpServers, server: str) -> ToolListing | ListingProblem:
    """The server's listing, or why it could not be had (never raises but for cancellation)."""
    try:
        return await servers.listing(server)
    except McpServerUnavailable as exc:
        return ListingProblem(code=exc.diagnostic, message=str(exc))
    except Exception as exc:  # whatever the SDK raised: the server is unusable right now
        message = f"MCP server '{server}' cannot be used: {describe_failure(exc)}"
        return ListingProblem(code="mcp.server.unreachable", message=message)
