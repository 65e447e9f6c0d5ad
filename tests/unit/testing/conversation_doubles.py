"""Test doubles for the conversation-test runner: a tiny fake engine, NOT Keel's turn loop.

`FakeHarness` satisfies `keel.testing.harness_protocol.Harness`. Each `send` is one turn:
it asks the scripted model, runs the proposed tool calls, and asks again until a reply has
no tool calls (at most `max_round_trips`, then the turn stops with `budget_exhausted`).
Its "tools": `remember` writes each argument to memory (`memory_set`), `enter_block` puts
an ordered block on the stack, anything else just succeeds with result "ok". A user message
`menu` makes the bot answer with two buttons before asking the model. This is enough
behaviour to exercise every runner path with real events and the real fold.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from keel.events.base import Button, EventBase, StackFrame, StopReason
from keel.events.fold import ConversationState, fold
from keel.events.model import (
    BotMessage,
    ConversationStateChanged,
    Event,
    MemorySet,
    StackChanged,
    ToolExecuted,
    TurnEnded,
    TurnStarted,
    UserMessage,
)
from keel.llm import ModelError, ModelRequest, ToolCall, ToolSchema, user_message
from keel.testing.scripted import ScriptedModel

TOOLS = (
    ToolSchema(name="remember", description="Write memory.", parameters={"type": "object"}),
    ToolSchema(name="lookup", description="Look something up.", parameters={"type": "object"}),
)


@dataclass(frozen=True, kw_only=True, slots=True)
class FakeOutcome:
    """Satisfies `TurnOutcome`."""

    bot_messages: tuple[BotMessage, ...]
    stop_reason: StopReason
    events: tuple[EventBase, ...]


@dataclass(kw_only=True)
class FakeHarness:
    """See the module docstring. `swallow_model_errors` mimics an engine that turns a model
    failure into a turn ending with `error` instead of raising."""

    agent: Path
    model: ScriptedModel
    swallow_model_errors: bool = False
    max_round_trips: int = 4
    closed: bool = False
    _events: list[Event] = field(default_factory=list)

    @property
    def events(self) -> tuple[EventBase, ...]:
        return tuple(self._events)

    @property
    def state(self) -> ConversationState:
        return fold(self._events)

    async def aclose(self) -> None:
        self.closed = True

    async def send(self, text: str) -> FakeOutcome:
        start = len(self._events)
        turn = f"t{self.state.turn_count + 1}"
        self._events += [
            TurnStarted(turn_id=turn),
            ConversationStateChanged(state="running"),
            UserMessage(text=text, message_id=f"m{start}"),
        ]
        if text == "menu":
            buttons = (Button(title="Yes", payload="/yes"), Button(title="No", payload="/no"))
            self._events.append(
                BotMessage(text="Pick one", buttons=buttons, response_source="verbatim")
            )
        stop = await self._loop(text)
        self._events += [
            TurnEnded(turn_id=turn, stop_reason=stop),
            ConversationStateChanged(state="idle"),
        ]
        new = tuple(self._events[start:])
        bots = tuple(e for e in new if isinstance(e, BotMessage))
        return FakeOutcome(bot_messages=bots, stop_reason=stop, events=new)

    async def _loop(self, text: str) -> StopReason:
        request = ModelRequest(messages=(user_message(text),), tools=TOOLS)
        for _ in range(self.max_round_trips):
            try:
                reply = await self.model.complete(request)
            except ModelError:
                if not self.swallow_model_errors:
                    raise
                return "error"
            for call in reply.tool_calls:
                self._run_tool(call)
            if reply.text is not None:
                self._events.append(BotMessage(text=reply.text, response_source="llm"))
            if not reply.tool_calls:
                return "end_turn"
        return "budget_exhausted"

    def _run_tool(self, call: ToolCall) -> None:
        arguments = json.loads(call.arguments)
        if call.name == "remember":
            self._events += [MemorySet(key=k, value=v) for k, v in arguments.items()]
        if call.name == "enter_block":
            frames = (
                StackFrame(frame_id="f1", skill_id=arguments["skill"], type="skill"),
                StackFrame(
                    frame_id="f2",
                    skill_id=arguments["skill"],
                    type="ordered_block",
                    block_id=arguments["block"],
                    step_id=arguments["step"],
                ),
            )
            self._events.append(StackChanged(frames=frames))
        self._events.append(
            ToolExecuted(
                tool_name=call.name,
                arguments=arguments,
                source="local",
                result="ok",
                is_error=False,
                tool_call_id=call.id,
            )
        )


@dataclass(kw_only=True)
class FakeFactory:
    """A `HarnessFactory` that records the harnesses it made."""

    swallow_model_errors: bool = False
    made: list[FakeHarness] = field(default_factory=list)

    def __call__(self, agent: Path, model: ScriptedModel) -> FakeHarness:
        harness = FakeHarness(
            agent=agent, model=model, swallow_model_errors=self.swallow_model_errors
        )
        self.made.append(harness)
        return harness


def write_agent(folder: Path) -> Path:
    """A folder that counts as an agent project for the runner (it only needs agent.yml)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "agent.yml").write_text("persona: test\n", encoding="utf-8")
    return folder
