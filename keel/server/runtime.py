"""`ServerRuntime`: what one app instance holds while it serves (no module globals).

Opened by the app's lifespan: loads the agent, connects its MCP servers (an unreachable
server or a missing imported tool stops the start with `DefinitionError`), opens the store,
builds the engine (with the injected `engine_factory`, or from `settings.model`) and picks
the plan cache store (the engine's, else one beside the event store). With an
`event_broker` in endpoints.yml the engine's store is a `PublishingStore`: every commit is
offered to the broker's publisher (`keel.broker`). Closed on shutdown: running turns are
cancelled (and recorded as cancelled), the broker's queue is flushed (for a few seconds
at most), then the MCP servers (local server processes stop) and the store are closed.

With `settings.reload` (`keel run --reload`) the project folder is watched
(`keel.server.reload`): on a change the agent is loaded again and, once no turn is running
in this process, swapped in (engine, MCP servers, plan store); the store, the run registry,
the keys and the broker stay. A project with errors is not swapped in: its diagnostics are
logged and the old definition goes on serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from keel.broker import EventPublisher, PublishingStore
from keel.errors import DefinitionError, KeelError
from keel.ids import Clock, IdSource, SystemClock, UuidSource
from keel.loop.engine import Engine
from keel.loop.offline import routes_offline, warm_router
from keel.plans.memory_store import MemoryPlanStore
from keel.plans.sql_store import SqlPlanStore
from keel.project.definition import AgentDefinition
from keel.project.load import load_project
from keel.server.model_spec import build_model
from keel.server.ratelimit import RateLimiter
from keel.server.reload import (
    forget_project_modules,
    log_diagnostics,
    project_revision,
    watch_project,
)
from keel.server.runs import RunRegistry
from keel.server.settings import ServerSettings
from keel.source.diagnostics import has_errors
from keel.stores.factory import open_store
from keel.stores.port import EventStore
from keel.stores.sql import SqlEventStore

log = logging.getLogger("keel.server")
reload_log = logging.getLogger("keel.server.reload")

if TYPE_CHECKING:
    from keel.loop.turn import PlanCascade
    from keel.mcp.runtime import McpRuntime
    from keel.plans.store_port import PlanStore

EngineFactory = Callable[[AgentDefinition, EventStore], Engine]
"""Builds the engine from the loaded agent and the opened store (tests pass their own)."""


class ServerNotReady(KeelError):
    """The runtime was used before the app started (or after it stopped)."""

    code = "keel.server.not_ready"


@dataclass(kw_only=True, slots=True)
class _Open:
    definition: AgentDefinition
    store: EventStore
    engine: Engine
    runs: RunRegistry
    plan_store: PlanStore
    mcp: McpRuntime | None = None
    warming: asyncio.Task[None] | None = None
    """The offline router's skill index being built at startup, when turns will use it."""
    publisher: EventPublisher | None = None
    """The event broker's publisher (`event_broker` in endpoints.yml), if any."""
    engine_store: EventStore | None = None
    """The store the engine writes to (`store`, or the broker's `PublishingStore` on it)."""
    revision: str = ""
    """`project_revision` of the files the definition was loaded from."""


def _start_warming(engine: Engine) -> asyncio.Task[None] | None:
    """Build the offline router's index in the background when the agent routes offline
    (no model, or `routing.offline.enabled: true`); the server is ready meanwhile."""
    if not routes_offline(engine.definition, engine.model):
        return None
    return asyncio.create_task(_warm(engine))


async def _warm(engine: Engine) -> None:
    try:
        await warm_router(engine.router, engine.definition)
    except Exception as exc:  # the first routed message will report it
        log.warning("could not prepare the offline router: %s", exc)


def _publisher(definition: AgentDefinition) -> EventPublisher | None:
    """The publisher for `event_broker: {type: pika}` in endpoints.yml, not yet started."""
    config = definition.endpoints.event_broker
    if config is None:
        return None
    from keel.broker.amqp import AmqpTransport  # lazy: aio-pika only for agents with a broker

    transport = AmqpTransport(config, agent_id=definition.config.id or definition.root.name)
    return EventPublisher(transport, capacity=config.queue_size)


def plan_store_beside(plans: PlanCascade | None, store: EventStore) -> PlanStore:
    """The plan store of the engine's plan cascade (`Engine.plans`); with no cascade, a
    `SqlPlanStore` on the event store's database, or a `MemoryPlanStore` beside any other
    event store."""
    if plans is not None:
        return plans.store
    if isinstance(store, SqlEventStore):
        return SqlPlanStore(store.engine)
    return MemoryPlanStore()


class ServerRuntime:
    """The agent, store, engine and running turns of one app."""

    def __init__(
        self,
        settings: ServerSettings,
        *,
        engine_factory: EngineFactory | None = None,
        clock: Clock | None = None,
        ids: IdSource | None = None,
    ) -> None:
        self.settings = settings
        self.clock: Clock = clock or SystemClock()
        self.ids: IdSource = ids or UuidSource()
        self.limiter = RateLimiter(settings.rate_limit, self.clock)
        self._engine_factory = engine_factory or self._default_engine
        self._open: _Open | None = None
        self._watching: tuple[asyncio.Task[None], asyncio.Event] | None = None

    def _default_engine(self, definition: AgentDefinition, store: EventStore) -> Engine:
        model = build_model(self.settings.model, definition)
        return Engine(definition=definition, store=store, model=model, clock=self.clock)

    async def open(self) -> None:
        """Load the agent, connect its MCP servers, open the store and build the engine."""
        revision = project_revision(self.settings.project)
        definition, diagnostics = load_project(self.settings.project)
        if definition is None or has_errors(diagnostics):
            raise DefinitionError(diagnostics)
        mcp = await self._open_mcp(definition)
        if mcp is not None:
            definition = mcp.definition
        try:
            store = await open_store(self.settings.database_url, clock=self.clock)
        except BaseException:
            if mcp is not None:
                await mcp.close()
            raise
        publisher = _publisher(definition)
        engine_store = store if publisher is None else PublishingStore(store, publisher)
        try:
            engine = self._engine_factory(definition, engine_store)
        except BaseException:
            await store.close()
            if mcp is not None:
                await mcp.close()
            raise
        engine.definitions = mcp
        self._open = _Open(
            definition=definition,
            store=store,
            engine=engine,
            runs=RunRegistry(store),
            plan_store=plan_store_beside(engine.plans, store),
            mcp=mcp,
            warming=_start_warming(engine),
            publisher=publisher,
            engine_store=engine_store,
            revision=revision,
        )
        if publisher is not None:
            publisher.start()
        if self.settings.reload:
            self._start_watching()

    def _start_watching(self) -> None:
        root = self.settings.project
        stop = asyncio.Event()

        async def changed(paths: tuple[str, ...]) -> None:
            shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
            reload_log.info("changed: %s", shown)
            await self.reload()

        task = asyncio.create_task(watch_project(root, changed, stop))
        self._watching = (task, stop)
        reload_log.info("watching %s for changes (revision %s)", root, self._get().revision)

    async def reload(self) -> bool:
        """Load the project again and swap it in between turns; False (the old definition
        kept, the diagnostics logged) when it has errors or its MCP servers fail."""
        current = self._get()
        root = self.settings.project
        revision = project_revision(root)
        if revision == current.revision:
            reload_log.info("no change to the agent (revision %s)", revision)
            return True
        forget_project_modules(root)  # helpers the tools import are read again too
        definition, diagnostics = await asyncio.to_thread(load_project, root)
        log_diagnostics(diagnostics)
        if definition is None or has_errors(diagnostics):
            reload_log.error(
                "%s has errors; still serving revision %s (fix them and save again)",
                root,
                current.revision,
            )
            return False
        try:
            mcp = await self._open_mcp(definition)
        except Exception as exc:  # DefinitionError, or a server that would not start
            reload_log.error("%s; still serving revision %s", exc, current.revision)
            return False
        if mcp is not None:
            definition = mcp.definition
        engine_store = current.engine_store or current.store
        try:
            engine = self._engine_factory(definition, engine_store)
        except Exception as exc:
            if mcp is not None:
                await mcp.close()
            reload_log.error("%s; still serving revision %s", exc, current.revision)
            return False
        engine.definitions = mcp
        await self._swap_between_turns(current, definition, engine, mcp, revision)
        return True

    async def _swap_between_turns(
        self,
        current: _Open,
        definition: AgentDefinition,
        engine: Engine,
        mcp: McpRuntime | None,
        revision: str,
    ) -> None:
        """Swap once no turn runs here: a turn keeps the engine it started with to its end."""
        while running := [run.task for run in current.runs]:
            reload_log.info("swapping once %d running turn(s) end", len(running))
            await asyncio.wait(running)
        old_mcp, old_warming = current.mcp, current.warming
        # No await from here to the end of the swap: no turn can start halfway.
        current.definition = definition
        current.engine = engine
        current.mcp = mcp
        current.plan_store = plan_store_beside(engine.plans, current.store)
        current.warming = _start_warming(engine)
        current.revision = revision
        reload_log.info("reloaded %s (revision %s)", self.settings.project, revision)
        if old_warming is not None:
            old_warming.cancel()
        if old_mcp is not None:
            await old_mcp.close()

    async def _open_mcp(self, definition: AgentDefinition) -> McpRuntime | None:
        """Connect the startup MCP servers (the SDK is imported only for agents using MCP)."""
        if not any(skill.mcp_imports for skill in definition.skills.values()):
            return None
        from keel.mcp.runtime import McpRuntime  # lazy: the MCP SDK

        mcp = McpRuntime(definition, clock=self.clock)
        await mcp.open()
        return mcp

    async def close(self) -> None:
        """Cancel running turns, then close the MCP servers and the store."""
        if self._watching is not None:
            task, stop = self._watching
            self._watching = None
            stop.set()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        current, self._open = self._open, None
        if current is not None:
            if current.warming is not None:
                current.warming.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await current.warming
            await current.runs.shutdown()
            if current.publisher is not None:  # after the cancelled turns' last commits
                await current.publisher.close()
            if current.mcp is not None:
                await current.mcp.close()
            await current.store.close()

    def _get(self) -> _Open:
        if self._open is None:
            raise ServerNotReady("the server is not started")
        return self._open

    @property
    def definition(self) -> AgentDefinition:
        """The served agent."""
        return self._get().definition

    @property
    def revision(self) -> str:
        """`keel.server.reload.project_revision` of the served definition's files."""
        return self._get().revision

    @property
    def store(self) -> EventStore:
        """The event store."""
        return self._get().store

    @property
    def engine(self) -> Engine:
        """The engine."""
        return self._get().engine

    @property
    def plan_store(self) -> PlanStore:
        """The plan cache store (admin endpoints, `keel.server.plans_api`)."""
        return self._get().plan_store

    @property
    def broker(self) -> EventPublisher | None:
        """The event broker's publisher and its counters (`stats`), if one is configured."""
        return self._get().publisher

    @property
    def runs(self) -> RunRegistry:
        """Turns running in this process."""
        return self._get().runs

    @property
    def agent_id(self) -> str:
        """The agent's id (`agent.id`, else the project folder name)."""
        definition = self.definition
        return definition.config.id or definition.root.name
