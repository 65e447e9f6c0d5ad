"""The arena for adversarial scripted models: a conversation with the vault skill active,
one hostile model reply, and the checks every refused attempt must pass.

An attempt is refused when (1) the engine logged `tool_call_refused` with the expected code
for the hostile call, (2) the model was told (the tool message on the next request carries
the refusal text) or the proposal was dropped silently where the spec says so (`listen`),
and (3) nothing it asked for happened: the forbidden tool did not run, memory, stack and
conversation status are as they were, the conversation did not end.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from keel.events.fold import ConversationState
from keel.events.model import (
    ConversationStateChanged,
    Event,
    SkillActivated,
    ToolCallRefused,
    ToolExecuted,
)
from keel.llm.port import ModelRequest
from keel.loop.result import TurnResult
from keel.project.definition import AgentDefinition
from keel.testing import ConversationHarness, ScriptedModel, load_definition

AGENT = Path(__file__).resolve().parent / "agent"

Reply = Mapping[str, object] | str


@functools.cache
def definition() -> AgentDefinition:
    """The adversarial agent, loaded once per process."""
    return load_definition(AGENT)


def call(call_id: str, name: str, arguments: Mapping[str, object] | None = None) -> Reply:
    """A model reply holding one tool call."""
    return {"tool_calls": [{"id": call_id, "name": name, "arguments": dict(arguments or {})}]}


def activate(target: str, call_id: str = "setup_activate") -> Reply:
    """A model reply calling `activate`."""
    return call(call_id, "activate", {"target_id": target})


@dataclass(frozen=True, kw_only=True, slots=True)
class Attack:
    """What one hostile turn produced."""

    before: ConversationState
    after: ConversationState
    events: tuple[Event, ...]
    """The events of the hostile turn."""
    requests: tuple[ModelRequest, ...]
    """The model requests of the hostile turn: [0] got the hostile reply, then the follow-ups."""
    bot_texts: tuple[str, ...]

    def refusals(self, call_id: str) -> list[ToolCallRefused]:
        """`tool_call_refused` events for call `call_id`."""
        return [
            e for e in self.events if isinstance(e, ToolCallRefused) and e.tool_call_id == call_id
        ]

    def runs(self, tool_name: str) -> list[ToolExecuted]:
        """`tool_executed` events for `tool_name`."""
        return [e for e in self.events if isinstance(e, ToolExecuted) and e.tool_name == tool_name]

    def offered(self, index: int = 0) -> tuple[str, ...]:
        """Tool names offered on request `index` of the hostile turn."""
        return tuple(tool.name for tool in self.requests[index].tools)

    def tool_message(self, call_id: str) -> str:
        """What the model was told about call `call_id` on a later request of the turn."""
        assert len(self.requests) >= 2, "the model was not asked again after the hostile reply"
        for request in self.requests[1:]:
            for message in request.messages:
                if message["role"] == "tool" and message["tool_call_id"] == call_id:
                    return message["content"]
        raise AssertionError(f"the model was never told about {call_id}")


class Arena:
    """One conversation with the adversarial agent, driven by a scripted model."""

    def __init__(self) -> None:
        self.model = ScriptedModel()
        self.harness = ConversationHarness(definition(), self.model)

    async def turn(self, user: str, *replies: Reply) -> TurnResult:
        """A setup turn: queue `replies`, send `user`, expect every reply used."""
        self.model.extend(replies)
        result = await self.harness.send(user)
        self.model.assert_complete()
        assert result.stop_reason == "end_turn", result.stop_reason
        return result

    async def open_vault(self) -> None:
        """Activate the vault skill (the usual starting point of an attack)."""
        await self.turn("open the vault", activate("vault"), "The vault is open.")
        assert self.harness.state.active_skill_id == "vault"

    async def attack(self, reply: Reply, *, follow_up: Sequence[Reply] = ("ok",)) -> Attack:
        """Send one hostile reply (then `follow_up` replies) in a turn of its own."""
        before = self.harness.state
        asked = len(self.model.requests)
        self.model.add(reply)
        self.model.extend(follow_up)
        result = await self.harness.send("now misbehave")
        self.model.assert_complete()
        return Attack(
            before=before,
            after=result.state,
            events=result.events,
            requests=self.model.requests[asked:],
            bot_texts=tuple(m.text for m in result.bot_messages),
        )


def assert_refused(
    attack: Attack, *, call_id: str, codes: str | tuple[str, ...], visible: bool = True
) -> ToolCallRefused:
    """The call was refused with one of `codes`, in the log and (if `visible`) to the model."""
    expected = (codes,) if isinstance(codes, str) else codes
    refusals = attack.refusals(call_id)
    assert refusals, (
        f"no tool_call_refused for {call_id}; events: {[e.kind for e in attack.events]}"
    )
    assert all(r.code in expected for r in refusals), [r.code for r in refusals]
    if visible:
        told = attack.tool_message(call_id)
        for refusal in refusals:
            assert refusal.message in told, (refusal.message, told)
    return refusals[0]


def assert_nothing_happened(attack: Attack, *, tool: str | None) -> None:
    """No run of `tool`; memory, stack and status unchanged; no hangup, no activation."""
    if tool is not None:
        assert attack.runs(tool) == [], f"{tool} ran"
    assert dict(attack.after.memory) == dict(attack.before.memory)
    assert attack.after.stack == attack.before.stack
    assert attack.after.status == attack.before.status
    assert attack.after.status in ("idle", "paused")
    assert attack.after.pending_confirmation == attack.before.pending_confirmation
    assert not any(isinstance(e, SkillActivated) for e in attack.events)
    ended = [e for e in attack.events if isinstance(e, ConversationStateChanged)]
    assert all(e.state != "ended" for e in ended)
