"""The engine: one request in, the turn loop run, every change appended to the log.

`Engine.handle` is the only entry point. It reads the conversation's log, starts a session
when the conversation is new or expired (spec §7.2: `default_session_start` runs as its own
turn), then runs one turn for the message (see `keel.loop.turn` for what a turn is):

1. an inbound `set:` tap is applied first (§3.5), or refused with a skip notice;
2. a `/skill_id` slash command activates an eligible skill without a model call;
3. the loop: a deterministic pass, then (when it needs judgement) what code can settle
   instead of the model (offline routing and extraction, `keel.loop.offline`; the plan
   cascade, `keel.loop.cascade`, through the `TurnPlans` port), else one model call whose
   reply is checked and acted on, again and again until something says wait, within the
   turn's budget and the repeated-call breaker. A turn the loop handled well may leave a
   plan behind (the cascade's `after_turn`).

`Engine.feedback` is the user's verdict on a turn's plan (approve, reject, repeat).

Cancelling the task that runs `handle` cancels the turn at its current await; the turn is
recorded as `cancelled` and the exception propagates.
A `definitions` source (`keel.mcp.McpRuntime`) is asked for the definition before each
request, so MCP tools whose list changed are offered from the next turn on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from contextlib import AbstractAsyncContextManager

from keel.events.base import JsonValue, freeze_json
from keel.events.fold import SESSION_METADATA_KEY, PendingConfirmation
from keel.events.model import (
    ConversationStateChanged,
    Event,
    MemorySet,
    RoutingDecided,
    SessionStarted,
    StackChanged,
    TurnStarted,
    UserMessage,
)
from keel.ids import Clock, IdSource, SystemClock, UuidSource
from keel.llm.port import Model
from keel.loop import lifecycle, stack
from keel.loop.blocks_run import deterministic_pass
from keel.loop.calls import handle_reply
from keel.loop.confirmations import resolve_pending
from keel.loop.control import SESSION_START
from keel.loop.ending import end_turn, finish_turn
from keel.loop.errors import PauseNotPending, PauseWithdrawn, PlanFeedbackRefused
from keel.loop.failures import log_turn_failure
from keel.loop.knowledge import KnowledgeBase, project_knowledge
from keel.loop.log_cache import LogCache
from keel.loop.model_call import call_model
from keel.loop.observer import TurnObserver
from keel.loop.offline import offline_step
from keel.loop.outcome import _Done
from keel.loop.recorder import Recorder
from keel.loop.result import TurnResult, turn_result
from keel.loop.session import close_interrupted_turn, seed_project_memory, session_due
from keel.loop.taps import apply_tap, button_title
from keel.loop.tools_run import CallSite
from keel.loop.turn import Next, PlanCascade, TurnContext
from keel.project.definition import AgentDefinition, DefinitionSource
from keel.routing.router import OfflineRouter
from keel.stores.port import EventStore

SESSION_START_SKILL = "default_session_start"


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
        indexed beside `store` (`keel.loop.knowledge.project_knowledge`). `router` is the
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
        self.router = router or OfflineRouter.for_project(lambda: self.definition)
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
            await self._refresh_definition()
            loading = self.clock.now()
            async with self._open(conversation_id, observer) as (history, recorder):
                load_ms = (self.clock.now() - loading).total_seconds() * 1000
                return await self._handle(history, recorder, text, metadata, load_ms)

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
                await t.emit(
                    TurnStarted(turn_id=t.turn_id), ConversationStateChanged(state="running")
                )
                site = CallSite(call_id=f"approval:{pause_id}")
                await self._guarded(t, self._approve(t, pending, approved, site))
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

    async def _approve(
        self, t: TurnContext, pending: PendingConfirmation, approved: bool, site: CallSite
    ) -> Next:
        outcome = await resolve_pending(t, pending, approved, site)
        nxt = outcome.next if isinstance(outcome, _Done) else Next.CONTINUE
        return await self._run(t, allow_model=False) if nxt is Next.CONTINUE else nxt

    async def _refresh_definition(self) -> None:
        if self.definitions is not None:
            self.definition = await self.definitions.current()

    def _lock(self, conversation_id: str) -> AbstractAsyncContextManager[object]:
        lock = getattr(self.store, "conversation_lock", None)
        return lock(conversation_id) if lock is not None else contextlib.nullcontext()

    @contextlib.asynccontextmanager
    async def _open(
        self, conversation_id: str, observer: TurnObserver | None
    ) -> AsyncIterator[tuple[tuple[Event, ...], Recorder]]:
        """The conversation's log so far and a recorder for what this request appends;
        afterwards the log cache learns what was committed (or forgets, on a failure)."""
        history, state = await self._log.load(conversation_id)
        recorder = Recorder(
            store=self.store,
            conversation_id=conversation_id,
            state=state,
            clock=self.clock,
            observer=observer,
        )
        try:
            yield history, recorder
        except BaseException:
            self._log.forget(conversation_id)
            raise
        self._log.keep(conversation_id, history + tuple(recorder.committed), recorder.state)

    async def _handle(
        self,
        history: tuple[Event, ...],
        recorder: Recorder,
        text: str,
        metadata: Mapping[str, JsonValue] | None,
        load_ms: float,
    ) -> TurnResult:
        await close_interrupted_turn(recorder)
        if session_due(self.definition, self.clock, history, recorder.state):
            await self._session_start(recorder, history, metadata, text == SESSION_START)
        # The turn below starts its own event list; the session start's belongs to the
        # result too (a greeting comes before the answer, in one response).
        started = tuple(recorder.events)
        if text != SESSION_START:
            await self._turn(recorder, history, text, metadata or {}, load_ms)
            events = started + tuple(recorder.events)
        else:
            events = started
        return turn_result(events, recorder)

    def _context(self, recorder: Recorder, history: tuple[Event, ...]) -> TurnContext:
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
            plans=self.plans.for_turn() if self.plans is not None else None,
        )

    async def _session_start(
        self,
        recorder: Recorder,
        history: tuple[Event, ...],
        metadata: Mapping[str, JsonValue] | None,
        explicit: bool,
    ) -> None:
        t = self._context(recorder, history)
        start: list[Event] = [
            TurnStarted(turn_id=t.turn_id),
            ConversationStateChanged(state="running"),
            SessionStarted(),
        ]
        if recorder.state.stack:
            start.append(StackChanged(frames=()))
        # A pause of the old session dies with it (spec §5.6): resolved as denied.
        start += stack.withdraw_pause(recorder.state, (), "session_ended")
        if metadata:
            start.append(MemorySet(key=SESSION_METADATA_KEY, value=freeze_json(dict(metadata))))
        # One append: metadata the log cannot hold fails it whole, leaving no turn running.
        await t.emit(*start)
        await self._guarded(t, self._start(t, metadata or {}, explicit))

    async def _start(
        self, t: TurnContext, metadata: Mapping[str, JsonValue], explicit: bool
    ) -> Next:
        await seed_project_memory(t, metadata)
        if self.definition.skill(SESSION_START_SKILL) is not None:
            await lifecycle.activate(t, SESSION_START_SKILL, interrupt=False)
        if explicit:
            await t.emit(UserMessage(text=SESSION_START, message_id=self.ids.new_id()))
        return await self._run(t, allow_model=False)

    async def _turn(
        self,
        recorder: Recorder,
        history: tuple[Event, ...],
        text: str,
        metadata: Mapping[str, JsonValue],
        load_ms: float = 0.0,
    ) -> None:
        t = self._context(recorder, tuple(history) + tuple(recorder.events))
        t.stage_ms["load"] = load_ms
        recorder.persist_ms = 0.0
        t.user_text = text
        attachments = metadata.get("attachments")
        t.attachments = len(attachments) if isinstance(attachments, list | tuple) else 0
        recorder.events.clear()
        is_tap = text.startswith("set:")
        await t.emit(
            TurnStarted(turn_id=t.turn_id),
            ConversationStateChanged(state="running"),
            UserMessage(
                text=text,
                message_id=self.ids.new_id(),
                is_button_payload=is_tap,
                button_title=button_title(metadata),
            ),
        )
        await self._guarded(t, self._respond(t, text, metadata, is_tap))

    async def _respond(
        self, t: TurnContext, text: str, metadata: Mapping[str, JsonValue], is_tap: bool
    ) -> Next:
        outcome = await apply_tap(t, text, metadata) if is_tap else None
        if outcome is None:
            active = t.state.active_skill_id
            with t.timed("route"):
                if not await lifecycle.slash_activate(t, text) and active is not None:
                    await t.emit(RoutingDecided(source="sticky", skill_id=active, tier=None))
            outcome = await self._run(t, allow_model=True)
        if t.plans is not None:
            await t.plans.after_turn(t, outcome)  # a clean tool-calling turn leaves a plan
        return outcome

    async def _guarded(self, t: TurnContext, work: Coroutine[object, object, Next]) -> None:
        """Run a turn's work and end the turn, whatever happens to it."""
        try:
            outcome = await work
        except asyncio.CancelledError:
            await asyncio.shield(end_turn(t, "cancelled", "idle"))
            raise
        except Exception as exc:  # a bug or a provider failure: the turn fails, loudly in the log
            # Logged before anything else is appended: after a store error, that may fail too.
            log_turn_failure(t, exc)
            t.stop_detail = f"{type(exc).__name__}: {exc}"
            await t.utter("utter_internal_error")
            await end_turn(t, "error", "failed")
            return
        await finish_turn(t, outcome)

    async def _run(self, t: TurnContext, *, allow_model: bool) -> Next:
        empty_retried = False
        while True:
            outcome = await deterministic_pass(t)
            if outcome is not Next.MODEL or not allow_model:
                return Next.WAIT if outcome is Next.MODEL else outcome
            instead = await offline_step(t, self.router)  # no model call when it can settle
            if instead is None and t.plans is not None:
                instead = await t.plans.before_model(t)  # a cached or planned plan
            if instead is not None:
                if instead is not Next.CONTINUE:
                    return instead
                continue
            if t.model_calls >= t.budget():
                t.stop_detail = "budget"
                return Next.EXHAUSTED
            response, offers = await call_model(t, t.knowledge)
            if not (response.text or "").strip() and not response.tool_calls and not empty_retried:
                empty_retried = True
                continue
            outcome = await handle_reply(t, response, offers)
            if outcome is not Next.CONTINUE:
                return outcome


def _default_cascade(definition: AgentDefinition, store: EventStore) -> PlanCascade | None:
    """The plan cascade when the agent enables `plan_cache`, else None."""
    if not definition.config.plan_cache.enabled:
        return None
    from keel.loop.cascade import default_cascade  # lazy: the plan cache (keel.plans)

    return default_cascade(definition, store)
