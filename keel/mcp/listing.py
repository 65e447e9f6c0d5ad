"""Tool lists of MCP servers, and the per-server cache that keeps them for a while (pure).

A listing is what one connection of a server said its tools are. The cache serves it for
`ttl` seconds (seed 004: external tool lists are cached ten minutes) and only while the
connection it came from is the current one: a restarted server (a new connection
generation) is listed again at once. The last listing stays available after it expired,
so a server that cannot be reached for a refresh keeps its tools offered (their calls then
fail with a model-visible error) instead of silently losing them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import mcp_types

from keel.ids import Clock

DEFAULT_TTL_SECONDS = 600.0
"""Ten minutes (seed 004)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolListing:
    """The tools one connection of a server listed, and when."""

    server: str
    tools: tuple[mcp_types.Tool, ...]
    fetched_at: datetime
    generation: int
    """Which connection of the server it came from (1 for the first, +1 per restart)."""

    def tool(self, name: str) -> mcp_types.Tool | None:
        """The listed tool with this name, if any."""
        return next((tool for tool in self.tools if tool.name == name), None)


@dataclass(frozen=True, kw_only=True, slots=True)
class ListingProblem:
    """Why a server's tools could not be listed: a diagnostic code and a message."""

    code: str
    message: str


class ToolListCache:
    """The latest listing of each server, fresh for `ttl` seconds of the injected clock."""

    def __init__(self, *, clock: Clock, ttl: float = DEFAULT_TTL_SECONDS) -> None:
        self.clock = clock
        self.ttl = ttl
        self._latest: dict[str, ToolListing] = {}

    def fresh(self, server: str, generation: int) -> ToolListing | None:
        """The listing if it is younger than the TTL and from connection `generation`."""
        listing = self._latest.get(server)
        if listing is None or listing.generation != generation:
            return None
        age = (self.clock.now() - listing.fetched_at).total_seconds()
        return listing if age < self.ttl else None

    def latest(self, server: str) -> ToolListing | None:
        """The last listing of the server, however old."""
        return self._latest.get(server)

    def put(self, server: str, tools: tuple[mcp_types.Tool, ...], generation: int) -> ToolListing:
        """Store what the server just listed; returns the stored listing."""
        listing = ToolListing(
            server=server, tools=tools, fetched_at=self.clock.now(), generation=generation
        )
        self._latest[server] = listing
        return listing
