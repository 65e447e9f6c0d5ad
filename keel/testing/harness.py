"""`ConversationHarness`: drive an agent in process, with a scripted model and fake clock."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from keel.errors import DefinitionError
from keel.events.base import JsonValue
from keel.events.fold import ConversationState, fold
from keel.events.model import BotMessage, Event, TurnStarted
from keel.ids import Clock, FakeClock, IdSource, SequentialIds
from keel.llm.port import Model
from keel.loop.engine import Engine
from keel.loop.result import TurnResult
from keel.project.definition import AgentDefinition
from keel.project.load import load_project
from keel.source.diagnostics import has_errors
from keel.stores.memory import InMemoryEventStore
from keel.stores.port import EventStore

if TYPE_CHECKING:
    from keel.mcp.runtime import McpRuntime


def load_definition(agent: AgentDefinition | Path | str) -> AgentDefinition:
    """The definition itself, or the project at a path (raises `DefinitionError`)."""
    if isinstance(agent, AgentDefinition):
        return agent
    definition, diagnostics = load_project(agent)
    if definition is None or has_errors(diagnostics):
        raise DefinitionError(diagnostics)
    return definition


class ConversationHarness:
    """One conversation with an agent, in process: deterministic clock and ids by default."""

    def __init__(
        self,
        agent: AgentDefinition | Path | str,
        model: Model,
        *,
        store: EventStore | None = None,
        clock: Clock | None = None,
        ids: IdSource | None = None,
        conversation_id: str = "conversation-1",
        connect_mcp: bool = False,
    ) -> None:
        """With `connect_mcp`, the MCP servers the skills import tools from are connected
        before the first turn, as `keel run` does at startup (`keel test`, `keel chat`);
        `aclose()` stops them."""
        self.definition = load_definition(agent)
        self.store: EventStore = store or InMemoryEventStore()
        self.clock: Clock = clock or FakeClock()
        self.engine = Engine(
            definition=self.definition,
            store=self.store,
            model=model,
            clock=self.clock,
            ids=ids or SequentialIds("id-"),
            on_tool_start=self._tool_started,
        )
        self._cancel_on: str | None = None
        self._task: asyncio.Task[TurnResult] | None = None
        self.conversation_id = conversation_id
        self._events: list[Event] = []
        self._state = ConversationState()
        self._mcp: McpRuntime | None = None
        self._connect_mcp = connect_mcp

    async def _connect(self) -> None:
        """Before the first turn: connect the MCP servers the skills import tools from, as
        `keel run` does at startup (`DefinitionError` when a server or tool is missing)."""
        if not self._connect_mcp or self._mcp is not None or self.engine.definitions is not None:
            return
        if not any(skill.mcp_imports for skill in self.definition.skills.values()):
            return
        from keel.mcp.runtime import McpRuntime  # lazy: the MCP SDK

        self._mcp = McpRuntime(self.definition, clock=self.clock)
        self.definition = await self._mcp.open()
        self.engine.definition = self.definition
        self.engine.definitions = self._mcp

    async def aclose(self) -> None:
        """Close the MCP connections (and stop local servers) this harness opened."""
        if self._mcp is not None:
            await self._mcp.close()
            self._mcp = None

    async def send(
        self, text: str, *, metadata: Mapping[str, JsonValue] | None = None
    ) -> TurnResult:
        """Send one user message and wait for the turn to end."""
        await self._connect()
        result = await self.engine.handle(self.conversation_id, text, metadata=metadata)
        self._events.extend(result.events)
        self._state = result.state
        return result

    def _tool_started(self, name: str, arguments: Mapping[str, object]) -> None:
        if self._task is not None and name == self._cancel_on:
            # Cancel from outside, on the next loop iteration: the tool is then suspended at
            # its first await, as with a real barge-in. Cancelling synchronously here would
            # mark the task before the tool is even called, which the tool runner cannot tell
            # apart from the tool raising CancelledError itself.
            asyncio.get_running_loop().call_soon(self._task.cancel)

    async def send_cancelling(self, text: str, *, on_tool: str) -> None:
        """Send a message and cancel the turn as soon as tool `on_tool` starts running.

        The cancellation reaches the tool at its first await; the turn is recorded as
        cancelled. The log is re-read afterwards, since the turn returned no result.
        """
        await self._connect()
        self._cancel_on = on_tool
        self._task = asyncio.ensure_future(self.engine.handle(self.conversation_id, text))
        try:
            await self._task
        except asyncio.CancelledError:
            if not self._task.cancelled():
                raise
        finally:
            self._cancel_on, self._task = None, None
        await self.refresh()

    async def switch(self, conversation_id: str) -> None:
        """Go on in another conversation of the same engine and store: `send`, `events` and
        `state` speak of it from now on (its log is read back if it has one)."""
        self.conversation_id = conversation_id
        await self.refresh()

    async def feedback(self, signal: str) -> str:
        """Explicit feedback (`approve`, `reject`, `repeat`) on the current conversation's
        last turn (`Engine.feedback`); returns what changed."""
        turns = [e.turn_id for e in self._events if isinstance(e, TurnStarted)]
        if not turns:
            raise ValueError("the conversation has no turn to give feedback on")
        changed = await self.engine.feedback(self.conversation_id, turns[-1], signal)
        await self.refresh()
        return changed

    async def refresh(self) -> None:
        """Re-read the log from the store (after a cancelled turn, for instance)."""
        self._events = [s.event for s in await self.store.read(self.conversation_id)]
        self._state = fold(self._events)

    @property
    def events(self) -> tuple[Event, ...]:
        """Every event of the conversation so far."""
        return tuple(self._events)

    @property
    def state(self) -> ConversationState:
        """The conversation state after the last turn."""
        return self._state

    @property
    def bot_texts(self) -> tuple[str, ...]:
        """Text of every bot message so far."""
        return tuple(e.text for e in self._events if isinstance(e, BotMessage))


_DEFINITIONS: dict[Path, AgentDefinition] = {}


def make_harness(agent_path: Path, model: Model) -> ConversationHarness:
    """What `keel test` uses: a fresh in-memory conversation with the agent at `agent_path`.

    The project is loaded once per path and process; every test gets a fresh store.
    """
    key = Path(agent_path).resolve()
    definition = _DEFINITIONS.get(key)
    if definition is None:
        definition = _DEFINITIONS[key] = load_definition(key)
    return ConversationHarness(definition, model, connect_mcp=True)
