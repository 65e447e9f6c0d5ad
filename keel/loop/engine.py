"""The engine: one request in, the turn loop run, every change appended to the log.

`Engine.handle` is the only entry point. It reads the conversation's log, starts a session
when the conversation is new or expired (spec §7.2: `default_session_start` runs as its own
turn), then runs one turn for the message (see `keel.loop.turn` for what a turn is):

1. an inbound `set:` tap is applied first (§3.5), or refused with a skip notice;
2. a `/skill_id` slash command activates an eligible skill without a model call;
3. the loop: a deterministic pass, then (when it needs judgement) one model call whose
   reply is checked and acted on, again and again until something says wait, within the
   turn's budget and the repeated-call breaker.

Cancelling the task that runs `handle` cancels the turn at its current await; the turn is
recorded as `cancelled` and the exception propagates.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from keel.events.base import JsonValue, freeze_json
from keel.events.fold import SESSION_METADATA_KEY, ConversationState, fold
from keel.events.model import (
    BotMessage,
    BotTurnEnded,
    ConversationStateChanged,
    Event,
    MemorySet,
    SessionStarted,
    SlotSet,
    StackChanged,
    TurnEnded,
    TurnStarted,
    UserMessage,
)
from keel.ids import Clock, IdSource, SystemClock, UuidSource
from keel.llm.port import Model
from keel.loop import lifecycle
from keel.loop.blocks_run import deterministic_pass
from keel.loop.calls import handle_reply
from keel.loop.knowledge import has_knowledge
from keel.loop.model_call import call_model
from keel.loop.offer import eligible_skills
from keel.loop.recorder import Recorder
from keel.loop.taps import apply_tap, button_title
from keel.loop.turn import Next, TurnContext
from keel.memory.frozen import thaw
from keel.project.definition import AgentDefinition
from keel.stores.port import EventStore

SESSION_START = "/session_start"
SESSION_START_SKILL = "default_session_start"

_STOP = {
    Next.WAIT: "end_turn",
    Next.ENDED: "end_turn",
    Next.PAUSED: "paused",
    Next.EXHAUSTED: "budget_exhausted",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnResult:
    """What one request produced."""

    bot_messages: tuple[BotMessage, ...]
    stop_reason: str
    events: tuple[Event, ...]
    """Every event this request appended, in order."""
    state: ConversationState


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
    ) -> None:
        self.on_tool_start = on_tool_start
        self.definition = definition
        self.store = store
        self.model = model
        self.clock: Clock = clock or SystemClock()
        self.ids: IdSource = ids or UuidSource()
        self._knowledge = has_knowledge(definition.root)

    async def handle(
        self,
        conversation_id: str,
        text: str,
        *,
        metadata: Mapping[str, JsonValue] | None = None,
    ) -> TurnResult:
        """Handle one user message (or `/session_start`) for `conversation_id`."""
        history = tuple(s.event for s in await self.store.read(conversation_id))
        recorder = Recorder(
            store=self.store, conversation_id=conversation_id, state=fold(history), clock=self.clock
        )
        if self._session_due(history, recorder.state):
            await self._session_start(recorder, history, metadata, text == SESSION_START)
        # The turn below starts its own event list; the session start's belongs to the
        # result too (a greeting comes before the answer, in one response).
        started = tuple(recorder.events)
        if text != SESSION_START:
            await self._turn(recorder, history, text, metadata or {})
            events = started + tuple(recorder.events)
        else:
            events = started
        return TurnResult(
            bot_messages=tuple(e for e in events if isinstance(e, BotMessage)),
            stop_reason=recorder.state.last_stop_reason or "end_turn",
            events=events,
            state=recorder.state,
        )

    def _context(self, recorder: Recorder, history: tuple[Event, ...]) -> TurnContext:
        return TurnContext(
            definition=self.definition,
            model=self.model,
            recorder=recorder,
            clock=self.clock,
            ids=self.ids,
            history=history,
            turn_id=self.ids.new_id(),
            has_knowledge=self._knowledge,
            on_tool_start=self.on_tool_start,
        )

    def _session_due(self, history: tuple[Event, ...], state: ConversationState) -> bool:
        if not any(isinstance(e, SessionStarted) for e in history):
            return True
        if state.status == "ended":
            # After a hangup the session is over: the next message starts a new one.
            return True
        minutes = self.definition.config.session_config.session_expiration_time
        last = history[-1].timestamp
        return minutes > 0 and self.clock.now().timestamp() - last > minutes * 60

    async def _session_start(
        self,
        recorder: Recorder,
        history: tuple[Event, ...],
        metadata: Mapping[str, JsonValue] | None,
        explicit: bool,
    ) -> None:
        t = self._context(recorder, history)
        await t.emit(TurnStarted(turn_id=t.turn_id), ConversationStateChanged(state="running"))
        start: list[Event] = [SessionStarted()]
        if recorder.state.stack:
            start.append(StackChanged(frames=()))
        if metadata:
            start.append(MemorySet(key=SESSION_METADATA_KEY, value=freeze_json(dict(metadata))))
        await t.emit(*start)
        await self._seed(t, metadata or {})
        if self.definition.skill(SESSION_START_SKILL) is not None:
            await lifecycle.activate(t, SESSION_START_SKILL, interrupt=False)
        if explicit:
            await t.emit(UserMessage(text=SESSION_START, message_id=self.ids.new_id()))
        await self._finish(t, await self._run(t, allow_model=False))

    async def _seed(self, t: TurnContext, metadata: Mapping[str, JsonValue]) -> None:
        """Project fields: `seed: true` ones from channel metadata, the others that are
        still unset take their `initial_value` (spec §3.2)."""
        writes: list[Event] = []
        for field in self.definition.memory.fields_of("project"):
            if field.seed and metadata.get(field.name) is not None:
                value = freeze_json(metadata[field.name])
            elif field.initial_value is not None and t.state.memory.get(field.key) is None:
                value = freeze_json(thaw(field.initial_value))
            else:
                continue
            writes += [
                MemorySet(key=field.key, value=value),
                SlotSet(name=field.key, value=value, filled_by="session_start"),
            ]
        await t.emit(*writes)

    async def _turn(
        self,
        recorder: Recorder,
        history: tuple[Event, ...],
        text: str,
        metadata: Mapping[str, JsonValue],
    ) -> None:
        t = self._context(recorder, tuple(history) + tuple(recorder.events))
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
        try:
            outcome = await apply_tap(t, text, metadata) if is_tap else None
            if outcome is None:
                await self._slash(t, text)
                outcome = await self._run(t, allow_model=True)
        except asyncio.CancelledError:
            await asyncio.shield(self._end(t, "cancelled", "idle"))
            raise
        except Exception as exc:  # a bug or a provider failure: the turn fails, loudly in the log
            t.stop_detail = f"{type(exc).__name__}: {exc}"
            await t.utter("utter_internal_error")
            await self._end(t, "error", "failed")
            return
        await self._finish(t, outcome)

    async def _slash(self, t: TurnContext, text: str) -> None:
        if not text.startswith("/"):
            return
        target = text[1:].strip()
        if target in {s.skill_id for s in eligible_skills(self.definition, t.state)}:
            await lifecycle.drop_resume_offer(t)
            await lifecycle.activate(t, target, interrupt=t.state.active_skill_id is not None)

    async def _run(self, t: TurnContext, *, allow_model: bool) -> Next:
        empty_retried = False
        while True:
            outcome = await deterministic_pass(t)
            if outcome is not Next.MODEL or not allow_model:
                return Next.WAIT if outcome is Next.MODEL else outcome
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

    async def _finish(self, t: TurnContext, outcome: Next) -> None:
        if outcome is Next.EXHAUSTED:
            repeated = t.stop_detail == "repeated_tool_call"
            await t.utter("utter_repeated_tool_call" if repeated else "utter_budget_exhausted")
        pending = t.state.pending_confirmation is not None
        if outcome is Next.ENDED:
            await self._end(t, "end_turn", "ended")
        elif pending:
            await self._end(t, "paused", "paused")
        else:
            await self._end(t, _STOP[outcome], "idle")

    async def _end(self, t: TurnContext, stop_reason: str, status: str) -> None:
        meta = {"detail": t.stop_detail} if t.stop_detail else {}
        await t.emit(
            TurnEnded(turn_id=t.turn_id, stop_reason=stop_reason, metadata=meta),  # type: ignore[arg-type]
            ConversationStateChanged(state=status),  # type: ignore[arg-type]
            BotTurnEnded(),
        )
