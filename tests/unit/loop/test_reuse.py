"""What the previous model call built is reused only while its inputs are the same: the
system prompt (the clock to the minute), the offered tools and their schemas."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path
from types import MappingProxyType

from prompt_kit import NOW, PARCEL, inputs

from keel.events.base import StackFrame
from keel.events.fold import ConversationState
from keel.loop.model_request import offered_schemas
from keel.loop.offer import CallMode, offered_tools
from keel.loop.prompt import ActiveSkill, system_prompt
from keel.loop.reuse import same_memory
from keel.testing.harness import load_definition

AGENT = Path(__file__).parent / "hardening_agent"


def test_same_memory_wants_the_very_same_values() -> None:
    one = {"a.x": 1, "a.y": "y"}
    assert same_memory(one, MappingProxyType(dict(one)))
    assert one == {"a.x": True, "a.y": "y"}  # what == alone would take for the same
    assert not same_memory(one, {"a.x": True, "a.y": "y"})
    assert not same_memory(one, {"a.x": 1.0, "a.y": "y"})
    assert not same_memory(one, {"a.x": 1})


def test_the_prompt_is_built_again_when_an_input_changes() -> None:
    active = ActiveSkill(document=PARCEL)
    memory = {"redirect_parcel.parcel_id": "P-1"}
    first = system_prompt(inputs(active, memory=memory))
    # The same inputs in the same minute (new objects): the same prompt, not rebuilt.
    assert system_prompt(inputs(ActiveSkill(document=PARCEL), memory=dict(memory))) is first
    later = system_prompt(inputs(active, memory=memory, now=NOW + timedelta(seconds=20)))
    assert later is first
    next_minute = system_prompt(inputs(active, memory=memory, now=NOW + timedelta(minutes=1)))
    assert next_minute.text != first.text and "09:31" in next_minute.text
    other = system_prompt(inputs(active, memory={"redirect_parcel.parcel_id": "P-2"}))
    assert "P-2" in other.text and "P-1" not in other.text
    again = system_prompt(inputs(active, memory=memory))
    assert again.text == first.text
    # A later call of the turn differs only in the acknowledgement: off in text, the same.
    later_call = system_prompt(inputs(active, memory=memory, first_iteration=False))
    assert later_call is again
    voice = system_prompt(inputs(active, memory=memory, channel="voice"))
    voice_later = system_prompt(
        inputs(active, memory=memory, channel="voice", first_iteration=False)
    )
    assert voice_later is not voice and "## Acknowledgement" in voice.text
    assert "## Acknowledgement" not in voice_later.text


def test_the_offer_follows_the_state_and_the_mode() -> None:
    definition = load_definition(AGENT)
    plain = ConversationState()
    first = offered_tools(definition, plain, CallMode())
    assert offered_tools(definition, ConversationState(), CallMode()) is first
    assert offered_schemas(first) is offered_schemas(first)
    gold = ConversationState(memory=MappingProxyType({"project.plan": "gold"}))
    opened = offered_tools(definition, gold, CallMode())
    activate = next(o for o in opened if o.name == "activate")
    assert "lounge" in activate.description
    closed = offered_tools(definition, plain, CallMode())
    assert "lounge" not in next(o for o in closed if o.name == "activate").description
    in_counter = dataclasses.replace(
        plain, stack=(StackFrame(frame_id="f1", skill_id="counter", type="skill"),)
    )
    names = [o.name for o in offered_tools(definition, in_counter, CallMode())]
    assert "cancel_skill" in names
    searched = offered_tools(definition, in_counter, CallMode(searched=True))
    assert "cancel_skill" not in [o.name for o in searched]
    schemas = offered_schemas(searched)
    assert [t.name for t in schemas.tools] == [o.name for o in searched]
    assert schemas.names == frozenset(o.name for o in searched)
