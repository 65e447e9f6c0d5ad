"""`McpRuntime`: the MCP side of a served agent, from startup to shutdown.

    mcp = McpRuntime(definition)
    definition = await mcp.open()        # DefinitionError when a server or tool is missing
    engine = Engine(definition=definition, definitions=mcp, ...)
    ...
    await mcp.close()

* `open` connects the servers with `start: startup` (the default), lists their tools and
  adds the imported ones to their skills. Any unreachable server or missing or unusable
  imported tool is an error: the app does not start.
* `current` is called by the engine before each turn: a `start: lazy` server is connected
  on the first turn, a tool list older than the TTL (ten minutes) is fetched again, and a
  server that died is restarted (and listed again). When a list changed, the definition
  is rebuilt. A server that cannot be reached keeps its last tool list: its tools stay
  offered and their calls fail with a model-visible error until it is back. After a failed
  attempt the turns do not try that server again for `RETRY_SECONDS` (a server that hangs
  on start would otherwise delay every turn); calls to its tools still try, bounded by
  their `tool_timeout`.
* `check` connects every used server, lazy ones included, and returns the diagnostics
  (`keel validate`); `check_mcp` does that and closes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from keel.errors import DefinitionError
from keel.ids import Clock, SystemClock
from keel.mcp.connection import CONNECT_TIMEOUT_SECONDS
from keel.mcp.listing import DEFAULT_TTL_SECONDS, ListingProblem, ToolListing
from keel.mcp.manager import McpServers, try_listing
from keel.mcp.resolve import attach_mcp_tools, used_servers
from keel.project.definition import AgentDefinition
from keel.source.diagnostics import Diagnostic, has_errors

log = logging.getLogger("keel.mcp")

RETRY_SECONDS = 30.0
"""How long the turns leave a server alone after they failed to reach it."""


class McpRuntime:
    """MCP servers and tools of one agent definition (a `DefinitionSource` for the engine)."""

    def __init__(
        self,
        definition: AgentDefinition,
        *,
        clock: Clock | None = None,
        ttl: float = DEFAULT_TTL_SECONDS,
        connect_timeout: float = CONNECT_TIMEOUT_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.base = definition
        self._monotonic = monotonic
        self._retry_at: dict[str, float] = {}
        self.configs = used_servers(definition)
        self.servers = McpServers(
            self.configs,
            cwd=definition.root,
            clock=clock or SystemClock(),
            ttl=ttl,
            connect_timeout=connect_timeout,
        )
        self._listings: dict[str, ToolListing | ListingProblem] = {}
        self._definition = definition

    @property
    def definition(self) -> AgentDefinition:
        """The definition with the MCP tools known so far."""
        return self._definition

    async def open(self) -> AgentDefinition:
        """Connect the startup servers and attach their tools; `DefinitionError` on errors."""
        names = [c.name for c in self.configs if c.start == "startup"]
        diagnostics = await self._refresh(names)
        if has_errors(diagnostics):
            await self.close()
            raise DefinitionError([d for d in diagnostics if d.severity == "error"])
        for warning in diagnostics:
            log.warning("%s", warning.render())
        return self._definition

    async def check(self, *, startup_only: bool = False) -> list[Diagnostic]:
        """Connect the used servers (only the startup ones if asked), list, and report."""
        names = [c.name for c in self.configs if not startup_only or c.start == "startup"]
        return await self._refresh(names)

    async def current(self) -> AgentDefinition:
        """The definition for the next turn (see the module docstring)."""
        changed = False
        for config in self.configs:
            if self._monotonic() < self._retry_at.get(config.name, 0.0):
                continue
            listing = await try_listing(self.servers, config.name)
            known = self._listings.get(config.name)
            if isinstance(listing, ListingProblem):
                self._retry_at[config.name] = self._monotonic() + RETRY_SECONDS
                log.warning("%s (tried again in %g s)", listing.message, RETRY_SECONDS)
                if isinstance(known, ToolListing):
                    continue  # keep its last tool list
            else:
                self._retry_at.pop(config.name, None)
            if listing is not known and listing != known:
                self._listings[config.name] = listing
                changed = True
        if changed:
            for problem in self._attach():
                log.warning("%s", problem.render())
        return self._definition

    async def close(self) -> None:
        """Close every connection (local server processes are stopped)."""
        await self.servers.close()

    async def _refresh(self, names: list[str]) -> list[Diagnostic]:
        found = await asyncio.gather(*(try_listing(self.servers, name) for name in names))
        self._listings.update(zip(names, found, strict=True))
        return self._attach()

    def _attach(self) -> list[Diagnostic]:
        self._definition, problems = attach_mcp_tools(self.base, self._listings, self.servers)
        return problems


def uses_mcp(definition: AgentDefinition) -> bool:
    """True when some skill imports an MCP tool."""
    return bool(used_servers(definition))


async def check_mcp(definition: AgentDefinition, *, startup_only: bool = False) -> list[Diagnostic]:
    """Connect the servers the skills import from, report what is missing, disconnect."""
    runtime = McpRuntime(definition)
    try:
        return await runtime.check(startup_only=startup_only)
    finally:
        await runtime.close()
