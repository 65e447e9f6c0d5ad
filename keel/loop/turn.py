"""What a turn is, and the state a turn keeps while it runs.

A *turn* is the engine's handling of one user message: it starts with `turn_started` and
the conversation going `running`, and ends with `turn_ended(stop_reason)` and the
conversation going `idle`, `paused` (a confirmation is pending) or `ended` (hangup).
Inside a turn the loop alternates deterministic passes and model calls (spec §7.3):

* a *model round trip* is one `Model.complete` call; it counts against the budget of the
  active skill's `max_turns` (or `agent.yml` `max_turns`); an empty reply retried once
  counts too;
* a tool call whose arguments do not validate is answered with a retryable error and
  costs the round trip that produced it, nothing more;
* resuming after an approval is a new turn: the approved call runs once, recorded with
  `metadata.source = tool_confirmation`.

`TurnContext` holds what lives only for the duration of a turn (counters, the knowledge
mode flag, canned replies already sent, the steps entered this turn, this turn's model
transcript). Everything else is in the event log. It also holds the turn's ports: the
model, the knowledge base (`keel.knowledge.section.KnowledgeBase`), the offline router and
the plan cascade (`TurnPlans`, below; `keel.loop.cascade` implements it). This module
imports no step of the loop and not the cascade: the steps import it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from keel.conditions import Outcome, evaluate
from keel.events.base import StackFrame
from keel.events.fold import ConversationState
from keel.events.model import BotMessage, Event, MemoryCleared, MemorySet
from keel.ids import Clock, IdSource
from keel.knowledge.section import KnowledgeBase, KnowledgeSection
from keel.llm.port import Message, Model
from keel.loop.deliver import render_response
from keel.loop.recorder import Recorder
from keel.loop.rephrase import rephrase, wants_rephrase
from keel.memory import reader_for
from keel.project.definition import AgentDefinition, Skill
from keel.routing.router import OfflineRouter
from keel.tools.dispatch import ToolRun

if TYPE_CHECKING:
    from keel.plans.store_port import PlanStore  # only agents with a plan cache load keel.plans


class Next(enum.Enum):
    """What the loop does after a pass or a model reply."""

    MODEL = "model"
    """Ask the model."""
    CONTINUE = "continue"
    """Run another deterministic pass, then decide."""
    WAIT = "wait"
    """End the turn and wait for the user."""
    PAUSED = "paused"
    """End the turn with a pending confirmation."""
    ENDED = "ended"
    """The conversation ended (hangup)."""
    EXHAUSTED = "exhausted"
    """A limit stopped the turn (budget or repeated-call breaker)."""


@dataclass(kw_only=True)
class TurnContext:
    """Everything a running turn needs: definition, ports, log, and turn-local counters."""

    definition: AgentDefinition
    model: Model
    recorder: Recorder
    clock: Clock
    ids: IdSource
    history: tuple[Event, ...]
    """The conversation's events before this request."""
    turn_id: str = ""
    model_calls: int = 0
    searched: bool = False
    canned: list[str] = field(default_factory=list)
    """Texts of canned (verbatim) replies sent this turn, for the reminder."""
    entered: set[tuple[str, str]] = field(default_factory=set)
    """(frame id, step id) pairs the pointer reached during this turn."""
    passes: int = 0
    """Deterministic passes started in this turn."""
    after_denial: bool = False
    """The running pass is the turn's first and runs the steps a denial in an earlier turn
    held back (`keel.loop.blocks_run`): what they finish is not this message's answer."""
    already_collected: list[str] = field(default_factory=list)
    transcript: list[Message] = field(default_factory=list)
    """This turn's assistant tool calls and tool results, in model format."""
    recent_calls: list[tuple[str, str]] = field(default_factory=list)
    delivered: bool = False
    """A bot message was sent in this turn."""
    has_knowledge: bool = False
    knowledge_base: KnowledgeBase | None = None
    """What `search_knowledge` asks (None when the project has no references)."""
    knowledge: tuple[KnowledgeSection, ...] = ()
    """Sections the last `search_knowledge` returned in this turn."""
    stop_detail: str | None = None
    user_text: str = ""
    """The user's message of this turn (escalation looks at its length)."""
    attachments: int = 0
    """Attachments that came with the message (`metadata.attachments`)."""
    last_tier: str | None = None
    """The tier of the latest model call in this turn."""
    routing_call: bool = False
    """The latest model call was a routing call (no skill active) not yet decided."""
    offline_tried: set[str] = field(default_factory=set)
    """What the offline path (`keel.loop.offline`) already tried in this turn."""
    stage_ms: dict[str, float] = field(default_factory=dict)
    """Milliseconds spent per stage in this turn (recorded as one `stages_timed` at its end)."""
    router: OfflineRouter
    """The offline router `keel.loop.offline` asks before a routing model call."""
    plans: TurnPlans | None = None
    """The plan cascade within this turn (`keel.loop.cascade`); None when the engine has
    none: the loop then runs the same, without its calls."""

    def timed(self, stage: str) -> _Timed:
        """Add the time spent in the `with` block to `stage` (injected clock)."""
        timer = _Timed()  # no __init__: the hot path makes one per stage and round trip
        timer.turn, timer.stage = self, stage
        return timer

    on_tool_start: Callable[[str, Mapping[str, object]], None] | None = None
    """Called just before a builder tool runs (live progress; tests cancel turns here)."""

    _active_skill: tuple[tuple[StackFrame, ...], AgentDefinition, Skill | None] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    """`active_skill`'s last answer and the stack and definition it was for."""

    @property
    def state(self) -> ConversationState:
        """The current folded state."""
        return self.recorder.state

    @property
    def active_skill(self) -> Skill | None:
        """The skill of the top skill frame."""
        # Asked many times per round trip; the answer is kept while the stack and the
        # definition are the very same objects (a fold keeps an unchanged stack's tuple).
        stack, definition = self.recorder.state.stack, self.definition
        kept = self._active_skill
        if kept is not None and kept[0] is stack and kept[1] is definition:
            return kept[2]
        skill_id = self.recorder.state.active_skill_id
        skill = None if skill_id is None else definition.skill(skill_id)
        self._active_skill = (stack, definition, skill)
        return skill

    def all_events(self) -> list[Event]:
        """The whole log so far: history plus this request's events."""
        return [*self.history, *self.recorder.events]

    def new_id(self) -> str:
        """A fresh id from the injected source."""
        return self.ids.new_id()

    async def emit(self, *events: Event) -> None:
        """Append events to the log; a memory change fires `utter: when:` triggers that rose."""
        for event in events:  # a plain loop: no call per event on the usual path
            if type(event) is MemorySet or type(event) is MemoryCleared:
                break
        else:
            await self.recorder.emit(*events)
            return
        before = self.trigger_states()
        await self.recorder.emit(*events)
        for name, now in self.trigger_states().items():
            if now and not before.get(name, False):
                await self.utter(name)

    def trigger_states(self) -> dict[str, bool]:
        """Which `utter: when:` triggers of the active skill hold now (fires once per rise)."""
        skill = self.active_skill
        if skill is None:
            return {}
        read = reader_for(self.state.memory, self.definition.memory, skill.skill_id)
        return {
            trigger.response: evaluate(trigger.when, read) is Outcome.TRUE
            for trigger in skill.document.utter
            if trigger.when is not None
        }

    async def utter(self, name: str, *, extra: dict[str, str] | None = None) -> bool:
        """Send response `name` (verbatim, or rephrased when it asks to be: see
        `keel.loop.rephrase`); False when it cannot be rendered."""
        message = render_response(self.definition, self.state, name, extra=extra)
        if message is None:
            return False
        if wants_rephrase(message):
            await self.recorder.commit()  # a model call is a commit boundary
            with self.timed("rephrase"):
                done = await rephrase(
                    message,
                    definition=self.definition,
                    state=self.state,
                    model=self.model,
                    clock=self.clock,
                    events=self.all_events(),
                )
            if done.called is not None:
                await self.emit(done.called)
            message = done.message
        await self.say(message)
        self.canned.append(message.text)
        return True

    async def say(self, message: BotMessage, *, in_transcript: bool = True) -> None:
        """Send a bot message (and show it to the model on later calls of this turn)."""
        await self.emit(message)
        self.delivered = True
        if in_transcript:
            self.transcript.append({"role": "assistant", "content": message.text})

    def budget(self) -> int:
        """Model round trips allowed in this turn."""
        skill = self.active_skill
        if skill is not None and skill.document.max_turns is not None:
            return skill.document.max_turns
        return self.definition.config.max_turns


class _Timed:
    """`TurnContext.timed`'s `with` block (a class: cheaper than a generator's)."""

    __slots__ = ("stage", "started", "turn")
    turn: TurnContext
    stage: str
    started: datetime

    def __enter__(self) -> None:
        self.started = self.turn.clock.now()

    def __exit__(self, *_: object) -> None:
        turn = self.turn
        # Operators and subscripts only, besides the clock (no call the profiler counts).
        elapsed = (turn.clock.now() - self.started) / _MILLISECOND
        stage_ms, stage = turn.stage_ms, self.stage
        if stage in stage_ms:
            stage_ms[stage] += elapsed
        else:
            stage_ms[stage] = elapsed


_MILLISECOND = timedelta(milliseconds=1)


class TurnPlans(Protocol):
    """The plan cascade as one turn sees it (plan-cache spec §3.2): what the loop asks of
    it, at three points, and what it answers. The loop never reaches further into it."""

    async def before_model(self, t: TurnContext) -> Next | None:
        """The loop would ask the model now: a cached (L0/L1) or planned (L3) plan's
        outcome, or None to ask the model. Consulted at most once a turn."""
        ...

    async def after_approval(
        self, t: TurnContext, skill_id: str, resume: Mapping[str, object], run: ToolRun
    ) -> Next | None:
        """The confirmation a plan step paused at was approved and its call ran (`run`):
        the outcome of the rest of the plan (`resume` is what the pause stored), or None
        when nothing goes on."""
        ...

    async def after_turn(self, t: TurnContext, outcome: Next) -> None:
        """The message turn ended with `outcome`: a clean tool-calling turn may become a
        plan."""
        ...


class PlanCascade(Protocol):
    """The plan cascade the engine holds (`keel.loop.cascade.Cascade`), one per engine."""

    @property
    def store(self) -> PlanStore:
        """Where its entries, observations and effect journal live."""
        ...

    def for_turn(self) -> TurnPlans:
        """The cascade for one new turn (its per-turn state lives in what this returns)."""
        ...

    async def feedback(
        self,
        recorder: Recorder,
        history: tuple[Event, ...],
        turn_id: str,
        signal: str,
        now: float,
    ) -> str:
        """Explicit feedback on turn `turn_id`'s plan (`Engine.feedback`); what changed."""
        ...

    async def maintain(self, definition: AgentDefinition, now: float) -> dict[str, int]:
        """Maintenance of every skill's cache now; the counts of what changed."""
        ...
