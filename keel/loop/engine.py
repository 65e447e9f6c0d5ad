"""The engine: one request in, the turn loop run, every change appended to the log.

`Engine.handle` is the entry point for a message, `Engine.resolve_pause` for an approval
from outside the chat, `Engine.feedback` for the user's verdict on a turn's plan (approve,
reject, repeat). The engine serialises the requests of one conversation, reads its log,
builds the turn's context with its ports (model, knowledge base, offline router, plan
cascade) and hands the turn to `keel.loop.driver`, where the whole order of a turn is
written out (see `keel.loop.turn` for what a turn is).

Cancelling the task that runs `handle` cancels the turn at its current await; the turn is
recorded as `cancelled` and the exception propagates.
A `definitions` source (`keel.mcp.McpRuntime`) is asked for the definition before each
request, so MCP tools whose list changed are offered from the next turn on.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager

from keel.events.base import JsonValue
from keel.events.model import Event
from keel.ids import Clock, IdSource, SystemClock, UuidSource
from keel.knowledge.section import KnowledgeBase
from keel.knowledge.sources import has_knowledge
from keel.llm.port import Model
from keel.loop import driver, stack
from keel.loop.errors import PauseNotPending, PauseWithdrawn, PlanFeedbackRefused
from keel.loop.log_cache import LogCache
from keel.loop.observer import TurnObserver
from keel.loop.recorder import Recorder
from keel.loop.result import TurnResult, turn_result
from keel.loop.session import close_interrupted_turn
from keel.loop.turn import PlanCascade, TurnContext
from keel.project.definition import AgentDefinition, DefinitionSource
from keel.routing.router import OfflineRouter
from keel.stores.port import EventStore


class Engine:
    """Runs conversations of one agent definition against a store and a model."""

    def __init__(
        self,
        *,
        definition: AgentDefinition,
        store: EventStore,
        model: Model,
        clock: Clock | None = None,
        ids: IdSource | None = None,
        on_tool_start: Callable[[str, Mapping[str, object]], None] | None = None,
        definitions: DefinitionSource | None = None,
        knowledge: KnowledgeBase | None = None,
        router: OfflineRouter | None = None,
        plans: PlanCascade | None = None,
    ) -> None:
        """`knowledge` answers `search_knowledge`; by default the project's references,
        indexed beside `store` (`project_knowledge`). `router` is the
        offline router (`keel.routing`); by default on the project's embedder. `plans` is
        the plan cascade (`keel.loop.cascade.Cascade`); by default on `store`'s database
        when the agent enables `plan_cache`."""
        self.on_tool_start = on_tool_start
        self.definition = definition
        self.definitions = definitions
        self.store = store
        self.model = model
        self.clock: Clock = clock or SystemClock()
        self.ids: IdSource = ids or UuidSource()
        self.knowledge = knowledge or project_knowledge(definition, store)
        self.router = router or _project_router(self)
        self._log = LogCache(store)
        self.plans = plans if plans is not None else _default_cascade(definition, store)

    async def handle(
        self,
        conversation_id: str,
        text: str,
        *,
        metadata: Mapping[str, JsonValue] | None = None,
        observer: TurnObserver | None = None,
    ) -> TurnResult:
        """Handle one user message (or `/session_start`) for `conversation_id`.

        Turns of one conversation are serialised through the store's conversation lock
        (across processes on PostgreSQL), so they never interleave.
        """
        async with self._lock(conversation_id):
            if self.definitions is not None:
                await self._refresh_definition()
            loading = self.clock.now()
            async with self._open(conversation_id, observer) as (history, recorder):
                load_ms = (self.clock.now() - loading).total_seconds() * 1000

                def new_turn(log: tuple[Event, ...]) -> TurnContext:
                    return self._context(recorder, log)

                events = await driver.request(
                    new_turn, self.definition, recorder, history, text, metadata or {}, load_ms
                )
                return turn_result(events, recorder)

    async def resolve_pause(
        self,
        conversation_id: str,
        pause_id: str,
        approved: bool,
        *,
        observer: TurnObserver | None = None,
    ) -> TurnResult:
        """Resolve a pending pause point from outside the chat (the approval API).

        Exactly once: the resolution is appended before the held call runs, and a pause
        that is not pending (unknown, or already resolved) raises `PauseNotPending`
        (`PauseWithdrawn` when it died with its skill frame or session). The approved call
        runs; then the deterministic steps that follow it; no model call.
        """
        async with self._lock(conversation_id):
            await self._refresh_definition()
            async with self._open(conversation_id, observer) as (history, recorder):
                await close_interrupted_turn(recorder)
                pending = recorder.state.pending_confirmation
                if pending is None or pending.pause_id != pause_id:
                    reason = stack.withdrawal_reason(history, pause_id)
                    if reason is not None:
                        raise PauseWithdrawn(conversation_id, pause_id, reason)
                    raise PauseNotPending(conversation_id, pause_id)
                t = self._context(recorder, history)
                await driver.approval_turn(t, pending, approved)
                return turn_result(tuple(recorder.events), recorder)

    async def feedback(self, conversation_id: str, turn_id: str, signal: str) -> str:
        """Explicit feedback on a turn's plan: `approve`, `reject` or `repeat` (spec §3.12).

        The skill's cache learns from it (promotion, demotion, anti-entries) and a
        `plan_cache_decided` record (`layer: feedback`) is appended to the conversation.
        Returns what changed; raises `PlanFeedbackRefused` when there is nothing to learn.
        """
        if self.plans is None:
            raise PlanFeedbackRefused(conversation_id, turn_id, "the agent has no plan_cache")
        async with self._lock(conversation_id):
            async with self._open(conversation_id, None) as (history, recorder):
                now = self.clock.now().timestamp()
                return await self.plans.feedback(recorder, history, turn_id, signal, now)

    async def record(self, conversation_id: str, *events: Event) -> None:
        """Append records a channel makes between turns (a voice barge-in), in the
        conversation's order: under its lock, after any turn running for it."""
        async with self._lock(conversation_id):
            async with self._open(conversation_id, None) as (_history, recorder):
                await recorder.emit(*events)

    async def _refresh_definition(self) -> None:
        if self.definitions is not None:
            self.definition = await self.definitions.current()

    def _lock(self, conversation_id: str) -> AbstractAsyncContextManager[object]:
        lock = getattr(self.store, "conversation_lock", None)
        return lock(conversation_id) if lock is not None else contextlib.nullcontext()

    def _open(self, conversation_id: str, observer: TurnObserver | None) -> _Opened:
        """The conversation's log so far and a recorder for what this request appends;
        afterwards what is still buffered is committed (a turn commits its own at its
        end) and the log cache learns what was committed (or forgets, on a failure)."""
        return _Opened(self, conversation_id, observer)

    def _context(self, recorder: Recorder, history: tuple[Event, ...]) -> TurnContext:
        """A new turn's context: a fresh turn id, this request's recorder, the ports."""
        return TurnContext(
            definition=self.definition,
            model=self.model,
            recorder=recorder,
            clock=self.clock,
            ids=self.ids,
            history=history,
            turn_id=self.ids.new_id(),
            has_knowledge=self.knowledge is not None,
            knowledge_base=self.knowledge,
            on_tool_start=self.on_tool_start,
            router=self.router,
            plans=self.plans.for_turn() if self.plans is not None else None,
        )


def _project_router(engine: Engine) -> OfflineRouter:
    """The router on the embedder `engine`'s current definition configures, holding the
    engine weakly: no reference cycle, so a dropped engine (and the logs it cached) is
    freed at once rather than at the next garbage collection."""
    held = weakref.ref(engine)

    def definition() -> AgentDefinition:
        alive = held()
        if alive is None:
            raise RuntimeError("the engine of this router is gone")
        return alive.definition

    return OfflineRouter.for_project(definition)


class _Opened:
    """`Engine._open`'s `async with` block (a class: cheaper than a generator's)."""

    __slots__ = ("conversation_id", "engine", "history", "observer", "recorder")

    def __init__(self, engine: Engine, conversation_id: str, observer: TurnObserver | None) -> None:
        self.engine, self.conversation_id, self.observer = engine, conversation_id, observer

    async def __aenter__(self) -> tuple[tuple[Event, ...], Recorder]:
        engine = self.engine
        history, state = await engine._log.load(self.conversation_id)
        self.history = history
        self.recorder = Recorder(
            store=engine.store,
            conversation_id=self.conversation_id,
            state=state,
            clock=engine.clock,
            observer=self.observer,
        )
        return history, self.recorder

    async def __aexit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        recorder = self.recorder
        if exc_type is not None:
            await self._failed()
            return  # the block's exception goes on
        try:
            await recorder.commit()
        except BaseException:
            await self._failed()
            raise
        self.engine._log.keep(
            self.conversation_id,
            self.history + tuple(recorder.committed),
            recorder.committed_state,
        )

    async def _failed(self) -> None:
        self.engine._log.forget(self.conversation_id)
        # What the request emitted before it failed is kept, as if each event had been
        # appended on its own (a refused approval's closing of an interrupted turn).
        with contextlib.suppress(Exception):
            await asyncio.shield(self.recorder.commit())


def _default_cascade(definition: AgentDefinition, store: EventStore) -> PlanCascade | None:
    """The plan cascade when the agent enables `plan_cache`, else None."""
    if not definition.config.plan_cache.enabled:
        return None
    from keel.loop.cascade import default_cascade  # lazy: the plan cache (keel.plans)

    return default_cascade(definition, store)


def project_knowledge(definition: AgentDefinition, event_store: object) -> KnowledgeBase | None:
    """The agent's knowledge base stored beside `event_store`, or None without references."""
    if not has_knowledge(definition.root):
        return None
    from keel.knowledge.service import ProjectKnowledge  # lazy: numpy and the embedder

    return ProjectKnowledge.for_definition(definition, event_store)
